"""`Distribution`: the base class, its shapes and its argument checks.

[Note: the shapes of a distribution]
A distribution object may hold many distributions of the same family at once: Normal(loc,
scale) with loc of shape (3,) is three normals. That shape is its `batch_shape`; the shape of
one draw of one of them is its `event_shape` (() for the ones here). sample(sample_shape)
returns sample_shape + batch_shape + event_shape, and log_prob(value) returns the log density
of each of them, value broadcast against batch_shape + event_shape.

[Note: validating arguments]
As in PyTorch, a distribution checks its parameters (a positive scale, probabilities in
[0, 1]) when made, and log_prob checks that a value lies in its support, unless
`validate_args=False` or `Distribution.set_default_validate_args(False)`. The checks read
the values, so compiled code runs them eagerly (a graph break); pass validate_args=False to
compile a distribution's use whole.
"""

from __future__ import annotations

from minitorch.errors import InvalidArgumentError, MinitorchError, at_user_line
from minitorch.tensor import Tensor


def _size(sample_shape) -> tuple[int, ...]:
    if isinstance(sample_shape, int):
        return (sample_shape,)
    return tuple(sample_shape)


class Distribution:
    """Base class: subclasses give sample/rsample, log_prob, entropy, mean and variance."""

    has_rsample = False
    _validate_args = True  # [Note: validating arguments]

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument checks on or off for distributions made from now on."""
        if value not in (True, False):
            raise InvalidArgumentError(
                at_user_line(f"set_default_validate_args expects True or False, got {value!r}")
            )
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args: bool | None = None):
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args

    @property
    def batch_shape(self) -> tuple[int, ...]:
        return self._batch_shape

    @property
    def event_shape(self) -> tuple[int, ...]:
        return self._event_shape

    def _extended_shape(self, sample_shape=()) -> tuple[int, ...]:
        """sample_shape + batch_shape + event_shape: [Note: the shapes of a distribution]."""
        return _size(sample_shape) + self._batch_shape + self._event_shape

    def _check_parameter(self, name: str, value: Tensor, ok: Tensor, constraint: str) -> None:
        """Refuse a parameter whose values break its constraint (`ok` is the elementwise
        test), by name, as PyTorch's ValueError does."""
        if self._validate_args and not bool(ok.all()):
            raise InvalidArgumentError(
                at_user_line(
                    f"Expected parameter {name} ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {type(self).__name__} to satisfy the "
                    f"constraint {constraint}, but found invalid values:\n{value}"
                )
            )

    def _check_value(self, value: Tensor, ok: Tensor, support: str) -> None:
        if self._validate_args and not bool(ok.all()):
            raise InvalidArgumentError(
                at_user_line(
                    f"Expected value argument ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) to be within the support ({support}) of the "
                    f"distribution {type(self).__name__}, but found invalid values:\n{value}"
                )
            )

    # ---- what subclasses give ----------------------------------------------------------

    def sample(self, sample_shape=()) -> Tensor:
        """A draw of shape sample_shape + batch_shape + event_shape, without gradient."""
        return self.rsample(sample_shape).detach()

    def rsample(self, sample_shape=()) -> Tensor:
        """A draw the gradient flows through (to the parameters)."""
        raise MinitorchError(
            at_user_line(
                f"{type(self).__name__} has no rsample: its samples are not differentiable in "
                f"its parameters (use log_prob, the score function, instead)"
            )
        )

    def sample_n(self, n: int) -> Tensor:
        return self.sample((n,))

    def log_prob(self, value: Tensor) -> Tensor:
        raise MinitorchError(at_user_line(f"{type(self).__name__} does not implement log_prob"))

    def entropy(self) -> Tensor:
        raise MinitorchError(at_user_line(f"{type(self).__name__} does not implement entropy"))

    @property
    def mean(self) -> Tensor:
        raise MinitorchError(at_user_line(f"{type(self).__name__} does not implement mean"))

    @property
    def variance(self) -> Tensor:
        raise MinitorchError(at_user_line(f"{type(self).__name__} does not implement variance"))

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def __repr__(self) -> str:
        params = ", ".join(
            f"{name}: {_describe(getattr(self, name))}" for name in self._parameter_names()
        )
        return f"{type(self).__name__}({params})"

    def _parameter_names(self) -> tuple[str, ...]:
        return ()


def _describe(value: Tensor) -> str:
    """A parameter as PyTorch's repr shows it: the values if one, else the shape."""
    return str(value.item()) if value.numel() == 1 else f"torch.Size({list(value.shape)})"
