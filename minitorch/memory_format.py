"""Memory formats: `minitorch.contiguous_format`, `channels_last`, `channels_last_3d`,
`preserve_format`, the values PyTorch's `memory_format=` arguments take.

    >>> y = x.to(memory_format=minitorch.channels_last)          # accepted: same values
    >>> y = minitorch.empty_like(x, memory_format=minitorch.preserve_format)

NOTE: minitorch lays every new tensor out row-major. A memory format is accepted wherever
PyTorch takes one (`Tensor.to`, `Tensor.contiguous`, `empty_like` and the other `*_like`
factories), and the values are always right, but the strides stay row-major: a program that
asks for channels_last gets a tensor whose `is_contiguous(memory_format=channels_last)` may be
False. Only performance, never a value, depends on the layout.
"""

from __future__ import annotations

from minitorch.errors import ArgumentTypeError, at_user_line


class memory_format:  # noqa: N801 - PyTorch's name, `torch.memory_format`
    """One memory format: compared by identity, printed as a dtype prints
    (`minitorch.channels_last`: the name it is reached by, so a graph's code can name it)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"minitorch.{self.name}"

    # one object per format, shared by copies (a module's deepcopy keeps the same one)
    def __copy__(self) -> memory_format:
        return self

    def __deepcopy__(self, memo: dict) -> memory_format:
        return self


contiguous_format = memory_format("contiguous_format")  # row-major
channels_last = memory_format("channels_last")  # NHWC order for a 4-d (N, C, H, W) tensor
channels_last_3d = memory_format("channels_last_3d")  # NDHWC for a 5-d tensor
preserve_format = memory_format("preserve_format")  # the input's layout (for *_like, to)

# The order of dims, outermost first, each format lays out; contiguous_format is row-major.
_DIM_ORDER = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}


def check_memory_format(op: str, fmt) -> memory_format:
    """A memory_format argument: one of the four, else an ArgumentTypeError naming the op."""
    if not isinstance(fmt, memory_format):
        raise ArgumentTypeError(
            at_user_line(
                f"{op}: memory_format must be a minitorch memory format (minitorch.channels_last, "
                f"contiguous_format, preserve_format), got {fmt!r}"
            )
        )
    return fmt


def check_optional_format(op: str, fmt) -> None:
    """A `memory_format=` that may be None (the *_like factories): checked if given."""
    if fmt is not None:
        check_memory_format(f"{op}()", fmt)


def is_contiguous_as(shape: tuple[int, ...], strides: tuple[int, ...], fmt) -> bool:
    """Are elements with these strides dense in `fmt`'s order of dims (size-1 dims ignored)?

    contiguous_format is row-major order; channels_last is (N, H, W, C) order for a 4-d tensor,
    and a tensor of another rank is never channels_last, as in PyTorch.
    """
    fmt = check_memory_format("is_contiguous()", fmt)
    if fmt is preserve_format:
        raise ArgumentTypeError(
            at_user_line("is_contiguous(): preserve_format is not a layout a tensor can have")
        )
    if 0 in shape:
        return True  # no elements: dense in every order
    order = tuple(range(len(shape)))
    if fmt in _DIM_ORDER:
        rank, order = _DIM_ORDER[fmt]
        if len(shape) != rank:
            return False
    expected = 1
    for d in reversed(order):
        if shape[d] != 1 and strides[d] != expected:
            return False
        expected *= shape[d]
    return True
