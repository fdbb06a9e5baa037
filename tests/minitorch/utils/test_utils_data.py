"""minitorch.utils.data: datasets, samplers, default_collate and DataLoader, checked against
what PyTorch documents (batch shapes and dtypes, order, lengths, drop_last, shuffling that
visits every sample once per epoch and repeats with a seeded generator, option errors)."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import minitorch
from minitorch.utils.data import (
    BatchSampler,
    DataLoader,
    Dataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)


def _dataset(n: int = 10) -> TensorDataset:
    return TensorDataset(
        minitorch.arange(n * 3, dtype=minitorch.float32).reshape(n, 3), minitorch.arange(n)
    )


class Squares(Dataset):
    """A map-style dataset of Python samples: (i, i * i as a float, a dict)."""

    def __len__(self) -> int:
        return 7

    def __getitem__(self, i):
        return i, float(i * i), {"name": f"s{i}", "array": np.full(2, i, dtype=np.float32)}


def test_tensor_dataset_rows_and_errors():
    ds = _dataset()
    x, y = ds[4]
    assert len(ds) == 10 and x.tolist() == [12.0, 13.0, 14.0] and y.item() == 4
    with pytest.raises(ValueError, match="Size mismatch between tensors"):
        TensorDataset(minitorch.zeros(3, 2), minitorch.zeros(4))
    with pytest.raises(NotImplementedError):
        Dataset()[0]


def test_loader_batches_in_order_with_a_short_last_batch():
    loader = DataLoader(_dataset(), batch_size=4)
    batches = list(loader)
    assert len(loader) == len(batches) == 3
    assert [tuple(x.shape) for x, _ in batches] == [(4, 3), (4, 3), (2, 3)]
    assert isinstance(batches[0], list)  # a tuple sample collates to a list, as PyTorch's
    assert [y.tolist() for _, y in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batches[0][1].dtype is minitorch.int64 and batches[0][0].dtype is minitorch.float32
    dropped = DataLoader(_dataset(), batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [len(y) for _, y in dropped] == [4, 4]


def test_shuffle_visits_every_sample_once_and_repeats_with_a_seeded_generator():
    def epoch(loader):
        return [i for _, y in loader for i in y.tolist()]

    loader = DataLoader(
        _dataset(20), batch_size=6, shuffle=True, generator=minitorch.Generator().manual_seed(7)
    )
    first, second = epoch(loader), epoch(loader)
    assert sorted(first) == sorted(second) == list(range(20))
    assert first != second  # a new order each epoch
    again = DataLoader(
        _dataset(20), batch_size=6, shuffle=True, generator=minitorch.Generator().manual_seed(7)
    )
    assert epoch(again) == first
    minitorch.manual_seed(3)
    unseeded = epoch(DataLoader(_dataset(20), batch_size=6, shuffle=True))
    minitorch.manual_seed(3)
    assert epoch(DataLoader(_dataset(20), batch_size=6, shuffle=True)) == unseeded


def test_default_collate_of_numbers_strings_dicts_and_arrays():
    batch = next(iter(DataLoader(Squares(), batch_size=3)))
    index, square, info = batch
    assert index.dtype is minitorch.int64 and index.tolist() == [0, 1, 2]
    assert square.dtype is minitorch.float64 and square.tolist() == [0.0, 1.0, 4.0]
    assert info["name"] == ["s0", "s1", "s2"]
    assert info["array"].dtype is minitorch.float32 and info["array"].shape == (3, 2)
    assert default_collate([True, False]).dtype is minitorch.bool
    Point = namedtuple("Point", "x y")
    points = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(points, Point) and points.x.tolist() == [1, 3]
    with pytest.raises(ValueError, match="should be of equal size"):
        default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="batch must contain tensors"):
        default_collate([object()])


def test_batch_size_none_yields_single_converted_samples():
    samples = list(DataLoader(Squares(), batch_size=None))
    assert len(samples) == 7 and samples[2][0] == 2
    assert isinstance(samples[2][2]["array"], minitorch.Tensor)


def test_samplers_and_custom_collate():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    batches = BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)
    assert list(batches) == [[0, 1, 2], [3, 4, 5], [6]] and len(batches) == 3
    assert len(BatchSampler(range(7), 3, drop_last=True)) == 2
    gen = minitorch.Generator().manual_seed(0)
    with_replacement = list(
        RandomSampler(range(5), replacement=True, num_samples=50, generator=gen)
    )
    assert len(with_replacement) == 50 and set(with_replacement) <= set(range(5))
    endless = iter(RandomSampler(range(5), replacement=True, num_samples=int(1e10)))
    assert len([next(endless) for _ in range(40)]) == 40  # minGPT's trainer: drawn lazily
    longer = list(RandomSampler(range(4), num_samples=10, generator=gen))
    assert sorted(longer[:4]) == sorted(longer[4:8]) == [0, 1, 2, 3] and len(longer) == 10
    loader = DataLoader(_dataset(), batch_sampler=[[9, 0], [5]], collate_fn=lambda s: len(s))
    assert list(loader) == [2, 1] and len(loader) == 2


def test_option_errors_as_in_pytorch():
    ds = _dataset()
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        DataLoader(ds, batch_size=2, batch_sampler=[[0]])
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(ds, batch_size=0)
    # Worker options are accepted and give the same batches.
    same = DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True)
    assert [y.tolist() for _, y in same] == [y.tolist() for _, y in DataLoader(ds, 4)]


def test_random_split_by_counts_and_fractions():
    ds = _dataset(10)
    train, val = random_split(ds, [7, 3], generator=minitorch.Generator().manual_seed(1))
    assert isinstance(train, Subset) and (len(train), len(val)) == (7, 3)
    seen = sorted([train[i][1].item() for i in range(7)] + [val[i][1].item() for i in range(3)])
    assert seen == list(range(10))
    parts = random_split(ds, [0.5, 0.3, 0.2])
    assert [len(p) for p in parts] == [5, 3, 2]
    odd = random_split(_dataset(11), [0.5, 0.5])  # the remainder goes to the first
    assert [len(p) for p in odd] == [6, 5]
    with pytest.raises(ValueError, match="does not equal the length"):
        random_split(ds, [3, 3])
    assert len(list(DataLoader(train, batch_size=2))) == 4
