"""A torch-like repr: `tensor([[1., 2.]], requires_grad=True)`."""

from __future__ import annotations

import numpy as np

_THRESHOLD, _EDGEITEMS = 1000, 3  # PyTorch's defaults: summarize above 1000 elements


def _float_formatter(values: np.ndarray):
    finite = values[np.isfinite(values)]
    if finite.size and np.all(finite == np.round(finite)) and np.abs(finite).max() < 1e8:
        return lambda v: f"{v:.0f}." if np.isfinite(v) else str(v)
    big = finite.size and np.abs(finite).max() >= 1e8
    nonzero = np.abs(finite[finite != 0])
    tiny = nonzero.size and nonzero.min() < 1e-4
    if big or tiny:
        return lambda v: f"{v:.4e}" if np.isfinite(v) else str(v)
    return lambda v: f"{v:.4f}" if np.isfinite(v) else str(v)


def format_array(array: np.ndarray, prefix: str) -> str:
    if array.dtype.kind == "f":
        fmt = _float_formatter(array.ravel())
    elif array.dtype.kind == "b":
        fmt = lambda v: str(bool(v))  # noqa: E731
    else:
        fmt = str
    width = max((len(fmt(v)) for v in array.ravel()), default=0)
    return np.array2string(
        array,
        separator=", ",
        prefix=prefix,
        threshold=_THRESHOLD,
        edgeitems=_EDGEITEMS,
        formatter={"all": lambda v: fmt(v).rjust(width)},
    )


def format_tensor(t) -> str:
    from minitorch.dtype import bool_, float32, int64
    from minitorch.fake import is_fake

    suffixes = []
    if is_fake(t):
        body = f"FakeTensor(size={tuple(t.shape)}"
        suffixes.append(f"dtype={t.dtype!r}")
    else:
        body = "tensor(" + format_array(t._data, "tensor(")
        if t._data.size == 0:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype not in (float32, int64, bool_):
            suffixes.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return body + "".join(", " + s for s in suffixes) + ")"
