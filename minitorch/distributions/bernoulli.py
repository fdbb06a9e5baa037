"""`Bernoulli(probs=... | logits=...)`: a coin that shows 1 with probability probs."""

from __future__ import annotations

from minitorch import factories, ops
from minitorch.distributions.distribution import Distribution
from minitorch.distributions.utils import (
    broadcast_all,
    logits_to_probs,
    probs_to_logits,
    softplus,
)
from minitorch.errors import InvalidArgumentError, at_user_line
from minitorch.tensor import Tensor


class Bernoulli(Distribution):
    """1 with probability p, 0 otherwise; give probs p or logits log(p / (1 - p)).

        log p(x) = x * logits - log(1 + exp(logits))
        entropy  = -(p log p + (1 - p) log(1 - p))

    Samples are 0.0 or 1.0 in the parameter's dtype, as PyTorch's.
    """

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise InvalidArgumentError(
                at_user_line("Either `probs` or `logits` must be specified, but not both.")
            )
        self._given = "probs" if probs is not None else "logits"
        (param,) = broadcast_all(probs if probs is not None else logits)
        super().__init__(tuple(param.shape), validate_args=validate_args)
        if probs is not None:
            self.probs = param
            inside = ops.logical_and(ops.ge(param, 0.0), ops.le(param, 1.0))
            self._check_parameter(
                "probs", param, inside, "Interval(lower_bound=0.0, upper_bound=1.0)"
            )
            self.logits = probs_to_logits(param, is_binary=True)
        else:
            self.logits = param
            self._check_parameter("logits", param, ops.eq(param, param), "Real()")
            self.probs = logits_to_probs(param, is_binary=True)

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        return ops.to_copy(ops.ge(self.probs, 0.5), dtype=self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return ops.mul(self.probs, ops.sub(1.0, self.probs))  # p (1 - p)

    def sample(self, sample_shape=()) -> Tensor:
        """1 where a uniform draw falls below p: P(u < p) = p."""
        shape = self._extended_shape(sample_shape)
        u = factories.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return ops.to_copy(ops.lt(u, self.probs.detach()), dtype=self.probs.dtype)

    def log_prob(self, value) -> Tensor:
        if not isinstance(value, Tensor):
            value = factories.tensor(float(value), dtype=self.probs.dtype)
        binary = ops.logical_or(ops.eq(value, 0), ops.eq(value, 1))
        self._check_value(value, binary, "Boolean()")
        # -binary_cross_entropy_with_logits(logits, value): x * l - softplus(l)
        return ops.sub(ops.mul(value, self.logits), softplus(self.logits))

    def entropy(self) -> Tensor:
        # binary_cross_entropy_with_logits(logits, probs): softplus(l) - p * l
        return ops.sub(softplus(self.logits), ops.mul(self.probs, self.logits))

    def _parameter_names(self) -> tuple[str, ...]:
        return (self._given,)
