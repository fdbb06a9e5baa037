"""A torch-like repr: `tensor([[1., 2.]], requires_grad=True)`."""

from __future__ import annotations

import numpy as np

_THRESHOLD, _EDGEITEMS = 1000, 3  # PyTorch's defaults: summarize above 1000 elements


def _float_formatter(values: np.ndarray):
    """PyTorch's choice: `1.` for whole numbers, `1.0000` or `1.0000e+00`.

    Scientific notation when the nonzero magnitudes span more than 1000x, pass 1e8, or (for
    numbers with a fraction) go below 1e-4.
    """
    values = values.astype(np.float64)  # NOTE: float16's max/min ratio would overflow
    finite = values[np.isfinite(values)]
    whole = bool(np.all(finite == np.round(finite)))
    nonzero = np.abs(finite[finite != 0])
    sci = False
    if nonzero.size:
        low, high = nonzero.min(), nonzero.max()
        sci = high / low > 1000 or high > 1e8 or (not whole and low < 1e-4)
    if sci:
        return lambda v: f"{v:.4e}" if np.isfinite(v) else str(v)
    if whole:
        return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    return lambda v: f"{v:.4f}" if np.isfinite(v) else str(v)


def _shown(array: np.ndarray) -> np.ndarray:
    """The values a print shows: all of them, or the first and last 3 along each long dim."""
    if array.size <= _THRESHOLD:
        return array
    for axis, n in enumerate(array.shape):
        if n > 2 * _EDGEITEMS:
            array = np.take(array, np.r_[:_EDGEITEMS, n - _EDGEITEMS : n], axis=axis)
    return array


def format_array(array: np.ndarray, prefix: str) -> str:
    shown = _shown(array).ravel()  # NOTE: formatting every value of a big tensor takes seconds
    if array.dtype.kind == "f":
        fmt = _float_formatter(shown)
    elif array.dtype.kind == "b":
        fmt = lambda v: str(bool(v))  # noqa: E731
    else:
        fmt = str
    width = max((len(fmt(v)) for v in shown), default=0)
    text = np.array2string(
        array,
        separator=", ",
        prefix=prefix,
        threshold=_THRESHOLD,
        edgeitems=_EDGEITEMS,
        formatter={"all": lambda v: fmt(v).rjust(width)},
    )
    return text.replace(", ..., ", ",  ..., ")  # PyTorch sets the ellipsis apart


def format_tensor(t) -> str:
    from minitorch.device import to_host
    from minitorch.dtype import bool_, float32, int64
    from minitorch.fake import is_fake

    suffixes = []
    if is_fake(t):
        body = f"FakeTensor(size={tuple(t.shape)}"
        suffixes.append(f"dtype={t.dtype!r}")
    else:
        body = "tensor(" + format_array(to_host(t._data), "tensor(")
        if t._data.size == 0 and tuple(t.shape) != (0,):  # PyTorch: `tensor([])` for (0,)
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype not in (float32, int64, bool_):
            suffixes.append(f"dtype={t.dtype!r}")
    if t.is_cuda:
        suffixes.insert(0, "device='cuda:0'")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return body + "".join(", " + s for s in suffixes) + ")"
