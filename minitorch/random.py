"""Sampling indices: `randperm` (a shuffled arange) and `multinomial` (draws from weights).

    >>> minitorch.randperm(5)                              # tensor([3, 0, 4, 1, 2])
    >>> minitorch.multinomial(probs, 1)                    # one class per row of probs
    >>> minitorch.multinomial(weights, 3, replacement=False)

Both draw from the default stream or from `generator=` (minitorch/generator.py), and return
int64 indices that nothing differentiates through, as in PyTorch.

[Note: multinomial without replacement]
Drawing k classes one after another, each time renormalising the weights left, is the same as
giving each class i the key w_i / E_i, with E_i an independent Exp(1) sample, and taking the
k largest keys (the exponential race: the smallest of independent exponential clocks of rates
w_i rings first with probability w_i / sum(w)). So one sort per row draws all k at once; it is
the method PyTorch uses too. With replacement, each draw inverts the cumulative distribution:
the class is where a uniform number falls among the running sums.
"""

from __future__ import annotations

import numbers

import numpy as np

from minitorch import factories
from minitorch.device import move, to_host
from minitorch.dtype import DType, int64
from minitorch.errors import (
    ArgumentTypeError,
    DTypeError,
    InvalidArgumentError,
    ShapeError,
    at_user_line,
)
from minitorch.functional._common import check_tensor
from minitorch.generator import Generator
from minitorch.overrides import make_overridable
from minitorch.tensor import Tensor

__all__ = ["multinomial", "randperm"]


def randperm(
    n: int,
    *,
    generator: Generator | None = None,
    dtype: DType = int64,
    device=None,
    requires_grad: bool = False,
) -> Tensor:
    """0, 1, ..., n - 1 in a random order."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ArgumentTypeError(
            at_user_line(f"randperm(): argument 'n' must be int, not {type(n).__name__}")
        )
    if n < 0:
        raise InvalidArgumentError(at_user_line(f"randperm(): n must be non-negative, got {n}"))
    dtype = factories._dtype("randperm", dtype)
    rng = factories._rng("randperm", generator)
    t = factories._allocate(
        "randperm", (n,), int64, lambda: Tensor._from_array(rng.permutation(n).astype(dtype.np))
    )
    return factories._finish(t, requires_grad, device)


def multinomial(
    input: Tensor,
    num_samples: int,
    replacement: bool = False,
    *,
    generator: Generator | None = None,
) -> Tensor:
    """Class indices drawn from each row of weights `input` (1-d, or 2-d for a batch).

    The weights need not sum to one, but must be finite and non-negative with a positive sum.
    """
    _check_multinomial(input, num_samples, replacement)
    rng = factories._rng("multinomial", generator)
    weights = to_host(input.detach()._data).astype(np.float64).reshape(-1, input.shape[-1])
    _check_weights(weights)
    if replacement:
        cdf = np.cumsum(weights, axis=1)
        cdf /= cdf[:, -1:]  # the last running sum is exactly 1, above every uniform draw
        draws = rng.random((weights.shape[0], num_samples))
        picks = np.stack([np.searchsorted(c, u, side="right") for c, u in zip(cdf, draws)])
    else:  # [Note: multinomial without replacement]
        keys = weights / rng.standard_exponential(weights.shape)
        picks = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    picks = picks.astype(np.int64).reshape((*input.shape[:-1], num_samples))
    if input.is_cuda:
        picks = move(picks, input.device)
    return Tensor._from_array(picks)


def _check_multinomial(input, num_samples, replacement: bool) -> None:
    check_tensor("multinomial", input)
    if not input.dtype.is_floating_point:
        raise DTypeError(
            at_user_line(
                f"multinomial(): only supports floating-point dtypes for input, got "
                f"{input.dtype.name}"
            )
        )
    if input.ndim not in (1, 2):
        raise ShapeError(
            at_user_line(
                f"multinomial(): prob_dist must be 1 or 2 dim, got shape {tuple(input.shape)}"
            )
        )
    if isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral):
        raise ArgumentTypeError(
            at_user_line(
                f"multinomial(): argument 'num_samples' must be int, not "
                f"{type(num_samples).__name__}"
            )
        )
    if num_samples <= 0:
        raise InvalidArgumentError(
            at_user_line(f"multinomial(): cannot sample n_sample <= 0 samples (got {num_samples})")
        )
    if not replacement and num_samples > input.shape[-1]:
        raise InvalidArgumentError(
            at_user_line(
                f"multinomial(): cannot sample n_sample > prob_dist.size(-1) samples without "
                f"replacement ({num_samples} > {input.shape[-1]})"
            )
        )


def _check_weights(weights: np.ndarray) -> None:
    """A data-dependent check, as in PyTorch: each row a distribution."""
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise InvalidArgumentError(
            at_user_line(
                "multinomial(): probability tensor contains either `inf`, `nan` or element < 0"
            )
        )
    if np.any(weights.sum(axis=1) <= 0):
        raise InvalidArgumentError(
            at_user_line(
                "multinomial(): invalid multinomial distribution (sum of probabilities <= 0)"
            )
        )


# Every public function hands a Proxy (any __torch_function__ type) to it: see
# [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(globals(), __all__)
