"""`Normal(loc, scale)`: the Gaussian, the one distribution here with rsample."""

from __future__ import annotations

import math

from minitorch import factories, ops
from minitorch.distributions.distribution import Distribution
from minitorch.distributions.utils import broadcast_all
from minitorch.tensor import Tensor


class Normal(Distribution):
    """N(loc, scale**2), batched over the broadcast shape of loc and scale.

        log p(x) = -(x - loc)**2 / (2 scale**2) - log scale - log sqrt(2 pi)
        entropy  = 1/2 + log sqrt(2 pi) + log scale

    rsample draws loc + scale * eps with eps ~ N(0, 1): the reparameterisation trick, whose
    gradient reaches loc and scale.
    """

    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), validate_args=validate_args)
        self._check_parameter("loc", self.loc, ops.eq(self.loc, self.loc), "Real()")
        self._check_parameter(
            "scale", self.scale, ops.gt(self.scale, 0.0), "GreaterThan(lower_bound=0.0)"
        )

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return self.scale

    @property
    def variance(self) -> Tensor:
        return ops.pow(self.scale, 2)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = factories.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return ops.add(self.loc, ops.mul(eps, self.scale))  # loc + eps * scale

    def log_prob(self, value) -> Tensor:
        if not isinstance(value, Tensor):
            value = factories.tensor(float(value), dtype=self.loc.dtype)
        self._check_value(value, ops.eq(value, value), "Real()")
        squared = ops.pow(ops.sub(value, self.loc), 2)
        return ops.sub(
            ops.sub(ops.neg(ops.div(squared, ops.mul(self.variance, 2.0))), ops.log(self.scale)),
            math.log(math.sqrt(2 * math.pi)),
        )

    def cdf(self, value: Tensor) -> Tensor:
        """P(X <= value) = (1 + erf((value - loc) / (scale sqrt 2))) / 2."""
        z = ops.div(ops.sub(value, self.loc), ops.mul(self.scale, math.sqrt(2)))
        return ops.mul(ops.add(ops.erf(z), 1.0), 0.5)

    def entropy(self) -> Tensor:
        return ops.add(ops.log(self.scale), 0.5 + 0.5 * math.log(2 * math.pi))

    def _parameter_names(self) -> tuple[str, ...]:
        return ("loc", "scale")
