"""`minitorch.backends.cuda`: cuBLAS's precision flags, at PyTorch's defaults, read by nothing.

    minitorch.backends.cuda.matmul.allow_tf32 = True   # accepted; minitorch keeps float32

PyTorch lets cuBLAS multiply float32 matrices in TF32 (10 bits of mantissa) when
`matmul.allow_tf32` is set, and reduce float16/bfloat16 products in reduced precision. NOTE:
minitorch's matmul kernels are its own and always compute in the tensor's precision, so the
flags change nothing (see minitorch/backends/).
"""

from __future__ import annotations

from minitorch.device import cuda_is_available


class _MatmulFlags:
    """`backends.cuda.matmul`: settable attributes with PyTorch's defaults."""

    allow_tf32: bool = False  # PyTorch's default since 1.12
    allow_fp16_reduced_precision_reduction: bool = True
    allow_bf16_reduced_precision_reduction: bool = True

    def __repr__(self) -> str:
        return (
            f"<backends.cuda.matmul allow_tf32={self.allow_tf32} "
            f"allow_fp16_reduced_precision_reduction="
            f"{self.allow_fp16_reduced_precision_reduction} "
            f"allow_bf16_reduced_precision_reduction="
            f"{self.allow_bf16_reduced_precision_reduction}>"
        )


matmul = _MatmulFlags()


def is_built() -> bool:
    """True when minitorch can use CUDA at all: cupy is installed and sees a GPU."""
    return cuda_is_available()
