"""Converting a tensor: `to()`, `cuda()`/`cpu()`, `float()`/`long()`/..., `type_as()`, `type()`.

    >>> x.to(minitorch.float64); x.to("cuda"); x.to(other)     # dtype, device, or both
    >>> x.long()                                               # x.to(minitorch.int64)
    >>> x.type()                                               # 'torch.FloatTensor'
    >>> x.type(minitorch.int32)                                # x.to(minitorch.int32)

Each conversion is the op `to_copy` (differentiable: the gradient goes back to the input's
dtype and device), or the tensor itself when nothing would change, as in PyTorch.

`type()` answers with PyTorch's legacy names ('torch.FloatTensor', 'torch.cuda.LongTensor'),
not minitorch's: scripts compare them as strings, written for torch.
"""

from __future__ import annotations

from minitorch import ops
from minitorch.device import device
from minitorch.dispatch import tensor_class
from minitorch.dtype import DType, bfloat16, bool_, float16, float32, float64, int32, int64
from minitorch.errors import DTypeError, at_user_line
from minitorch.ops.meta import check_dtype
from minitorch.overrides import overridable

# PyTorch's legacy tensor-type names, per dtype
_TYPE_NAMES = {
    float32: "FloatTensor",
    float64: "DoubleTensor",
    int32: "IntTensor",
    int64: "LongTensor",
    bool_: "BoolTensor",
    float16: "HalfTensor",
    bfloat16: "BFloat16Tensor",
}
_BY_TYPE_NAME = {name: dtype for dtype, name in _TYPE_NAMES.items()}


class ConversionMethods:
    """The conversions as Tensor methods (mixed into Tensor)."""

    @overridable  # a Proxy argument (`to(x.dtype)`) records: [Note: __torch_function__]
    def to(self, *args, **kwargs):
        """A copy with another dtype and/or device: `to(float64)`, `to("cuda")`, `to(other)`;
        `self` when nothing changes, as in PyTorch. Differentiable."""
        dtype, dev = to_arguments(args, kwargs)
        same_dtype = dtype is None or dtype is self.dtype
        same_device = dev is None or dev == self.device
        if same_dtype and same_device:
            return self
        return ops.to_copy(
            self, dtype=None if same_dtype else dtype, device=None if same_device else device(dev)
        )

    def cuda(self):
        return self.to("cuda")

    def cpu(self):
        return self.to("cpu")

    def long(self):
        return self.to(int64)

    def int(self):
        return self.to(int32)

    def bool(self):
        return self.to(bool_)

    def float(self):
        return self.to(float32)

    def double(self):
        return self.to(float64)

    def half(self):
        """`self.to(float16)`: numpy's IEEE half precision."""
        return self.to(float16)

    def bfloat16(self):
        """`self.to(bfloat16)`: rounded to bfloat16 ([Note: bfloat16] in minitorch/dtype.py)."""
        return self.to(bfloat16)

    def type_as(self, other):
        """`self.to(other.dtype)`: the dtype of `other` (its device stays self's)."""
        return self.to(other.dtype)

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def type(self, dtype: DType | str | None = None, non_blocking: bool = False):
        """With no argument, the type's name ('torch.FloatTensor', 'torch.cuda.LongTensor');
        with a dtype, such a name or a legacy type (minitorch.FloatTensor), the tensor
        converted to it."""
        from minitorch.tensor_types import LegacyTensorType

        if dtype is None:
            prefix = "torch.cuda." if self.is_cuda else "torch."
            return prefix + _TYPE_NAMES[self.dtype]
        if isinstance(dtype, str):
            return self.to(*_parse_type_name(dtype))
        if isinstance(dtype, LegacyTensorType):  # x.type(minitorch.FloatTensor): on the cpu
            return self.to(dtype.dtype, "cpu")
        return self.to(check_dtype("type()", dtype))


def _parse_type_name(name: str) -> tuple[DType, str]:
    """'torch.cuda.FloatTensor' -> (float32, "cuda"); 'minitorch.' works as 'torch.'."""
    *module, short = name.split(".")
    where = ".".join(module)
    if short not in _BY_TYPE_NAME or where not in (
        "torch",
        "torch.cuda",
        "minitorch",
        "minitorch.cuda",
    ):
        names = ", ".join(f"torch.{n}" for n in _BY_TYPE_NAME)
        raise DTypeError(
            at_user_line(
                f"type(): invalid type {name!r} (expected one of {names}, "
                "or the same under torch.cuda.)"
            )
        )
    return _BY_TYPE_NAME[short], "cuda" if where.endswith("cuda") else "cpu"


def to_arguments(args: tuple, kwargs: dict) -> tuple[DType | None, device | None]:
    """Sort `to()`'s arguments (Tensor.to and Module.to) into a dtype and a device:
    to(dtype), to(device), to(device, dtype), to(tensor), dtype=/device= keywords.
    `memory_format=` is checked, and the layout stays row-major (minitorch/memory_format.py)."""
    dtype, dev = kwargs.get("dtype"), kwargs.get("device")
    if dtype is not None:
        check_dtype("to()", dtype)
    if kwargs.get("memory_format") is not None:
        from minitorch.memory_format import check_memory_format

        check_memory_format("to()", kwargs["memory_format"])
    for a in args:
        if isinstance(a, DType):
            dtype = a
        elif isinstance(a, tensor_class()):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, device)):
            dev = a
        else:
            raise DTypeError(at_user_line(f"to(): cannot convert to {a!r}"))
    return dtype, None if dev is None else device(dev)
