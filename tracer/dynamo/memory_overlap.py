"""Which tensors share memory, and which values are one object: the patterns that the guards
on a frame's tensors and containers compare (guards.py), and that the in-place rules
(variables/inplace.py) ask before writing an input.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def identity_pattern(values: tuple) -> tuple[int, ...]:
    """For each value, the position of the first value that is the same object."""
    first: dict[int, int] = {}
    return tuple(first.setdefault(id(v), i) for i, v in enumerate(values))


def alias_pattern(tensors: tuple) -> tuple[int, ...]:
    """Which tensors share memory, as a pattern: (x, y, x.detach(), x[1:]) -> (0, 1, 0, 0).

    [Note: aliasing is overlapping memory]
    Two tensors alias when their bytes overlap, whatever links them or not: `x` and
    `x.detach()` (no `_base`), two `from_numpy` of one array, two slices of one array that
    overlap. A traced graph reads each input as its own buffer, so a write to one input is
    only correct if no other input sees those bytes; the guard keeps the pattern of overlaps
    the trace saw, and the in-place rules (variables/inplace.py) refuse a write to an input
    that overlaps another, by this same function.

    Fast path, taken on every call: numpy gives a view the array that owns its memory as
    `.base` (a view of a view too), so tensors whose owners are distinct arrays share
    nothing. Only when two owners coincide (or an array wraps foreign memory, or lives on a
    GPU) are the byte ranges compared: [lowest byte, highest byte] from the data pointer,
    shape and strides, as `np.may_share_memory` does. Interleaved views (`x[::2]`, `x[1::2]`)
    count as overlapping: a guard may be stricter than needed, never looser.
    """
    owners = set()
    for t in tensors:
        data = t._data
        base = data.base
        if type(data) is not np.ndarray:
            return _overlap_pattern(tensors)
        if base is None:
            owners.add(id(data))
        elif type(base) is np.ndarray:
            owners.add(id(base))
        else:
            return _overlap_pattern(tensors)
    if len(owners) == len(tensors):
        return tuple(range(len(tensors)))
    return _overlap_pattern(tensors)


def shares_memory(a: Any, b: Any) -> bool:
    """Do tensors `a` and `b` overlap in memory ([Note: aliasing is overlapping memory])?"""
    return alias_pattern((a, b)) == (0, 0)


def _overlap_pattern(tensors: tuple) -> tuple[int, ...]:
    """The pattern of `alias_pattern` from byte ranges: overlapping ranges, transitively, form
    one group. Sorted by start, a range joins the group before it if it starts below that
    group's end."""
    ranges = sorted((_byte_range(t), i) for i, t in enumerate(tensors))
    group_of: list[Any] = [None] * len(tensors)
    group, device, end = -1, None, 0
    for (on, start, stop), i in ranges:
        if start == stop:
            group_of[i] = ("empty", i)  # no bytes: overlaps nothing
            continue
        if on != device or start >= end:
            group, device, end = group + 1, on, stop
        else:
            end = max(end, stop)
        group_of[i] = group
    seen: dict[Any, int] = {}
    return tuple(seen.setdefault(g, len(seen)) for g in group_of)


def _byte_range(t: Any) -> tuple[str, int, int]:
    """(device, first byte, one past the last byte) of the elements `t` can reach."""
    data = t._data
    start = stop = t.data_ptr()
    if data.size == 0:
        return t.device.type, start, start  # no bytes: overlaps nothing
    for size, stride in zip(data.shape, data.strides):
        if stride < 0:
            start += (size - 1) * stride
        else:
            stop += (size - 1) * stride
    return t.device.type, start, stop + data.itemsize
