"""`Tensor`: an n-dimensional array with autograd, over a numpy array.

A tensor owns an array (`_data`), and, when it takes part in autograd, `requires_grad`,
`grad` and `grad_fn` (the backward node that made it). Every op, operator and method goes
through `minitorch.functional` and from there through the dispatcher (minitorch/dispatch.py),
so eager execution, fake tensors and graph tracing all see the same calls.

    >>> x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward(); x.grad
    tensor([2., 4.])

[Note: views]
A view (`x.view`, `x.T`, `x[1:]`, ... see minitorch/functional/views.py) is a tensor whose
array is a numpy view of its base's array: no data is copied, and a write through either is
seen by the other. A view remembers its base (`_base`, always the root: a view of a view has
the same base) and how to remake itself from it (`_view_fn`), and shares the base's version
counter (`_version`): a write anywhere in the memory bumps the count for all of them.

Autograd follows PyTorch. A view's history is "this view of the base's history", so when an
in-place op changes the base's history (a write through the base, or through any of its
views), a view's `grad_fn` is redone, lazily, from the base the next time it is read (the
version counter says when). A base that did not require grad keeps weak references to its
views, so that when a write gives it a history, its views start requiring grad too:

    buf = minitorch.zeros(3);  head = buf[:2]
    buf[1:] = w                 # w requires grad: buf gets a history, and so does head
    head.grad_fn                # <IndexBackward0>, of buf's new history

[Note: views made under no_grad]
PyTorch's rule (DifferentiableViewMeta): a view requires grad when its base does, even when it
was made in no_grad mode, but such a view gets no history: it has no grad_fn, and no gradient
edge either (its own requires_grad flag, the one a leaf's AccumulateGrad needs, is off):

    with minitorch.no_grad():
        v = x[0]              # x requires grad: v.requires_grad is True, v.grad_fn is None
    y = v * 2                 # recorded (v requires grad): y.grad_fn is MulBackward0 ...
    y.backward()              # ... but the gradient stops at v: neither v.grad nor x.grad
    v.mul_(2)                 # AutogradError: a view made in no_grad mode, written in place
                              # with grad mode on (its history would be ambiguous)

So a gradient can never leak into x through v: the engine delivers nothing to a view made
under no_grad (minitorch/autograd/engine.py), and `next_functions` shows no AccumulateGrad for
it. Written under no_grad, v is an ordinary write into x's memory (no history to rebase).
NOTE: PyTorch remakes such a view's grad_fn from its base after a write into the base; here it
stays None (nothing is recorded through it either way).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

from minitorch import functional as F
from minitorch.autograd.grad_mode import enable_grad, is_grad_enabled
from minitorch.conversions import ConversionMethods
from minitorch.device import copy_in_order, device, device_of, module_of
from minitorch.dtype import DType, from_numpy_dtype
from minitorch.errors import (
    ArgumentTypeError,
    AutogradError,
    DeviceError,
    DTypeError,
    ShapeError,
    at_user_line,
)
from minitorch.inplace import InPlaceMethods
from minitorch.ops.views_meta import contiguous_strides, is_row_major
from minitorch.python_values import PythonValueMethods


class Size(tuple):
    """A tensor's shape: a tuple that prints like PyTorch's."""

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

    def __repr__(self) -> str:
        return f"minitorch.Size({list(self)})"


class _VersionCounter:
    """How many in-place writes a tensor's memory has had; shared by a base and its views."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


class Tensor(*F.METHOD_MIXINS, InPlaceMethods, ConversionMethods, PythonValueMethods):
    """An n-dimensional array that can record the ops that made it.

    The ops' methods and Python operators come from the mixins in minitorch/functional/,
    one per family of ops, the in-place ops from minitorch/inplace.py, `to()`, `float()`,
    `type()`, ... from minitorch/conversions.py, and `numpy()`, `item()`, `len(t)`, `repr(t)`,
    ... from minitorch/python_values.py; this class holds what every tensor has: data,
    metadata, autograd state, and what makes views share memory.
    """

    # NOTE: numpy's operators would treat a tensor (which has __len__ and __getitem__) as a
    # sequence of 0-d tensors: `np.float32(2) * x` would give an object array. This makes them
    # return NotImplemented instead, so Python calls Tensor.__rmul__, as with PyTorch.
    __array_ufunc__ = None

    # NOTE: class-level defaults. Every op makes a tensor, and most tensors never change these,
    # so making one sets only `_data` (a tensor's own value shadows the default once set).
    _grad: Tensor | None = None  # behind the `grad` property, which checks what is assigned
    requires_grad = False
    _grad_fn = None  # the backward Node that produced this tensor; None for leaves
    _output_nr = 0  # which output of grad_fn this tensor is
    _retains_grad = False
    _base: Tensor | None = None  # the tensor whose memory this view reads ([Note: views])
    _version_counter: _VersionCounter | None = None  # made on first need

    def __init__(self, data=()) -> None:
        """`minitorch.Tensor([1, 2])` is a float32 tensor, as in PyTorch; prefer `tensor()`."""
        self._data = np.array(data, dtype=np.float32)

    @classmethod
    def _from_array(cls, array, requires_grad: bool = False) -> Tensor:
        t = cls.__new__(cls)
        t._data = array
        if requires_grad:
            t.requires_grad = True
        return t

    # ---- metadata -------------------------------------------------------------------------

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self._data.shape[dim]

    @property
    def dtype(self) -> DType:
        return from_numpy_dtype(self._data.dtype)

    @property
    def device(self) -> device:
        return device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def stride(self, dim: int | None = None):
        strides = tuple(s // self._data.itemsize for s in self._data.strides)
        return strides if dim is None else strides[dim]

    def is_contiguous(self, memory_format=None) -> bool:
        """Are the elements laid out row-major, with no gaps (dims of size 1 ignored)? With
        `memory_format=`, in that format's order (minitorch/memory_format.py)."""
        if memory_format is None:
            return self._data.flags.c_contiguous
        from minitorch.memory_format import is_contiguous_as

        return is_contiguous_as(tuple(self.shape), self.stride(), memory_format)

    def data_ptr(self) -> int:
        """The address of the first element: views of one base point inside the same memory."""
        if self.is_cuda:
            return self._data.data.ptr
        return self._data.__array_interface__["data"][0]

    # ---- autograd state (a view's is redone from its base when stale: [Note: views]) --------

    @property
    def grad_fn(self):
        """The backward Node that produced this tensor; None for leaves."""
        if self._base is not None and self._view_version != self._version_counter.value:
            self._refresh_view_history()
        return self._grad_fn

    @grad_fn.setter
    def grad_fn(self, node) -> None:
        self._grad_fn = node

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad(self) -> Tensor | None:
        """The gradient `backward()` accumulated into this tensor, or None."""
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        """`t.grad = g`: g must look like t (shape, dtype, device), as PyTorch requires, so an
        optimizer step never broadcasts a wrong-shaped gradient into the parameter."""
        if value is not None:
            _check_assigned_grad(self, value)
        self._grad = value

    @property
    def data(self) -> Tensor:
        """The same memory as a new tensor outside autograd: what is written through it is
        neither recorded nor counted by the version counter (prefer `detach()`, which is)."""
        return Tensor._from_array(self._data)

    @data.setter
    def data(self, value: Tensor) -> None:
        """`p.data = t`: p now holds t's memory (its shape and dtype too), its autograd
        state unchanged, as in PyTorch."""
        if not isinstance(value, Tensor):
            raise ArgumentTypeError(
                at_user_line(f"Variable data has to be a tensor, but got {type(value).__name__}")
            )
        self._data = value._data

    # ---- views and versions --------------------------------------------------------------------

    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's memory (shared with its views) has had."""
        return 0 if self._version_counter is None else self._version_counter.value

    def _shared_version_counter(self) -> _VersionCounter:
        if self._version_counter is None:
            self._version_counter = _VersionCounter()
        return self._version_counter

    def _make_view_of(self, source: Tensor, view_fn: Callable[[Tensor], Tensor]) -> None:
        """Record that this tensor is `view_fn(source)` and shares source's memory."""
        base = source._base
        if base is None:
            self._base, self._view_fn = source, view_fn
        else:  # a view of a view: remember the whole way from the root
            outer = source._view_fn
            self._base, self._view_fn = base, lambda t: view_fn(outer(t))
        self._version_counter = source._shared_version_counter()
        self._view_version = self._version_counter.value
        self._view_differentiable = is_grad_enabled()  # no_grad views never get a history
        if not self._view_differentiable:  # [Note: views made under no_grad]
            self.requires_grad = self._base.requires_grad
        if not self._base.requires_grad:
            self._base._remember_view(self)  # to be told if the base gains a history
        node = self._grad_fn
        if node is not None and hasattr(node, "output_versions"):
            # The op recorded this output's version before it became a view (with the base's
            # counter): record it again.
            node.output_versions[self._output_nr] = self._version

    def _remember_view(self, view: Tensor) -> None:
        """Keep a weak reference to `view`, to tell it if this base gains a history."""
        views = self.__dict__.get("_weak_views")
        if views is None:
            views = self._weak_views = []
        elif len(views) >= 64 and (len(views) & (len(views) - 1)) == 0:
            # NOTE: a reference without a callback is cheap to make but stays after its view
            # dies; drop the dead ones whenever the list doubles, so it stays ~live-sized.
            views[:] = [ref for ref in views if ref() is not None]
        views.append(weakref.ref(view))

    def _base_gained_history(self) -> None:
        """This base now requires grad (an in-place write gave it a history): so do its views."""
        for ref in self.__dict__.pop("_weak_views", ()):
            view = ref()
            if view is not None:
                view.requires_grad = True
                view._view_version = -1  # stale: its grad_fn is redone from the base when read

    def _refresh_view_history(self) -> None:
        """Make this view's history `view_fn(base)` again, after writes changed the base's."""
        self._view_version = self._version_counter.value
        if not (self._view_differentiable and self._base.requires_grad):
            return
        with enable_grad():
            fresh = self._view_fn(self._base)
        self._grad_fn, self._output_nr, self.requires_grad = fresh._grad_fn, fresh._output_nr, True

    # ---- autograd ----------------------------------------------------------------------------

    def backward(self, gradient: Tensor | None = None, retain_graph: bool = False) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's `.grad`."""
        from minitorch.autograd.engine import run_backward
        from minitorch.factories_like import ones_like

        if gradient is None:
            if self.numel() != 1:
                raise AutogradError(
                    at_user_line(
                        f"grad can be implicitly created only for scalar outputs, got {self.shape}"
                    )
                )
            # d(self)/d(self) = 1, made directly: ones_like's argument checks cost ~40 us of a
            # training step (its code is cold after the forward's matmuls)
            gradient = (
                Tensor._from_array(np.ones_like(self._data))
                if type(self._data) is np.ndarray
                else ones_like(self)
            )
        elif not isinstance(gradient, Tensor):
            raise ArgumentTypeError(
                at_user_line(
                    f"backward(): gradient must be a Tensor or None, got {type(gradient).__name__}"
                )
            )
        run_backward([self], [gradient], retain_graph=retain_graph)

    def _accumulate_grad(self, grad: Tensor, shared: bool = False) -> None:
        """Add `grad` to `.grad`; `shared`: something else holds its memory ([Note: a leaf's
        .grad])."""
        if self.grad is None:
            self.grad = _owned_grad(self, grad.detach(), shared)
        else:
            self.grad = _owned_grad(self, F.add(self.grad, grad).detach(), False)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if not isinstance(requires_grad, bool):
            raise ArgumentTypeError(
                at_user_line(
                    f"requires_grad_(): argument 'requires_grad' must be bool, not "
                    f"{type(requires_grad).__name__}"
                )
            )
        if not self.is_leaf and not requires_grad:
            raise AutogradError(
                at_user_line(
                    "you can only change requires_grad flags of leaf variables; use detach()"
                )
            )
        if requires_grad and not self.dtype.is_floating_point:
            raise DTypeError(
                at_user_line(
                    f"only floating point tensors can require gradients, not {self.dtype.name}"
                )
            )
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in `.grad` after backward (leaves always keep it)."""
        if not self.requires_grad:
            raise AutogradError(
                at_user_line("can't retain_grad on a tensor that has requires_grad=False")
            )
        if self.is_leaf or self._retains_grad:
            return
        self.grad_fn.retain_grad(self)
        self._retains_grad = True

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def detach(self) -> Tensor:
        """The same memory (and version counter), cut from the autograd graph."""
        out = Tensor._from_array(self._data)
        out._version_counter = self._shared_version_counter()
        return out

    def detach_(self) -> Tensor:
        """Cut this tensor from the autograd graph, in place: it becomes a leaf."""
        if self._base is not None and self._view_differentiable and self._base.requires_grad:
            raise AutogradError(at_user_line("can't detach views in-place; use detach() instead"))
        self.grad_fn = None
        self.requires_grad = False
        return self


def _check_assigned_grad(t: Tensor, grad) -> None:
    if not isinstance(grad, Tensor):
        raise ArgumentTypeError(
            at_user_line(
                f"assigned grad expected to be a Tensor or None but got grad of type "
                f"{type(grad).__name__}"
            )
        )
    if grad.dtype is not t.dtype:
        raise DTypeError(
            at_user_line(
                f"assigned grad has data of a different type: {grad.dtype.name} for a tensor of "
                f"{t.dtype.name}"
            )
        )
    if grad.device != t.device:
        raise DeviceError(
            at_user_line(
                f"assigned grad has data located on a different device: {grad.device} for a "
                f"tensor on {t.device}"
            )
        )
    if tuple(grad.shape) != tuple(t.shape):
        raise ShapeError(
            at_user_line(
                f"assigned grad has data of a different size: {tuple(grad.shape)} for a tensor of "
                f"shape {tuple(t.shape)}"
            )
        )


# [Note: a leaf's .grad]
# A leaf's .grad is its own memory, laid out as the leaf is: PyTorch's gradient layout
# contract, which AccumulateGrad keeps.
# - Layout: a backward makes a gradient in whatever layout its formula gives (`x @ w.t()`
#   gives w's transposed), and a compiled backward in another; the contract makes .grad the
#   same either way, and an optimizer's `p -= lr * p.grad` walks both in one order. A dense
#   leaf (no gaps, no overlaps) gets its own strides; any other (a slice with gaps, an
#   expanded one) gets row-major ones.
# - Ownership: the gradient a backward delivers may be memory someone else holds: the user's
#   `y.backward(g)` passed through an add, or one array delivered to both leaves of `a + b`
#   (the engine says so: `shared`); or a read-only broadcast view (sum's backward of a 0-d
#   leaf). Kept as it is, `a.grad.mul_(2)` would change b.grad or g, or raise. So such a
#   gradient is copied, as PyTorch copies one whose memory is used elsewhere.
def _owned_grad(leaf: Tensor, grad: Tensor, shared: bool) -> Tensor:
    """`grad` as `leaf`'s .grad ([Note: a leaf's .grad]): as it is when it has the layout and
    no one else holds it; else a copy."""
    data = grad._data
    if type(data) is not np.ndarray and module_of(data) is np:  # a fake's, while tracing
        return grad
    shape, want, have = leaf.shape, leaf.stride(), grad.stride()
    order = sorted(range(len(shape)), key=lambda d: -want[d])  # outermost dim first
    dense = contiguous_strides(tuple(shape[d] for d in order))
    if all(want[d] == stride for d, stride in zip(order, dense) if shape[d] > 1):
        fits = all(w == h for w, h, n in zip(want, have, shape) if n > 1)
    else:  # a leaf with gaps, or expanded: no layout of its own to copy into
        order = list(range(len(shape)))
        fits = is_row_major(tuple(shape), tuple(have))
    if fits and not shared and getattr(data.flags, "writeable", True):
        return grad
    return Tensor._from_array(copy_in_order(data, order))
