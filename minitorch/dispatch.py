"""The dispatcher: the one road every op call travels.

    minitorch.sin(x) -> ops.sin(x), which is dispatch(ops.sin, x)
        1. composite?  run its decomposition (so later stages see primitives only)
        2. meta        the shape/dtype rule validates the call and names bad input
        3. compute     the innermost active DispatchMode, or the eager kernel on arrays
        4. autograd    if grad mode is on and an input requires grad, record a backward node

An op with several outputs (`max` over a dim gives values and indices) has a meta rule that
returns a tuple of TensorMetas and a kernel that returns a tuple of arrays; dispatch returns a
tuple of tensors, and only the floating-point ones take part in autograd.

[Note: dispatch modes]
A `DispatchMode` (PyTorch's TorchDispatchMode) intercepts step 3. Fake tensors
(minitorch/fake.py) use one to compute shapes without data; AOT autograd uses one to record
every op into a graph. Because autograd (step 4) sits *above* the mode, the derivative formulas
that the engine runs during `backward()` pass through the same mode, which is how AOT autograd
captures the backward pass without a separate symbolic differentiator. While a mode runs, it is
popped from the stack, so the ops it calls itself go to the next mode down (or to eager).

Each thread has its own stack, as PyTorch's modes are thread-local: fake tensors or an AOT
trace in one thread must not capture, or be pushed off by, the eager ops of another. The stack
is a tuple in a context variable, like grad mode ([Note: grad mode is per thread]); a tuple,
never a list changed in place, because asyncio tasks start from a copy of the context, and a
copy of a list would be the same list.
"""

from __future__ import annotations

import contextvars
from typing import TYPE_CHECKING, Any

import numpy as np

from minitorch.autograd.grad_mode import is_grad_enabled
from minitorch.autograd.graph import OpBackward, keep_output
from minitorch.device import device, module_of
from minitorch.dtype import HALF_STORAGE, DType, float16

if TYPE_CHECKING:
    from minitorch.ops.registry import OpDef, TensorMeta

# this thread's active modes, innermost last
_modes: contextvars.ContextVar[tuple[DispatchMode, ...]] = contextvars.ContextVar(
    "dispatch_modes", default=()
)


class DispatchMode:
    """Intercepts every primitive op call while active (`with mode:`)."""

    def run(self, op: OpDef, args: tuple, kwargs: dict, meta: TensorMeta) -> Any:
        raise NotImplementedError

    def __enter__(self):
        _modes.set((*_modes.get(), self))
        return self

    def __exit__(self, *exc) -> None:
        modes = _modes.get()
        assert modes and modes[-1] is self, (
            "dispatch modes must exit in the reverse order of entering"
        )
        _modes.set(modes[:-1])


def current_mode() -> DispatchMode | None:
    modes = _modes.get()
    return modes[-1] if modes else None


def current_modes() -> tuple[DispatchMode, ...]:
    """The dispatch modes active now, innermost last: () in plain eager mode."""
    return _modes.get()


def dispatch(op: OpDef, /, *args, **kwargs) -> Any:
    """Run `op` on `args` (tensors and Python numbers); see the module docstring.

    This is `OpDef.__call__` itself. NOTE: every op of every program runs this function, so
    it is written for speed (see [Note: eager overhead]): one pass over the arguments, and the
    eager kernel call inlined.
    """
    if op.decomposition is not None:
        if _has_numpy_scalar(args, kwargs):  # [Note: numpy scalars]
            args, kwargs = _python_scalars(args, kwargs)
        if op.saves_output:
            return keep_output(op, op.decomposition(*args, **kwargs))
        return op.decomposition(*args, **kwargs)

    # One pass over the arguments: the arrays the kernel takes, the meta-cache key, and
    # whether any tensor requires grad.
    Tensor = _Tensor or tensor_class()
    arrays, key, requires_grad = [], [op], False
    try:
        for a in args:
            if isinstance(a, Tensor):
                data = a._data
                arrays.append(data)
                key.append(data.shape)
                key.append(data.dtype)
                if a.requires_grad:
                    requires_grad = True
            else:
                arrays.append(a)
                key.append(_value_key(a))
        for name, value in kwargs.items():
            key.append(name)
            key.append(_value_key(value))
        key = tuple(key)
        meta = _meta_cache.get(key)
    except _Unkeyable:  # tensors inside a list (cat), an unknown object: run the rule each time
        if _has_numpy_scalar(args, kwargs):  # [Note: numpy scalars]
            args, kwargs = _python_scalars(args, kwargs)
            return dispatch(op, *args, **kwargs)
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        requires_grad = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        key = meta = None
    if meta is None:
        meta = op.meta(*args, **kwargs)
        _remember_meta(key, meta)

    modes = _modes.get()
    if modes:
        _modes.set(modes[:-1])
        try:
            out = modes[-1].run(op, args, kwargs, meta)
        finally:
            _modes.set(modes)
    else:  # eager: the kernel on the arrays, wrapped as tensors of the rule's dtype
        xp = np if type(arrays[0]) is np.ndarray else _array_module(arrays)
        # float16 and bfloat16 results: computed in float32, then rounded ([Note: half
        # precision] in minitorch/dtype.py); not a view's, which must share the memory it reads
        rounded = type(meta) is not tuple and meta.dtype.rounding is not None and op.kind != "view"
        try:
            if rounded:
                result = _in_float32(op, xp, arrays, kwargs, meta.dtype)
            else:
                result = op.impl(xp, *arrays, **kwargs)
        except MemoryError as e:  # numpy's: name the op and what it was making
            raise _out_of_memory(op, meta) from e
        if type(meta) is tuple:  # a multi-output op (max with dim: values and indices)
            out = tuple(Tensor._from_array(_as_dtype(r, m)) for r, m in zip(result, meta))
        else:
            if not rounded and (
                type(result) is not np.ndarray or result.dtype is not meta.dtype.np
            ):
                result = _as_dtype(result, meta)
            out = Tensor.__new__(Tensor)  # Tensor._from_array(result), inlined
            out._data = result

    if requires_grad and op.backward is not None and is_grad_enabled():
        OpBackward(op, args, kwargs).attach(out if type(meta) is tuple else (out,))
    return out


# [Note: eager overhead]
# On a small tensor, numpy's kernel takes ~0.5 us and everything else is overhead: each
# Python call costs ~0.1 us, each attribute read or tuple built a few tens of ns. The eager
# path is therefore kept short: an operator goes straight to the op (x + y is ops.add(x, y),
# which is dispatch), the shape/dtype rule runs once per signature (the meta cache below), and
# dispatch does its work inline. benchmarks/eager_overhead.py measures what is left.

# [Note: the meta cache]
# A shape/dtype rule depends only on its arguments' shapes and dtypes and on the Python values
# passed with them (an exponent, a dim, a shape), so its result can be remembered under exactly
# those. Eager mode calls the same ops on the same shapes over and over (every training step),
# and the rules, written for clarity in Python, cost more than numpy's kernel on a small tensor.
# Only successful results are cached: bad input re-runs the rule, which raises at the user's line.
_META_CACHE_SIZE = 4096
_meta_cache: dict[tuple, Any] = {}
_KEY_SCALARS = (bool, int, float, str, type(None))


class _Unkeyable(Exception):
    """An argument the meta cache cannot key on (a tensor inside a list, an unknown object)."""


def _value_key(v) -> object:
    """A hashable stand-in for a Python argument, equal exactly when the values are.

    The type is part of it, so 1, 1.0 and True stay apart; slices are spelled out because
    they are unhashable before Python 3.12.
    """
    kind = type(v)
    if kind in _KEY_SCALARS:
        return (kind, v)
    if kind is tuple or kind is list:
        types = tuple(map(type, v))
        if types.count(int) == len(types):  # a shape or a tuple of dims: the common case
            return (kind, tuple(v))
        return (kind, tuple(_value_key(x) for x in v))
    if kind is slice:
        return (slice, _value_key(v.start), _value_key(v.stop), _value_key(v.step))
    if v is Ellipsis or kind is DType or kind is device:
        return v
    raise _Unkeyable


# [Note: numpy scalars]
# PyTorch takes a numpy scalar (np.float32(2), np.int64(3), np.bool_(True)) wherever it takes a
# Python number, and promotes it as one: float32 tensor * np.float64(2) is float32. Dispatch
# does the same by turning it into the Python number (`item()`) before the rule runs. For a
# primitive it costs the common call nothing: a numpy scalar is no key of the meta cache
# (np.float64, a float subclass, has its own type), so it is looked for on the slow path only
# (_Unkeyable); a composite looks before its decomposition, whose checks want Python numbers.
# A 0-d numpy *array* is not a scalar to PyTorch, nor here.


def _has_numpy_scalar(args: tuple, kwargs: dict) -> bool:
    # NOTE: a plain loop: a generator expression costs ~0.5 us, on every composite op's call
    for a in args:
        if isinstance(a, np.generic):
            return True
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, np.generic):
                return True
    return False


def _python_scalars(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    return (tuple(map(python_scalar, args)), {name: python_scalar(v) for name, v in kwargs.items()})


def python_scalar(value):
    """`value`, with a numpy scalar turned into the Python number it holds."""
    return value.item() if isinstance(value, np.generic) else value


def _remember_meta(key: tuple | None, meta) -> None:
    if key is not None:
        if len(_meta_cache) >= _META_CACHE_SIZE:
            _meta_cache.clear()
        _meta_cache[key] = meta


def _array_module(arrays: list):
    """numpy, or cupy when the first array argument is a cupy array (`2 ** x`: not args[0])."""
    for a in arrays:
        if type(a) is np.ndarray:
            return np
        if hasattr(a, "shape"):
            return module_of(a)
    return np


def _as_dtype(result, meta: TensorMeta):
    """`result` as an array of the dtype the op's rule decided (PyTorch's promotion): numpy
    returns scalars for 0-d results and keeps float64 for float32 + 0-d float64."""
    if type(result) is not np.ndarray or result.dtype != meta.dtype.np:
        result = module_of(result).asarray(result, dtype=meta.dtype.np)
    return result


def _in_float32(op: OpDef, xp, arrays: list, kwargs: dict, dtype: DType):
    """The result of an op whose result is float16 or bfloat16: its kernel run on float32
    copies of the half-precision arrays, and what it returns rounded to `dtype` once, as
    PyTorch's CPU kernels compute ([Note: half precision] in minitorch/dtype.py): a float16
    sum or cumsum accumulates in float32, where numpy's would in float16."""
    if xp is not np and dtype is not float16:
        from minitorch.errors import DTypeError, at_user_line

        raise DTypeError(
            at_user_line(
                f"{op.name}: {dtype.name} tensors live on the CPU only "
                "in minitorch (cupy has no bfloat16)"
            )
        )
    arrays = [
        a.astype(np.float32) if getattr(a, "dtype", None) in HALF_STORAGE else a for a in arrays
    ]
    result = op.impl(xp, *arrays, **kwargs)
    if xp is not np:
        return result.astype(dtype.np)  # cupy's cast rounds to nearest even too
    return dtype.rounding(result)


_Tensor = None  # minitorch.tensor.Tensor, looked up once (tensor.py imports this module)


def tensor_class() -> type:
    """minitorch.Tensor, for modules that tensor.py itself imports (no import cycle)."""
    global _Tensor
    if _Tensor is None:
        from minitorch.tensor import Tensor

        _Tensor = Tensor
    return _Tensor


def _out_of_memory(op: OpDef, meta) -> Exception:
    from minitorch.errors import OutOfMemoryError, at_user_line

    metas = meta if type(meta) is tuple else (meta,)
    made = ", ".join(f"{m.dtype.name}{list(m.shape)}" for m in metas)
    return OutOfMemoryError(at_user_line(f"{op.name}: not enough memory to make {made}"))
