"""Samplers: the order in which a DataLoader visits a dataset's indices.

`SequentialSampler` yields 0, 1, ..., n - 1; `RandomSampler` a fresh permutation each epoch
(each `iter()`), drawn from `generator` or the default stream, so `minitorch.manual_seed`
makes the shuffling repeatable; `BatchSampler` groups any sampler's indices into lists of
batch_size, the last one shorter unless drop_last.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sized

from minitorch.errors import InvalidArgumentError, at_user_line
from minitorch.factories import randint
from minitorch.generator import Generator
from minitorch.random import randperm

_CHUNK = 32  # draws with replacement per randint call


class Sampler:
    """Base class: an iterable of dataset indices (and usually a `__len__`)."""

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} does not implement __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices each epoch; with replacement, num_samples
    independent draws instead."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        self.data_source, self.replacement = data_source, replacement
        self._num_samples, self.generator = num_samples, generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise InvalidArgumentError(
                at_user_line(
                    "num_samples should be a positive integer value, but got "
                    f"num_samples={self.num_samples}"
                )
            )

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        # NOTE: lazily, a chunk at a time, as PyTorch does: minGPT's trainer asks for
        # num_samples=int(1e10) draws with replacement and takes only the first few.
        n = len(self.data_source)
        if self.replacement:
            for start in range(0, self.num_samples, _CHUNK):
                size = min(_CHUNK, self.num_samples - start)
                yield from randint(0, n, (size,), generator=self.generator).tolist()
            return
        # Whole permutations, and a prefix of one more, when num_samples exceeds n.
        rounds, rest = divmod(self.num_samples, n)
        for _ in range(rounds):
            yield from randperm(n, generator=self.generator).tolist()
        if rest:
            yield from randperm(n, generator=self.generator).tolist()[:rest]

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """The sampler's indices in lists of batch_size (the last shorter, or dropped)."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise InvalidArgumentError(
                at_user_line(
                    "batch_size should be a positive integer value, but got "
                    f"batch_size={batch_size}"
                )
            )
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return -(-len(self.sampler) // self.batch_size)
