"""ir/lower_indirect.py against numpy: gather, embedding, x[indices], cat and dropout_keep in
the loop IR, their printed bodies, and how the scheduler treats an indirect load."""

import numpy as np
import pytest
from ir_testing import NUMPY, GraphBuilder, check, lower_and_schedule

import minitorch
from ir.interpreter import run_reference
from ir.printer import format_inner_fn
from minitorch.errors import IndexOutOfRangeError

rng = np.random.default_rng(2)


def rand(*shape, dtype=np.float32):
    return rng.uniform(-2, 2, shape).astype(dtype)


def _dropout_keep(x, p, state):  # the eager kernel is the definition ([Note: counter-based...])
    return minitorch.ops.dropout_keep(minitorch.tensor(x), p, minitorch.tensor(state)).numpy()


@pytest.fixture(autouse=True)
def references(monkeypatch):
    """numpy's meaning of the ops these tests build graphs of (ir_testing.NUMPY)."""
    monkeypatch.setitem(NUMPY, "gather", lambda x, dim, i: np.take_along_axis(x, i, dim))
    monkeypatch.setitem(NUMPY, "embedding", lambda w, i: w[i])
    monkeypatch.setitem(
        NUMPY,
        "index_tensor",
        lambda x, *key: x[tuple(slice(None) if k is None else k for k in key)],
    )
    monkeypatch.setitem(NUMPY, "cat", lambda *xs, dim=0: np.concatenate(xs, axis=dim))
    monkeypatch.setitem(NUMPY, "dropout_keep", _dropout_keep)


def test_gather_prints_as_an_indirect_load():
    g = GraphBuilder()
    x = g.placeholder("x", rand(3, 4))
    index = g.placeholder("idx", np.array([[3, 0], [1, 1], [0, 2]]))
    g.output(g.call("gather", x, 1, index))
    (kernel,) = check(g)
    data = kernel.nodes[0].data
    assert format_inner_fn(data.inner_fn, data.ranges) == (
        "def inner_fn(index):\n"
        "    i0, i1 = index\n"
        "    tmp0 = ops.load('idx', 2*i0 + i1)\n"
        "    ind0 = ops.indirect_indexing(tmp0, 4, False)\n"
        "    tmp1 = ops.load('x', 4*i0 + ind0)\n"
        "    return tmp1"
    )


def test_an_indirect_load_of_a_buffer_of_the_kernel_starts_a_new_kernel():
    """Element idx[i] of sin(x) is not the one this iteration computed: it must be in memory."""
    g = GraphBuilder()
    x = g.placeholder("x", rand(6))
    index = g.placeholder("idx", np.array([5, 0, 2, 2, 1, 3]))
    sine = g.call("sin", x)
    g.output(g.call("gather", sine, 0, index), sine)
    assert len(check(g)) == 2


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_embedding_and_advanced_indexing(dtype):
    g = GraphBuilder()
    w = g.placeholder("w", rand(5, 3))
    ids = g.placeholder("ids", np.array([[4, 0], [2, 2]], dtype))
    x = g.placeholder("x", rand(4, 5, 6))
    i = g.placeholder("i", np.array([-1, 0, 3], dtype))
    g.output(
        g.call("embedding", w, ids),
        g.call("index_tensor", x, i, None, i),
        g.call("index_tensor", x, None, i),
    )
    check(g)


def test_an_index_out_of_range_raises():
    g = GraphBuilder()
    w = g.placeholder("w", rand(5, 3))
    g.output(g.call("embedding", w, g.placeholder("ids", np.array([0, 4]))))
    program, kernels = lower_and_schedule(g)
    with pytest.raises(IndexOutOfRangeError, match="index 5 is out of bounds for a dim of size 5"):
        run_reference(program, kernels, [g.inputs[0], np.array([0, 5])])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_selects_each_element_from_its_input(dim):
    g = GraphBuilder()
    shapes = {0: [(2, 3), (1, 3), (4, 3)], 1: [(2, 1), (2, 3), (2, 2)], -1: [(2, 2), (2, 5)]}
    parts = [g.placeholder(f"x{k}", rand(*s)) for k, s in enumerate(shapes[dim])]
    g.output(g.call("sin", g.call("cat", *parts, dim=dim)))
    assert len(check(g)) == 1  # the cat is inlined into the sin: one loop


def test_dropout_keep_is_the_eager_mask():
    g = GraphBuilder()
    x = g.placeholder("x", rand(7, 9))
    state = g.placeholder("state", np.array([-3, 2**62], np.int64))  # counters wrap around
    g.output(g.call("dropout_keep", x, 0.4, state))
    check(g)
