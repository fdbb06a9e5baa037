"""`Upsample` (and its older names `UpsamplingNearest2d`, `UpsamplingBilinear2d`),
`PixelShuffle` and `PixelUnshuffle`: resizing layers around F.interpolate and
F.pixel_shuffle."""

from __future__ import annotations

from minitorch.nn import functional as F
from minitorch.nn.module import Module
from minitorch.tensor import Tensor


class Upsample(Module):
    """F.interpolate with fixed arguments.

    >>> Upsample(scale_factor=2.0, mode='bilinear')
    Upsample(scale_factor=2.0, mode='bilinear')
    """

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.size = size
        self.scale_factor = (
            float(scale_factor) if isinstance(scale_factor, (int, float)) else scale_factor
        )
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    def extra_repr(self) -> str:
        what = (
            f"scale_factor={self.scale_factor!r}"
            if self.scale_factor is not None
            else f"size={self.size!r}"
        )
        return f"{what}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Upsample(mode='nearest') of a 4-d input (PyTorch's older name)."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample(mode='bilinear', align_corners=True) (PyTorch's older name; note the
    corners, unlike Upsample's default)."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


class PixelShuffle(Module):
    """(*, C * r * r, H, W) -> (*, C, H * r, W * r)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r * r, H, W)."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input: Tensor) -> Tensor:
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"
