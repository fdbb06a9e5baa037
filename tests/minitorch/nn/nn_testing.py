"""Helpers for the nn tests: tensors from numpy, and gradients by finite differences."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import minitorch
from minitorch import autograd


def t(array, requires_grad: bool = False) -> minitorch.Tensor:
    """A minitorch tensor holding a copy of `array` (float64 stays float64)."""
    return minitorch.tensor(np.asarray(array), requires_grad=requires_grad)


def check_gradients(
    fn: Callable,
    reference: Callable,
    arrays: list[np.ndarray],
    seed: int = 0,
    eps: float = 1e-6,
    rtol: float = 1e-6,
    atol: float = 1e-7,
) -> None:
    """autograd's gradient of sum(w * fn(*tensors)) equals central differences of
    sum(w * reference(*arrays)), for every float64 array of `arrays`."""
    tensors = [t(a, requires_grad=a.dtype == np.float64) for a in arrays]
    out = fn(*tensors)
    weights = np.random.default_rng(seed).uniform(-1, 1, size=tuple(out.shape))
    leaves = [x for x in tensors if x.requires_grad]
    grads = autograd.grad(out, leaves, grad_outputs=minitorch.tensor(weights))
    i_leaf = 0
    for i, a in enumerate(arrays):
        if a.dtype != np.float64:
            continue
        expected = np.zeros_like(a)
        for index in np.ndindex(a.shape):
            values = []
            for step in (eps, -eps):
                moved = [b.copy() for b in arrays]
                moved[i][index] += step
                values.append(np.sum(weights * reference(*moved)))
            expected[index] = (values[0] - values[1]) / (2 * eps)
        np.testing.assert_allclose(grads[i_leaf].numpy(), expected, rtol=rtol, atol=atol)
        i_leaf += 1


def windows(
    x: np.ndarray, kernel, stride, padding, dilation=(1, 1), ceil_mode=False, fill=0.0
) -> np.ndarray:
    """Every pooling/convolution window of x (N, C, H, W), one at a time, by PyTorch's
    output-size rule: (N, C, kh, kw, out_h, out_w)."""
    sizes, pads = [], []
    for n, k, s, p, d in zip(x.shape[2:], kernel, stride, padding, dilation):
        span = n + 2 * p - d * (k - 1) - 1
        out = (-(-span // s) if ceil_mode else span // s) + 1
        if ceil_mode and (out - 1) * s >= n + p:  # the last window must start inside
            out -= 1
        sizes.append(out)
        pads.append((p, max(p, (out - 1) * s + d * (k - 1) + 1 - n - p)))
    padded = np.pad(x, ((0, 0), (0, 0), *pads), constant_values=fill)
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    out = np.empty((*x.shape[:2], kh, kw, *sizes))
    for r in range(sizes[0]):
        for q in range(sizes[1]):
            out[..., r, q] = padded[
                :,
                :,
                r * sh : r * sh + dh * (kh - 1) + 1 : dh,
                q * sw : q * sw + dw * (kw - 1) + 1 : dw,
            ]
    return out
