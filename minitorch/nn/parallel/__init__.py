"""`nn.parallel`: DataParallel, which on one device is its module."""

from minitorch.nn.parallel.data_parallel import DataParallel

__all__ = ["DataParallel"]
