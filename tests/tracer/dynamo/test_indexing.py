"""Advanced indexing in compiled code: reads (`x[idx]`, `x[:, [0, 2]]`) are graph ops, writes
(`y[idx] = v`, `y[y < 0] = 0`, `y[idx] += 1`) are recorded out of place with the tensor rebound
to the result, and a write into an input mutates the caller's tensor. Each program is compiled
with the default backend and held to eager: values, input mutations, gradients, errors; a
read through a boolean mask, whose shape depends on the data, breaks the graph and says why.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.errors import IndexOutOfRangeError
from tests.tracer.dynamo.helpers import assert_same
from tracer.dynamo import cache_entries, fallback_reasons, reset

pytestmark = pytest.mark.capture

rng = np.random.default_rng(0)
X = minitorch.tensor(rng.standard_normal((4, 5)).astype(np.float32))
IDX = minitorch.tensor([0, 2, 2])
V = minitorch.tensor(rng.standard_normal((4, 3)).astype(np.float32))


@pytest.fixture(autouse=True)
def _fresh_cache():
    reset()
    yield
    reset()


def _copies(args, requires_grad: bool):
    def copy(a):
        if not isinstance(a, minitorch.Tensor):
            return a
        c = a.detach().clone()
        return c.requires_grad_() if requires_grad and c.dtype.is_floating_point else c

    return [copy(a) for a in args]


def run(fn, *args, grad: bool = False):
    """Compile fn, compare with eager (result, inputs afterwards, gradients of the float
    inputs when `grad`), and return the graph breaks and the reasons it fell back to eager."""
    eager_args, compiled_args = _copies(args, grad), _copies(args, grad)
    compiled = minitorch.compile(fn)(*compiled_args)
    expected = fn(*eager_args)
    assert_same(compiled, expected)
    for a, e in zip(compiled_args, eager_args):
        assert_same(a, e)  # inputs mutated the same way
    if grad:
        compiled.sum().backward()
        expected.sum().backward()
        for a, e in zip(compiled_args, eager_args):
            if getattr(e, "requires_grad", False):
                np.testing.assert_allclose(a.grad.numpy(), e.grad.numpy(), rtol=1e-6)
    breaks = [b.reason for entry in cache_entries(fn) for b in entry.graph_breaks]
    return breaks, fallback_reasons(fn)


# ---- reads -----------------------------------------------------------------------------------


def read_index(x, idx):
    return x[idx] * 2


def read_list_and_range(x):
    return x[:, [0, 3]] + x[range(2), 1:3].sum()


def read_broadcast_indices(x, idx):
    return x[idx[:, None], idx] * x[idx, idx]  # (3, 3) and (3,)


def read_separated(x, idx):
    return x[None, idx, :, None][:, :, idx]  # a new dim around a slice: adjacent, in place


@pytest.mark.parametrize(
    "fn, args",
    [
        (read_index, (X, IDX)),
        (read_list_and_range, (X,)),
        (read_broadcast_indices, (X, IDX)),
        (read_separated, (X, IDX)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_reads_compile_whole_and_their_gradients_match_eager(fn, args):
    assert run(fn, *args, grad=True) == ([], [])


def read_mask(x):
    y = x * 2
    return y[y > 0].sum() * 2


def test_a_mask_read_breaks_the_graph_for_its_data_dependent_shape():
    breaks, fallbacks = run(read_mask, X, grad=True)  # a graph before it, and one after
    assert fallbacks == [] and len(breaks) == 1
    assert "depends on how many elements are True" in breaks[0]


def test_an_out_of_range_index_raises_as_in_eager():
    compiled = minitorch.compile(read_index)
    compiled(X, IDX)
    # the same error and values; a compiled kernel names no dim ("for a dim of size 4")
    message = r"index 7 is out of bounds for (dimension 0 with|a dim of) size 4"
    with pytest.raises(IndexOutOfRangeError, match=message):
        compiled(X, minitorch.tensor([0, 7]))
    with pytest.raises(IndexOutOfRangeError, match=message):
        read_index(X, minitorch.tensor([0, 7]))


# ---- writes into a tensor the function made --------------------------------------------------


def write_number(x):
    y = x * 2
    y[0] = 1.0
    return y


def write_columns(x, idx, v):
    y = x * 2
    y[:, idx] = v  # duplicates: the last write wins, as in eager
    return y


def write_mask(x):
    y = x * 2
    y[y < 0] = 0.0
    return y


def write_mask_rows(x, row):
    y = x + 1
    y[x[:, 0] > 0] = row  # one row, broadcast to every selected row
    return y


def plus_equals(x, idx):
    y = x * 2
    y[idx] += 1.0  # duplicates do not accumulate
    return y


def writes_in_a_row(x, idx, v):
    y = x - 1
    y[1] = 0.5
    y[:, idx] = v
    y[y > 1] = 1.0
    z = y[idx]  # a read of the written tensor: a copy, so y can be written again
    y[idx] = z * 3
    return y


WRITES = [
    (write_number, (X,)),
    (write_columns, (X, IDX, V)),
    (write_mask, (X,)),
    (write_mask_rows, (X, minitorch.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))),
    (plus_equals, (X, IDX)),
    (writes_in_a_row, (X, IDX, V)),
]


@pytest.mark.parametrize("fn, args", WRITES, ids=lambda v: getattr(v, "__name__", ""))
def test_writes_are_functionalized_into_one_graph(fn, args):
    assert run(fn, *args) == ([], [])


def value_gradient(x, idx, v):
    y = x * 2
    y[:, idx] = v * 3  # y does not require grad: the value does
    return y


def test_the_written_value_gets_its_gradient():
    v = V.detach().clone().requires_grad_()
    v_eager = V.detach().clone().requires_grad_()
    compiled = minitorch.compile(value_gradient)(X, IDX, v)
    expected = value_gradient(X, IDX, v_eager)
    assert_same(compiled, expected)
    (compiled * X).sum().backward()
    (expected * X).sum().backward()
    np.testing.assert_allclose(v.grad.numpy(), v_eager.grad.numpy(), rtol=1e-6)
    assert fallback_reasons(value_gradient) == []


def view_then_write(x, idx):
    y = x * 2
    row = y[0]  # a view: eager's row sees the write below
    y[idx] = 5.0
    return row + 1


def test_a_write_after_a_view_was_taken_breaks_the_graph_and_stays_right():
    breaks, fallbacks = run(view_then_write, X, IDX)
    reasons = breaks + fallbacks
    assert reasons and all("a view of it was taken" in r for r in reasons)


def bad_value(x, idx):
    y = x * 2
    y[idx] = minitorch.ones(7)
    return y


def test_a_value_of_the_wrong_shape_raises_eager_error():
    with pytest.raises(
        minitorch.ShapeError,
        match=r"value tensor of shape \(7,\) cannot be "
        r"broadcast to indexing result of shape",
    ):
        minitorch.compile(bad_value)(X, IDX)


# ---- writes into an input --------------------------------------------------------------------


def write_input(x, idx):
    x[idx] = 0.0
    x[x > 1] = 1.0
    return x.sum()


def test_a_write_into_an_input_mutates_the_callers_tensor():
    assert run(write_input, X, IDX) == ([], [])
