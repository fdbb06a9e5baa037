"""`Dataset`: anything with `__getitem__(i)` and `__len__()`; `TensorDataset` (sample i is row
i of each tensor), `Subset` (some of a dataset's samples) and `random_split`.

A map-style dataset is the whole contract between data and the training loop: the loader
asks for samples by index, so shuffling, batching and splitting never look inside one.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from itertools import accumulate

from minitorch.errors import InvalidArgumentError, ShapeError, at_user_line
from minitorch.generator import Generator
from minitorch.random import randperm
from minitorch.tensor import Tensor


class Dataset:
    """Base class of a map-style dataset: subclasses give `__getitem__` and `__len__`."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")


class TensorDataset(Dataset):
    """Sample i is `(t[i] for t in tensors)`: the tensors share their first dim.

    >>> ds = TensorDataset(minitorch.randn(100, 3), minitorch.randint(0, 2, (100,)))
    >>> x, y = ds[0]; len(ds)
    100
    """

    def __init__(self, *tensors: Tensor) -> None:
        if any(t.ndim == 0 or t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ShapeError(
                at_user_line(
                    "TensorDataset: Size mismatch between tensors: first dims of shapes "
                    f"{[tuple(t.shape) for t in tensors]} differ"
                )
            )
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Dataset, lengths: Sequence[int | float], generator: Generator | None = None
) -> list[Subset]:
    """Shuffle the dataset's indices and cut them into Subsets of the given lengths.

    lengths are counts that add up to len(dataset), or fractions that add up to 1: each
    fraction gets floor(fraction * len) samples, and the remainder goes one by one to the
    first subsets.

        >>> train, val = random_split(ds, [0.8, 0.2], generator=minitorch.Generator())
    """
    size = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _counts(lengths, size)
    if sum(lengths) != size:
        raise InvalidArgumentError(
            at_user_line(
                f"random_split: Sum of input lengths {sum(lengths)} does not equal the length of "
                f"the input dataset ({size})!"
            )
        )
    indices = randperm(size, generator=generator).tolist()
    return [Subset(dataset, indices[end - n : end]) for end, n in zip(accumulate(lengths), lengths)]


def _counts(fractions: Sequence[float], size: int) -> list[int]:
    """Fractions of `size` as counts that add up to it exactly (PyTorch's rounding)."""
    for i, frac in enumerate(fractions):
        if not 0 <= frac <= 1:
            raise InvalidArgumentError(
                at_user_line(f"random_split: Fraction at index {i} is not between 0 and 1")
            )
    counts = [math.floor(size * frac) for frac in fractions]
    for i in range(size - sum(counts)):
        counts[i % len(counts)] += 1
    for i, n in enumerate(counts):
        if n == 0:
            warnings.warn(
                f"Length of split at index {i} is 0. This might result in an empty dataset.",
                stacklevel=3,
            )
    return counts
