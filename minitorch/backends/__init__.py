"""`minitorch.backends`: PyTorch's switches for the libraries it calls, answered honestly.

    minitorch.backends.cudnn.benchmark = True         # accepted; changes nothing here
    minitorch.backends.cuda.matmul.allow_tf32 = True  # accepted; changes nothing here
    minitorch.backends.mps.is_available()             # False

PyTorch hands convolutions to cuDNN, matrix products to cuBLAS (which may use TF32 on Ampere
GPUs) and Apple GPUs to MPS, and these flags steer those libraries. minitorch calls none of
them: its kernels are its own (numpy eagerly, LLVM or NVPTX compiled), always in the tensor's
own precision, and deterministic. So each flag is a plain attribute, settable, that starts at
PyTorch's default and that nothing reads: a script written for torch runs unchanged, and its
numbers are the exact float32 ones whatever it sets.

`set_float32_matmul_precision` belongs here for the same reason (it is `torch.`'s own
function, exported by minitorch/__init__.py): it records the choice and checks its spelling.
"""

from __future__ import annotations

from minitorch.backends import cpu, cuda, cudnn, mps
from minitorch.errors import InvalidArgumentError, at_user_line

__all__ = [
    "cpu",
    "cuda",
    "cudnn",
    "mps",
    "get_float32_matmul_precision",
    "set_float32_matmul_precision",
]

_MATMUL_PRECISIONS = ("highest", "high", "medium")
_matmul_precision = "highest"  # PyTorch's default


def set_float32_matmul_precision(precision: str) -> None:
    """Record PyTorch's float32 matmul precision ("highest", "high" or "medium").

    NOTE: minitorch always multiplies float32 in float32 ("highest"); "high" and "medium" let
    PyTorch use TF32 or bfloat16 inside matmuls, which no minitorch kernel does.
    """
    global _matmul_precision
    if precision not in _MATMUL_PRECISIONS:
        raise InvalidArgumentError(
            at_user_line(
                f"set_float32_matmul_precision(): invalid precision {precision!r} (expected one of "
                f"{', '.join(_MATMUL_PRECISIONS)})"
            )
        )
    _matmul_precision = precision


def get_float32_matmul_precision() -> str:
    """The precision last set (default "highest"); see `set_float32_matmul_precision`."""
    return _matmul_precision
