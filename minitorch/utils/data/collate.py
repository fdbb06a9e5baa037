"""`default_collate`: a list of samples -> one batch, by the type of the first sample.

    tensors of one shape            stacked along a new dim 0: n x (3, 4) -> (n, 3, 4)
    numpy arrays and numpy numbers  the same, as tensors
    Python floats / ints / bools    a 1-d tensor: float64 / int64 / bool
    str and bytes                   left as a list
    dicts                           a dict of batches, key by key
    tuples, lists, named tuples     collated position by position; a tuple becomes a list
                                    (named tuples keep their type), as in PyTorch, so
                                    `for x, y in loader` unpacks a batch like a sample

`default_convert` is what the loader applies to single samples when batching is off
(batch_size=None): numpy arrays become tensors, everything else stays.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from minitorch.dtype import float64
from minitorch.errors import ArgumentTypeError, ShapeError, at_user_line
from minitorch.factories import from_numpy, tensor
from minitorch.functional.views import stack
from minitorch.tensor import Tensor


def default_collate(batch: Sequence):
    """Merge a list of samples into a batch (see the table above)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, (np.ndarray, np.generic)) and elem.dtype.kind in "biuf":
        return stack([from_numpy(np.asarray(b)) for b in batch], 0)
    if isinstance(elem, float):
        return tensor(list(batch), dtype=float64)
    if isinstance(elem, int):  # bool is an int: a bool tensor
        return tensor(list(batch))
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in elem}
    if isinstance(elem, Sequence):
        return _collate_sequences(batch)
    raise ArgumentTypeError(
        at_user_line(
            "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
            f"found {type(elem).__name__}"
        )
    )


def _collate_sequences(batch: Sequence):
    """Samples that are sequences of fields: collate field i of every sample together."""
    elem = batch[0]
    if any(len(sample) != len(elem) for sample in batch):
        raise ShapeError(
            at_user_line(
                "default_collate: each element in list of batch should be of equal size, got "
                f"lengths {[len(sample) for sample in batch]}"
            )
        )
    fields = [default_collate(samples) for samples in zip(*batch)]
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple keeps its type
        return type(elem)(*fields)
    return fields


def default_convert(data):
    """numpy arrays (also inside dicts and sequences) as tensors; everything else as is."""
    if isinstance(data, np.ndarray) and data.dtype.kind in "biuf":
        return from_numpy(data)
    if isinstance(data, Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(default_convert(d) for d in data)
    return data
