"""In-place ops: `x.add_(y)`, `x += y`, `x[1:] = 0`, `x.copy_(y)`, ... (mixed into Tensor).

[Note: in-place ops]
An in-place op is its out-of-place op followed by a write:

    x.mul_(y)    ==    result = mul(x, y);  x's memory <- result;  x takes result's history

1. Checks, before anything changes: a leaf that requires grad (or a view of one) cannot be
   written while grad mode is on; neither can an expanded tensor, whose elements share memory.
   Then `result` is computed; its shape must be x's shape (broadcasting may not grow x) and its
   dtype must convert to x's without changing category (no float into an int tensor). A
   failed in-place op leaves x exactly as it was.
2. The write, into x's memory, so that x's views and base see it (minitorch/tensor.py,
   [Note: views]); then x's version counter is bumped.
3. History (minitorch/autograd/graph.py, `rebase_history`): x's `grad_fn` becomes result's;
   for a view, the base gets a `CopySlices` node. [Note: in-place ops and the backward graph]
   there explains how nodes made before the write keep computing the right gradients.

Writes (`x[key] = v`, `fill_`, `zero_`, `copy_`) use the op `index_scatter` (base with a region
replaced) as their out-of-place op. mul_, div_, clamp_, pow_, sqrt_, abs_, ... compute `result`
from a copy of x's old values when autograd records them, because their derivatives read the
values that the write replaces. Each in-place op's values and derivative are its out-of-place
twin's, even where a derivative is a convention (relu'(0) = 0, clamp' = 1 at a bound):
tests/minitorch/test_inplace_boundaries.py holds every method to it, eager and compiled.

    >>> x = minitorch.zeros(2, 3)
    >>> x[0] = 1; x += 1; x
    tensor([[2., 2., 2.],
            [1., 1., 1.]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from minitorch import functional as F
from minitorch import ops
from minitorch.autograd.grad_mode import is_grad_enabled
from minitorch.dispatch import python_scalar
from minitorch.errors import (
    AutogradError,
    CompileError,
    DTypeError,
    MinitorchError,
    ShapeError,
    at_user_line,
)
from minitorch.functional.indexing import is_advanced, setitem
from minitorch.ops.views_meta import check_value_fits, normalize_index

if TYPE_CHECKING:
    from minitorch.tensor import Tensor


class InPlaceMethods:
    """The in-place ops as Tensor methods and operators."""

    def add_(self, other, *, alpha=1) -> Tensor:
        """self += alpha * other"""
        return self._in_place("add_", lambda t: F.add(t, other, alpha=alpha))

    def sub_(self, other, *, alpha=1) -> Tensor:
        """self -= alpha * other"""
        return self._in_place("sub_", lambda t: F.sub(t, other, alpha=alpha))

    def mul_(self, other) -> Tensor:
        return self._in_place("mul_", lambda t: F.mul(t, other), _recording(self, other))

    def div_(self, other) -> Tensor:
        return self._in_place("div_", lambda t: F.div(t, other), _recording(self, other))

    def clamp_(self, min=None, max=None) -> Tensor:
        return self._in_place("clamp_", lambda t: F.clamp(t, min, max), _recording(self, min, max))

    def relu_(self) -> Tensor:
        """max(self, 0) in place; relu'(0) = 0, as the out-of-place relu's (clamp_(min=0)'s
        derivative at 0 is 1: not the same op)."""
        return self._in_place("relu_", F.relu, _recording(self))

    def pow_(self, exponent) -> Tensor:
        return self._in_place("pow_", lambda t: F.pow(t, exponent), _recording(self, exponent))

    def exp_(self) -> Tensor:
        return self._in_place("exp_", F.exp, _recording(self))

    def sqrt_(self) -> Tensor:
        return self._in_place("sqrt_", F.sqrt, _recording(self))

    def sigmoid_(self) -> Tensor:
        return self._in_place("sigmoid_", F.sigmoid, _recording(self))

    def tanh_(self) -> Tensor:
        return self._in_place("tanh_", F.tanh, _recording(self))

    def neg_(self) -> Tensor:
        return self._in_place("neg_", F.neg)

    def abs_(self) -> Tensor:
        return self._in_place("abs_", F.abs, _recording(self))

    def masked_fill_(self, mask, value) -> Tensor:
        """self[mask] = value, where mask broadcasts to self's shape."""
        return self._in_place("masked_fill_", lambda t: F.masked_fill(t, mask, value))

    def zero_(self) -> Tensor:
        return self._write("zero_", (), 0)

    def fill_(self, value) -> Tensor:
        """Every element set to `value`, a Python number or a 0-d tensor."""
        if _is_tensor(value) and value.ndim != 0:
            raise ShapeError(
                at_user_line(
                    f"fill_ only supports a 0-d value tensor, got one of shape {tuple(value.shape)}"
                )
            )
        return self._write("fill_", (), value)

    def copy_(self, src) -> Tensor:
        """Copy `src` in here: broadcast to this shape, converted to this dtype and device."""
        return self._write("copy_", (), src)

    def __setitem__(self, key, value) -> None:
        """x[key] = value: a write into the region x[key]; value broadcasts to it. An advanced
        key (tensors, lists, masks) writes through index_put: minitorch/functional/indexing.py."""
        if not is_advanced(key):
            self._write("__setitem__", normalize_index(tuple(self.shape), key), value)
            return
        if _is_tensor(value) and value.device != self.device:
            value = value.to(self.device)
        self._in_place("__setitem__", lambda t: setitem(t, key, value))

    def index_put_(self, indices, values, accumulate: bool = False) -> Tensor:
        """self[indices] = values, or += with accumulate=True (positions named twice get both
        values added)."""
        return self._in_place("index_put_", lambda t: F.index_put(t, indices, values, accumulate))

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    # ---- the mechanics ---------------------------------------------------------------------

    def _write(self, op: str, key: tuple, value) -> Tensor:
        """self[key] = value, for a canonical key (() is everything)."""
        value = python_scalar(value)  # np.float32(2) is the number 2.0
        if _is_tensor(value) and value.device != self.device:
            value = value.to(self.device)
        check_value_fits(op, self, value, key)
        return self._in_place(op, lambda t: ops.index_scatter(t, value, key))

    def _in_place(
        self, op: str, compute: Callable[[Tensor], Tensor], keep_old_values: bool = False
    ) -> Tensor:
        """self <- compute(self), written into self's memory; see [Note: in-place ops]."""
        from minitorch.autograd.graph import rebase_history
        from minitorch.fake import is_fake

        if is_fake(self):
            raise CompileError(at_user_line(f"{op}: in-place ops cannot be traced yet"))
        recording = is_grad_enabled()
        if recording:
            self._check_writable_by_autograd(op)
        if self.numel() and any(s == 0 and n > 1 for n, s in zip(self.shape, self.stride())):
            raise MinitorchError(
                at_user_line(
                    f"{op}: unsupported operation: more than one element of the written-to tensor "
                    "refers to a single memory location (an expanded tensor); clone() it first"
                )
            )
        target = self._data if _writeable(self._data) else _writeable_alias(self._data)
        if target is None:
            raise MinitorchError(
                at_user_line(
                    f"{op}: the written-to tensor's memory is read-only (it was made from a "
                    "read-only numpy array); clone() it first"
                )
            )
        result = compute(self._with_copied_values() if keep_old_values else self)
        if recording and result.requires_grad:  # a value that requires grad, into a no_grad view
            self._check_writable_by_autograd(op, result_requires_grad=True)
        if tuple(result.shape) != tuple(self.shape):
            raise ShapeError(
                at_user_line(
                    f"{op}: output with shape {tuple(self.shape)} doesn't match the broadcast "
                    f"shape {tuple(result.shape)}"
                )
            )
        if result.dtype.category > self.dtype.category:
            raise DTypeError(
                at_user_line(
                    f"{op}: result type {result.dtype.name} can't be cast to the desired output "
                    f"type {self.dtype.name}"
                )
            )
        if result.dtype is not self.dtype:
            result = result.to(self.dtype)  # float64 into float32: differentiable
        target[...] = result._data
        self._shared_version_counter().value += 1
        if recording:
            rebase_history(self, result)
        return self

    def _check_writable_by_autograd(self, op: str, result_requires_grad: bool = False) -> None:
        """PyTorch's rules for writing a tensor that autograd may need (grad mode on), in
        PyTorch's order (check_inplace). `result_requires_grad`: will the written values?"""
        base = self._base
        if (
            base is not None
            and not self._view_differentiable
            and (self.requires_grad or base.requires_grad or result_requires_grad)
        ):
            raise AutogradError(
                at_user_line(
                    f"{op}: a view was created in no_grad mode and is being modified in place "
                    "with grad mode enabled; move both the view and the in-place op inside the "
                    "no_grad block, or both outside, or clone() the view first"
                )
            )
        if self.requires_grad and self.is_leaf:
            raise AutogradError(
                at_user_line(
                    f"{op}: a leaf Variable that requires grad is being used in an in-place "
                    "operation."
                )
            )
        if base is not None and base.requires_grad and base.is_leaf:
            raise AutogradError(
                at_user_line(
                    f"{op}: a view of a leaf Variable that requires grad is being used in an "
                    "in-place operation."
                )
            )

    def _with_copied_values(self) -> Tensor:
        """A tensor with a copy of this one's values, and this one's history."""
        from minitorch.tensor import Tensor

        old = Tensor._from_array(self._data.copy())
        old._grad_fn, old._output_nr, old.requires_grad = (
            self.grad_fn,
            self._output_nr,
            self.requires_grad,
        )
        return old


def _is_tensor(x) -> bool:
    return getattr(x, "_data", None) is not None


def _writeable(array) -> bool:
    """May this array's memory be written? (numpy's views of a broadcast may not; cupy's flags
    do not say, and every cupy array may.)"""
    flags = getattr(array, "flags", None)
    return getattr(flags, "writeable", True)


def _writeable_alias(array):
    """A writeable numpy array over `array`'s memory, or None if that memory is read-only.

    numpy makes every view of a broadcast read-only, even one whose own elements do not
    overlap (`x.expand(3)[0]`, `x.expand(3, 2)[1]`), which PyTorch writes into x's memory: so
    do we, through an array made over the memory's owner at the view's offset and strides.
    """
    root = array
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.writeable:
        return None
    offset = array.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    try:
        return np.ndarray(
            array.shape, array.dtype, buffer=root, offset=offset, strides=array.strides
        )
    except (TypeError, ValueError):  # an owner numpy cannot take as a buffer
        return None


def _recording(*args) -> bool:
    """Will autograd record an op on `args`? (grad mode on, and one of them requires grad)"""
    return is_grad_enabled() and any(getattr(a, "requires_grad", False) for a in args)
