"""What minitorch does not have, named so that using it fails clearly: complex tensors and
sparse tensors.

PyTorch programs reach for `torch.complex64`, `torch.polar` or `x.to_sparse()`; here each of
these exists and raises a minitorch error that names the op and says what is missing, rather
than an AttributeError that would read like a typo:

    >>> minitorch.zeros(3, dtype=minitorch.complex64)
    DTypeError: zeros(): complex tensors are not supported by minitorch (dtype complex64)
    >>> x.to_sparse()
    InvalidArgumentError: to_sparse(): sparse tensors are not supported by minitorch

What does exist answers as a dense, real, cpu-or-cuda tensor would: `x.is_complex()` and
`x.is_sparse` are False, and so is `x.is_xpu` (there is no XPU device).
"""

from __future__ import annotations

from minitorch.errors import DTypeError, InvalidArgumentError, at_user_line
from minitorch.overrides import make_overridable

__all__ = [
    "cdouble",
    "cfloat",
    "chalf",
    "complex",
    "complex32",
    "complex64",
    "complex128",
    "is_complex",
    "polar",
    "sparse_coo_tensor",
    "view_as_complex",
    "view_as_real",
]

_NO_COMPLEX = "complex tensors are not supported by minitorch"
_NO_SPARSE = "sparse tensors are not supported by minitorch; use a dense tensor"


class UnsupportedDType:
    """A dtype PyTorch has and minitorch does not: any op given it raises a DTypeError."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"minitorch.{self.name} ({_NO_COMPLEX})"

    def refuse(self, op: str) -> DTypeError:
        """The error for `op` called with this dtype (check_dtype raises it)."""
        return DTypeError(at_user_line(f"{op}: {_NO_COMPLEX} (dtype {self.name})"))


complex32 = UnsupportedDType("complex32")
complex64 = UnsupportedDType("complex64")
complex128 = UnsupportedDType("complex128")
chalf, cfloat, cdouble = complex32, complex64, complex128  # PyTorch's other names


def _no_complex(op: str) -> DTypeError:
    return DTypeError(at_user_line(f"{op}: {_NO_COMPLEX}"))


def polar(abs, angle):  # noqa: A002 - PyTorch's argument name
    """abs * (cos(angle) + i sin(angle)) in PyTorch: a complex tensor, which minitorch lacks."""
    raise _no_complex("polar()")


def complex(real, imag):  # noqa: A001 - PyTorch's name
    """real + i imag in PyTorch: a complex tensor, which minitorch lacks."""
    raise _no_complex("complex()")


def view_as_complex(input):
    raise _no_complex("view_as_complex()")


def view_as_real(input):
    raise _no_complex("view_as_real()")


def is_complex(input) -> bool:
    """False: no minitorch tensor is complex."""
    return False


def sparse_coo_tensor(
    indices,
    values,
    size=None,
    *,
    dtype=None,
    device=None,
    requires_grad: bool = False,
    check_invariants=None,
    is_coalesced=None,
):
    raise InvalidArgumentError(at_user_line(f"sparse_coo_tensor(): {_NO_SPARSE}"))


class UnsupportedMethods:
    """The Tensor methods and properties of what minitorch lacks (mixed into Tensor)."""

    def to_sparse(self, *args, **kwargs):
        raise InvalidArgumentError(at_user_line(f"to_sparse(): {_NO_SPARSE}"))

    def is_complex(self) -> bool:
        return False

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_xpu(self) -> bool:
        """False: minitorch has no Intel XPU device (only cpu and cuda)."""
        return False


# Every public function hands a Proxy (any __torch_function__ type) to it: see
# [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(
    globals(),
    ["complex", "is_complex", "polar", "sparse_coo_tensor", "view_as_complex", "view_as_real"],
)
