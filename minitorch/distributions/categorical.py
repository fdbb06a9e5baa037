"""`Categorical(probs=... | logits=...)`: one of K classes, drawn with the given weights."""

from __future__ import annotations

from minitorch import factories, ops
from minitorch.distributions.distribution import Distribution
from minitorch.distributions.utils import LOWEST, logits_to_probs, probs_to_logits
from minitorch.dtype import int64
from minitorch.errors import ArgumentTypeError, InvalidArgumentError, ShapeError, at_user_line
from minitorch.ops.meta import broadcast_shapes
from minitorch.tensor import Tensor


class Categorical(Distribution):
    """Class k in [0, K) with probability probs[..., k]; the last dim of probs or logits is
    the K classes, the dims before it the batch.

    probs are normalised to sum to 1 (any non-negative weights do); logits are normalised to
    log-probabilities, logits - logsumexp(logits). Samples are int64 class indices.

        >>> Categorical(probs=torch.tensor([0.25, 0.75])).log_prob(torch.tensor(1))
        tensor(-0.2877)
    """

    def __init__(self, probs=None, logits=None, validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise InvalidArgumentError(
                at_user_line("Either `probs` or `logits` must be specified, but not both.")
            )
        given = "probs" if probs is not None else "logits"
        param = probs if probs is not None else logits
        if not isinstance(param, Tensor):
            raise ArgumentTypeError(
                at_user_line(f"Categorical: {given} must be a Tensor, got {type(param).__name__}")
            )
        if param.ndim < 1:
            raise ShapeError(at_user_line(f"`{given}` parameter must be at least one-dimensional."))
        self._given = given
        self._num_events = param.shape[-1]
        super().__init__(tuple(param.shape[:-1]), validate_args=validate_args)
        if probs is not None:
            self._check_parameter("probs", probs, ops.ge(probs, 0.0), "Simplex()")
            self.probs = ops.div(probs, ops.sum(probs, dim=-1, keepdim=True))
            self.logits = probs_to_logits(self.probs)
        else:
            self._check_parameter(
                "logits", logits, ops.eq(logits, logits), "IndependentConstraint(Real(), 1)"
            )
            self.logits = ops.log_softmax(logits, -1)  # logits - logsumexp(logits)
            self.probs = logits_to_probs(self.logits)

    @property
    def param_shape(self) -> tuple[int, ...]:
        return tuple(self.probs.shape)

    @property
    def mean(self) -> Tensor:
        """Undefined for classes (they are not numbers on a line): NaN, as PyTorch's."""
        return factories.full(self._batch_shape, float("nan"), dtype=self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        return factories.full(self._batch_shape, float("nan"), dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return ops.argmax(self.probs, dim=-1)

    def sample(self, sample_shape=()) -> Tensor:
        """By the inverse CDF: the class is the number of cumulative probabilities at or
        below a uniform draw u, P(class = k) = P(cdf[k-1] <= u < cdf[k]) = probs[k]."""
        shape = self._extended_shape(sample_shape)
        cdf = ops.cumsum(self.probs.detach(), dim=-1)  # (*batch, K)
        u = factories.rand((*shape, 1), dtype=self.probs.dtype, device=self.probs.device)
        below = ops.to_copy(ops.le(cdf, u), dtype=int64)  # (*sample, *batch, K)
        # NOTE: rounding can leave cdf[-1] a little under 1 and u above it: clamp to K - 1
        return ops.clamp(ops.sum(below, dim=-1), 0, self._num_events - 1)

    def log_prob(self, value: Tensor) -> Tensor:
        """log probs[value], value broadcast against the batch shape."""
        if not isinstance(value, Tensor):
            value = factories.tensor(value)
        inside = ops.logical_and(ops.ge(value, 0), ops.lt(value, self._num_events))
        whole = ops.eq(value, ops.to_copy(ops.to_copy(value, dtype=int64), dtype=value.dtype))
        self._check_value(
            value,
            ops.logical_and(inside, whole),
            f"IntegerInterval(lower_bound=0, upper_bound={self._num_events - 1})",
        )
        index = ops.unsqueeze(ops.to_copy(value, dtype=int64), -1)
        shape = broadcast_shapes(
            "log_prob", tuple(index.shape), tuple(self.logits.shape[:-1]) + (1,)
        )
        log_pmf = ops.expand(self.logits, shape[:-1] + (self._num_events,))
        return ops.squeeze(ops.gather(log_pmf, -1, ops.expand(index, shape)), -1)

    def entropy(self) -> Tensor:
        """-sum p log p over the classes (a class of probability 0 adds 0, not NaN)."""
        lowest = LOWEST[self.logits.dtype.name]
        logits = ops.clamp(self.logits, lowest, None)
        return ops.neg(ops.sum(ops.mul(logits, self.probs), dim=-1))

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """The classes 0 .. K-1, shaped (K, *batch) (expanded) or (K, 1, ..., 1)."""
        values = factories.arange(self._num_events, dtype=int64)
        values = ops.reshape(values, (-1,) + (1,) * len(self._batch_shape))
        return ops.expand(values, (-1, *self._batch_shape)) if expand else values

    def _parameter_names(self) -> tuple[str, ...]:
        return (self._given,)
