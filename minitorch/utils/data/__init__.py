"""Datasets and the DataLoader, as torch.utils.data: how a training loop gets its batches.

    dataset = TensorDataset(images, labels)               # sample i is (images[i], labels[i])
    loader = DataLoader(dataset, batch_size=32, shuffle=True)
    for x, y in loader:                                   # x: (32, ...), y: (32,)
        ...

Four parts, one file each, in the order a batch is made:

    dataset.py      Dataset (sample i by index), TensorDataset, Subset, random_split
    sampler.py      which indices, in which order: SequentialSampler, RandomSampler, and
                    BatchSampler, which groups them into batches
    collate.py      default_collate: a list of samples -> one batch (tensors stacked along a
                    new dim 0, numbers made tensors, tuples and dicts collated field by field)
    dataloader.py   DataLoader: sampler -> dataset -> collate, once per epoch
"""

from minitorch.utils.data.collate import default_collate, default_convert
from minitorch.utils.data.dataloader import DataLoader
from minitorch.utils.data.dataset import Dataset, Subset, TensorDataset, random_split
from minitorch.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = [
    "BatchSampler",
    "DataLoader",
    "Dataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "Subset",
    "TensorDataset",
    "default_collate",
    "default_convert",
    "random_split",
]
