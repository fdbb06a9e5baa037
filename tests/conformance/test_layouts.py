"""Inputs in every layout a tensor can have: transposed, strided, reversed, broadcast, offset.

A kernel reads its input through `Layout` (size, stride, offset): the flat index of element
(i0, i1, ...) is offset + i0*stride0 + i1*stride1 + ..., with strides that may be 0 or negative
([Note: writing a backend]: the address is data pointer + index * itemsize). Each case reads
one such view next to a contiguous array, out = maximum(view, other), which is exact in every
dtype, so the answer must equal numpy's and the reference interpreter's bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from codegen.backend import Backend
from ir.nodes import Pointwise
from ir.ops_handler import ops
from minitorch.dtype import from_numpy_dtype
from tests.conformance.kernels import (
    assert_agrees,
    computed,
    input_buffer,
    load,
    program_of,
    random_values,
    run_backend,
    run_reference,
)


def _random(dtype: np.dtype, *shape: int) -> np.ndarray:
    count = int(np.prod(shape))
    return random_values(dtype, count, seed=count).reshape(shape)


# name -> the view, made from a dtype. The kernel gets the view itself: its data pointer is its
# element (0, 0, ...), and the layout has offset 0.
VIEWS = {
    "contiguous": lambda d: _random(d, 4, 6),
    "transposed": lambda d: _random(d, 5, 7).T,
    "permuted_3d": lambda d: _random(d, 2, 3, 4).transpose(2, 0, 1),
    "stepped": lambda d: _random(d, 9, 12)[1::2, ::3],
    "reversed": lambda d: _random(d, 11)[::-1],
    "reversed_columns": lambda d: _random(d, 4, 6)[:, ::-1],
    "reversed_stepped": lambda d: _random(d, 9, 8)[::-2, 1::3],
    "expanded_rows": lambda d: np.broadcast_to(_random(d, 1, 7), (5, 7)),
    "expanded_columns": lambda d: np.broadcast_to(_random(d, 5, 1), (5, 7)),
    "expanded_3d": lambda d: np.broadcast_to(_random(d, 3, 1, 4), (2, 3, 5, 4)),
    "sliced": lambda d: _random(d, 6, 9)[2:, 3:7],
    "size_one_dims": lambda d: _random(d, 3, 8)[1:2, ::2][None],
    "scalar": lambda d: _random(d, 1).reshape(()),
}

# Views whose offset lives in the Layout: the kernel gets the whole base array and must add the
# offset itself. name -> (base shape, logical size, stride, offset)
OFFSET_LAYOUTS = {
    "offset": ((40,), (4, 6), (6, 1), 7),
    "offset_reversed": ((8,), (8,), (-1,), 7),
    "offset_transposed_reversed": ((30,), (3, 5), (-1, 5), 2),
}

# Empty tensors: a loop with no iterations must not touch memory.
EMPTY = {"empty_rows": (0, 3), "empty_columns": (3, 0)}

# Every dtype a layout case runs in, if the backend claims it (its itemsize scales addresses).
DTYPES = ("float32", "float64", "int32", "int64", "bool")


def view_cases(backend: Backend) -> list[tuple[str, str]]:
    dtypes = [d for d in DTYPES if d in backend.dtypes]
    names = [*VIEWS, *OFFSET_LAYOUTS, *EMPTY]
    return [(name, dtype) for name in names for dtype in dtypes]


@pytest.mark.backend_cases("layout, dtype", view_cases)
def test_layout(backend: Backend, layout: str, dtype: str):
    array, view, offset = _make(layout, np.dtype(dtype))
    x = input_buffer("x", view, offset)
    other_array = random_values(view.dtype, view.size, seed=99).reshape(view.shape)
    other = input_buffer("other", other_array)
    out = computed(
        "buf0",
        Pointwise(from_numpy_dtype(view.dtype), view.shape,
                  lambda index: ops.maximum(load(x, index), load(other, index))),
    )  # fmt: skip
    program = program_of([x, other], [out])
    inputs = {"x": array, "other": other_array}

    expected = run_reference(program, inputs)
    assert_agrees(expected, {"buf0": np.maximum(view, other_array)})  # the reference is numpy's
    got = run_backend(backend, program, inputs, expected)
    assert_agrees(got, expected, inputs={"x": view, "other": other_array})


def _make(layout: str, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray, int]:
    """(the array the kernel gets, the logical tensor it holds, the offset of its element 0)."""
    if layout in VIEWS:
        view = VIEWS[layout](dtype)
        return view, view, 0
    if layout in EMPTY:
        empty = np.zeros(EMPTY[layout], dtype)
        return empty, empty, 0
    base_shape, size, stride, offset = OFFSET_LAYOUTS[layout]
    base = _random(dtype, *base_shape)
    strides = [s * dtype.itemsize for s in stride]
    view = np.lib.stride_tricks.as_strided(base.reshape(-1)[offset:], size, strides)
    return base, view, offset
