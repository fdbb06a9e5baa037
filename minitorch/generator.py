"""`Generator`: a stream of random numbers of one's own, passed to a sampler as `generator=`.

    >>> g = minitorch.Generator().manual_seed(0)
    >>> minitorch.randint(10, (3,), generator=g)     # the same three numbers on every run

Every sampler (`rand`, `randn`, `randint`, `randperm`, `multinomial`, ...) draws from the
default stream, which `minitorch.manual_seed` resets, unless it is given a Generator: then it
draws from that one alone, so a data loader's shuffling does not shift a model's dropout masks.
Each stream is a numpy `Generator` (PCG64); the numbers differ from PyTorch's (a Mersenne
Twister), as two libraries' streams always do, and their distributions are the same.
"""

from __future__ import annotations

import numpy as np

from minitorch.device import device as Device
from minitorch.errors import ArgumentTypeError, at_user_line

DEFAULT_SEED = 67280421310721  # the seed PyTorch's default generator starts from


def check_seed(op: str, seed) -> int:
    """Any int seeds, as in PyTorch (taken mod 2**64); a float or a str is refused."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ArgumentTypeError(
            at_user_line(f"{op}: seed must be an int, got {type(seed).__name__}")
        )
    return seed % 2**64


class Generator:
    """A random-number stream: `manual_seed` makes it repeatable."""

    def __init__(self, device: str | Device = "cpu") -> None:
        self.device = Device(device)
        self.manual_seed(DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from `seed`; returns the generator, so it chains."""
        self._seed = check_seed("Generator.manual_seed()", seed)
        self._rng = np.random.default_rng(self._seed)
        return self

    def initial_seed(self) -> int:
        """The seed the stream last started from."""
        return self._seed

    def __repr__(self) -> str:
        return f"<minitorch.Generator seed={self._seed} device={self.device}>"


def numpy_rng(
    op: str, generator: Generator | None, default: np.random.Generator
) -> np.random.Generator:
    """The numpy stream a sampler draws from: `generator`'s own, or the default."""
    if generator is None:
        return default
    if not isinstance(generator, Generator):
        raise ArgumentTypeError(
            at_user_line(
                f"{op}(): argument 'generator' must be a minitorch.Generator, not "
                f"{type(generator).__name__}"
            )
        )
    return generator._rng
