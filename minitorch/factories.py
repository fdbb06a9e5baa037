"""Making tensors: `tensor`, `zeros`, `ones`, `full`, `rand`, `randn`, `arange`, ..."""

from __future__ import annotations

import numpy as np

from minitorch.dtype import DType, default_dtype_for, float32, from_numpy_dtype, int64
from minitorch.errors import DTypeError, InvalidArgumentError, at_user_line
from minitorch.tensor import Tensor

_generator = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Make `rand`/`randn`/`randint` repeatable."""
    global _generator
    _generator = np.random.default_rng(seed)


def _finish(array: np.ndarray, requires_grad: bool, device) -> Tensor:
    from minitorch.device import move

    if device is not None:
        array = move(array, device)  # refuses a device we cannot use, saying why
    t = Tensor._from_array(array)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(data) -> DType:
    """PyTorch's rule for `tensor(data)`: any float -> float32, else ints -> int64, else bool."""
    flat = np.asarray(data)
    if flat.dtype.kind == "f":
        return float32
    if flat.dtype.kind in "iu":
        return int64
    if flat.dtype.kind == "b":
        return default_dtype_for(True)
    raise DTypeError(at_user_line(f"tensor(): cannot make a tensor from {type(data).__name__}"))


def tensor(data, dtype: DType | None = None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of `data` (nested lists, numbers, arrays or a Tensor)."""
    if isinstance(data, Tensor):
        data = data.detach()._data
    if dtype is None:
        dtype = from_numpy_dtype(data.dtype) if isinstance(data, np.ndarray) else _infer_dtype(data)
    array = np.array(data, dtype=dtype.np)
    return _finish(array, requires_grad, device)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with `array`."""
    from_numpy_dtype(array.dtype)
    return Tensor._from_array(array)


def _shape(size: tuple) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def zeros(*size, dtype: DType = float32, device=None, requires_grad: bool = False) -> Tensor:
    return _finish(np.zeros(_shape(size), dtype.np), requires_grad, device)


def ones(*size, dtype: DType = float32, device=None, requires_grad: bool = False) -> Tensor:
    return _finish(np.ones(_shape(size), dtype.np), requires_grad, device)


def empty(*size, dtype: DType = float32, device=None, requires_grad: bool = False) -> Tensor:
    return _finish(np.empty(_shape(size), dtype.np), requires_grad, device)


def full(size, fill_value, dtype: DType | None = None, device=None,
         requires_grad: bool = False) -> Tensor:
    dtype = dtype or default_dtype_for(fill_value)
    return _finish(np.full(tuple(size), fill_value, dtype.np), requires_grad, device)


def rand(*size, dtype: DType = float32, device=None, requires_grad: bool = False) -> Tensor:
    """Uniform on [0, 1)."""
    array = _generator.random(_shape(size), dtype=np.float64).astype(dtype.np)
    return _finish(array, requires_grad, device)


def randn(*size, dtype: DType = float32, device=None, requires_grad: bool = False) -> Tensor:
    """Standard normal."""
    array = _generator.standard_normal(_shape(size)).astype(dtype.np)
    return _finish(array, requires_grad, device)


def randint(low, high=None, size=None, *, dtype: DType = int64, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform on [low, high): randint(10, (3,)) or randint(-5, 5, (2, 2))."""
    if size is None:  # randint(high, size), as PyTorch allows
        low, high, size = 0, low, high
    if size is None or not isinstance(size, (tuple, list)):
        raise InvalidArgumentError(at_user_line(
            f"randint(): size must be a tuple of ints, got {size!r}"
        ))
    if not low < high:
        raise InvalidArgumentError(at_user_line(
            f"randint(): expected low < high, got low={low}, high={high}"
        ))
    array = _generator.integers(low, high, size=_shape(tuple(size))).astype(dtype.np)
    return _finish(array, requires_grad, device)


def arange(start, end=None, step=1, dtype: DType | None = None, device=None,
           requires_grad: bool = False) -> Tensor:
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_int = all(isinstance(v, int) for v in (start, end, step))
        dtype = int64 if is_int else float32
    return _finish(np.arange(start, end, step).astype(dtype.np), requires_grad, device)


def zeros_like(t: Tensor, dtype: DType | None = None, requires_grad: bool = False) -> Tensor:
    return zeros(tuple(t.shape), dtype=dtype or t.dtype, requires_grad=requires_grad)


def ones_like(t: Tensor, dtype: DType | None = None, requires_grad: bool = False) -> Tensor:
    return ones(tuple(t.shape), dtype=dtype or t.dtype, requires_grad=requires_grad)


def rand_like(t: Tensor, dtype: DType | None = None, requires_grad: bool = False) -> Tensor:
    return rand(tuple(t.shape), dtype=dtype or t.dtype, requires_grad=requires_grad)


def randn_like(t: Tensor, dtype: DType | None = None, requires_grad: bool = False) -> Tensor:
    return randn(tuple(t.shape), dtype=dtype or t.dtype, requires_grad=requires_grad)
