"""Utilities outside the tensor library proper, as torch.utils: `data` (datasets and the
DataLoader that batches them)."""

from minitorch.utils import data

__all__ = ["data"]
