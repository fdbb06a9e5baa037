"""`DataLoader`: iterate over a dataset in batches, as torch.utils.data.DataLoader.

    loader = DataLoader(dataset, batch_size=64, shuffle=True, drop_last=True)
    for epoch in range(10):
        for x, y in loader:      # a new order every epoch when shuffle=True
            ...

One batch is three steps: the batch sampler picks the indices (sampler.py), the dataset
gives each sample (dataset.py), and collate_fn merges them (collate.py, default_collate).

NOTE: samples are loaded in the main process, one batch at a time. num_workers, pin_memory,
timeout, prefetch_factor and the other worker options are accepted, so scripts written for
PyTorch run, and change nothing but speed in PyTorch itself: the batches are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from minitorch.errors import InvalidArgumentError, at_user_line
from minitorch.generator import Generator
from minitorch.utils.data.collate import default_collate, default_convert
from minitorch.utils.data.dataset import Dataset
from minitorch.utils.data.sampler import BatchSampler, RandomSampler, SequentialSampler


class DataLoader:
    """Batches of `dataset`: batch_size samples, in order or shuffled, collated."""

    def __init__(
        self,
        dataset: Dataset,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[int] | None = None,
        batch_sampler: Iterable[list[int]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable | None = None,
        multiprocessing_context=None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
    ) -> None:
        _check_options(batch_size, shuffle, sampler, batch_sampler, drop_last, num_workers)
        if sampler is None:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        if batch_sampler is not None:
            batch_size, drop_last = None, False  # the batch sampler decides both
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.generator = num_workers, generator
        self.pin_memory, self.timeout = pin_memory, timeout
        if collate_fn is None:
            collate_fn = default_convert if batch_sampler is None else default_collate
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator:
        if self.batch_sampler is None:  # batching off: one converted sample at a time
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        return len(self.sampler if self.batch_sampler is None else self.batch_sampler)


def _check_options(
    batch_size, shuffle, sampler, batch_sampler, drop_last, num_workers: int
) -> None:
    """PyTorch's rules for which options go together."""
    if num_workers < 0:
        raise InvalidArgumentError(
            at_user_line(
                "num_workers option should be non-negative; use num_workers=0 to disable "
                "multiprocessing."
            )
        )
    if sampler is not None and shuffle:
        raise InvalidArgumentError(
            at_user_line("sampler option is mutually exclusive with shuffle")
        )
    if batch_sampler is not None and (
        batch_size != 1 or shuffle or sampler is not None or drop_last
    ):
        raise InvalidArgumentError(
            at_user_line(
                "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                "and drop_last"
            )
        )
    if batch_size is None and drop_last:
        raise InvalidArgumentError(
            at_user_line(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        )
