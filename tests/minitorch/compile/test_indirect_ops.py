"""gather, embedding, x[indices], cat and dropout compiled as loops (ir/lower_indirect.py): values,
gradients and errors equal eager mode's, on every code generator that compiles int64.

Dropout is compared bit for bit: eager mode and the kernel hash the same counters
([Note: counter-based random numbers] in minitorch/counter_rng.py), and a compiled call moves the
generator as far as an eager one, so the draws after it agree too.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from codegen.registry import get_backend
from minitorch import _logging
from minitorch.errors import IndexOutOfRangeError
from tracer.dynamo import reset

BACKENDS = ["llvm", "numpy", "interpreter"]
LOWERED = {"gather", "embedding", "index_tensor", "cat", "dropout_keep"}


def _rand(*shape, seed=0, requires_grad=True):
    array = np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)
    return minitorch.tensor(array, requires_grad=requires_grad)


def _compiled(fn, backend, *args):
    """fn compiled whole and run on args; and the extern steps it ran, by op name."""
    reset()
    with _logging.Recorder() as recorder:
        out = minitorch.compile(fn, backend=backend, fullgraph=True)(*args)
    loop_ir = "\n".join(a.text for a in recorder.artifacts if a.stage == "loop_ir")
    externs = {
        line.split("minitorch.ops.")[1].split("(")[0]
        for line in loop_ir.splitlines()
        if line.startswith("extern:")
    }
    return out, externs


def _check(fn, backend, *inputs):
    """Compiled fn(*inputs).sum() equals eager: the value, each input's gradient, and no
    lowered op ran as an extern step where the backend compiles int64."""
    leaves = [t for t in inputs if t.requires_grad]
    for t in leaves:
        t.grad = None
    got, externs = _compiled(fn, backend, *inputs)
    got.sum().backward()
    got_grads = [t.grad.numpy().copy() for t in leaves]
    for t in leaves:
        t.grad = None
    want = fn(*inputs)
    want.sum().backward()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)
    assert got.dtype is want.dtype and got.shape == want.shape
    for got_grad, t in zip(got_grads, leaves, strict=True):
        np.testing.assert_allclose(got_grad, t.grad.numpy(), rtol=1e-6, atol=1e-6)
    if "int64" in get_backend(backend).dtypes:
        assert not externs & LOWERED, externs


@pytest.mark.parametrize("backend", BACKENDS)
def test_gather_compiles_to_an_indirect_load(backend):
    x = _rand(4, 5)
    index = minitorch.tensor([[0, 4, 2], [1, 1, 3], [4, 0, 0], [2, 3, 1]])
    _check(lambda x, i: minitorch.gather(x.sin(), 1, i) * 2, backend, x, index)
    column = minitorch.tensor([[3, 0, 1, 2]]).T  # a (4, 1) index along dim 0, negative dim
    _check(lambda x, i: minitorch.gather(x, -2, i).exp(), backend, x, column)


@pytest.mark.parametrize("backend", BACKENDS)
def test_embedding_compiles_to_a_row_gather(backend):
    weight = _rand(6, 3, seed=1)
    ids = minitorch.tensor([[1, 5, 1], [0, 2, 5]], dtype=minitorch.int32)
    _check(lambda w, i: F.embedding(i, w).tanh(), backend, weight, ids)
    _check(lambda w, i: F.embedding(i, w, padding_idx=5) * 3, backend, weight, ids)


@pytest.mark.parametrize("backend", BACKENDS)
def test_advanced_indexing_compiles_to_indirect_loads(backend):
    index_tensor = minitorch.ops.index_tensor
    x = _rand(5, 6, 7, seed=8)
    i = minitorch.tensor([[0, -1, 4], [2, 2, -5]])  # negative indices count from the end
    j = minitorch.tensor([6, 0, -7], dtype=minitorch.int32)
    _check(lambda x, i: index_tensor(x.sin(), i), backend, x, i)  # x[i]
    _check(lambda x, j: index_tensor(x, None, None, j) * 2, backend, x, j)  # x[:, :, j]
    _check(lambda x, i, j: index_tensor(x, None, i, j), backend, x, i, j)  # adjacent: in place
    _check(lambda x, i, j: index_tensor(x, i, None, j), backend, x, i, j)  # apart: batch first


@pytest.mark.parametrize("backend", BACKENDS)
def test_cat_compiles_to_a_select_over_its_inputs(backend):
    a, b, c = _rand(2, 3, seed=2), _rand(2, 4, seed=3), _rand(2, 1, seed=4)
    _check(lambda a, b, c: minitorch.cat([a.sin(), b, c * 2], dim=1), backend, a, b, c)
    _check(lambda a, b: minitorch.cat([a, a.cos(), b.T.T], dim=-1), backend, a, b)
    rows = _rand(3, 3, seed=5)
    _check(lambda a, r: minitorch.cat([r, a, r], dim=0).relu(), backend, a, rows)
    empty = minitorch.zeros(0, requires_grad=False)  # a 1-d empty input is skipped, as PyTorch
    _check(lambda a, e: minitorch.cat([a, e, a]), backend, a, empty)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cat_promotes_its_inputs_as_eager_does(backend):
    a = _rand(2, 2, seed=6)
    b = minitorch.tensor([[1.0, 2.0]], dtype=minitorch.float64, requires_grad=True)
    _check(lambda a, b: minitorch.cat([a, b]), backend, a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_index_out_of_range_raises_eagers_error_compiled(backend):
    x = _rand(4, 5, requires_grad=False)
    bad = minitorch.tensor([[0, 5, 1]] * 4)
    with pytest.raises(IndexOutOfRangeError, match="index 5 is out of bounds"):
        minitorch.gather(x, 1, bad)
    with pytest.raises(IndexOutOfRangeError, match="index 5 is out of bounds") as raised:
        _compiled(lambda x, i: minitorch.gather(x, 1, i) + 1, backend, x, bad)
    assert f"(at {__file__}:" in str(raised.value)  # the user's file, not generated code
    with pytest.raises(IndexOutOfRangeError, match="index -6 is out of bounds"):
        _compiled(lambda x, i: minitorch.ops.index_tensor(x, i), backend, x, bad * -1 - 1)
    weight, ids = _rand(3, 2, requires_grad=False), minitorch.tensor([0, -1])
    with pytest.raises(IndexOutOfRangeError, match="index -1 is out of"):
        F.embedding(ids, weight)
    with pytest.raises(IndexOutOfRangeError, match="index -1 is out of"):
        _compiled(lambda w, i: F.embedding(i, w) * 2, backend, weight, ids)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_dropout_is_eagers_mask_bit_for_bit(backend):
    x = _rand(37, 29, seed=7)

    def fn(x):
        return F.dropout(x * 2, 0.3) + F.dropout(x, 0.5)

    minitorch.manual_seed(11)
    got, externs = _compiled(fn, backend, x)
    got.sum().backward()
    got_grad, x.grad = x.grad.numpy().copy(), None
    after_compiled = minitorch.ops.dropout_mask(x, 0.5).numpy()

    minitorch.manual_seed(11)
    want = fn(x)
    want.sum().backward()
    after_eager = minitorch.ops.dropout_mask(x, 0.5).numpy()

    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())
    np.testing.assert_array_equal(got_grad, x.grad.numpy())
    np.testing.assert_array_equal(after_compiled, after_eager)  # the generator moved as far
    if "int64" in get_backend(backend).dtypes:
        assert "dropout_keep" not in externs


def test_compiling_does_not_move_the_generator():
    """The driver runs the forward once eagerly when an output comes from an extern step (mm
    here) to learn its layout: that trial must not draw masks the user's call then misses."""
    x, w = _rand(5, 4, seed=9), _rand(3, 4, seed=10)

    def fn(x, w):
        return F.dropout(x, 0.5) @ w.T

    minitorch.manual_seed(4)
    got, _ = _compiled(fn, "llvm", x, w)
    minitorch.manual_seed(4)
    np.testing.assert_allclose(got.detach().numpy(), fn(x, w).detach().numpy(), rtol=1e-6)


def test_dropout_masks_differ_from_call_to_call_and_keep_1_minus_p():
    minitorch.manual_seed(0)
    x = minitorch.ones(200, 100)
    compiled = minitorch.compile(lambda x: F.dropout(x, 0.25), backend="numpy")
    first, second = compiled(x).numpy(), compiled(x).numpy()
    assert not np.array_equal(first, second)
    for mask in (first != 0, second != 0):
        assert abs(mask.mean() - 0.75) < 0.01  # 20000 draws: 4 standard deviations is 0.012


@pytest.mark.parametrize("backend", ["inductor", "aot_eager", "eager"])
def test_a_constant_index_out_of_range_raises_even_where_the_read_is_dead(backend):
    """x[[0, 1, 0]] on one element raises eagerly; compiled, the unused read is dead code, so
    its indices (known while tracing) are checked as it is traced (found by the fuzzer)."""

    def program(y):
        unused = y[[0, 1, 0]]  # noqa: F841
        return y * 2

    y = minitorch.tensor([1.0])
    with pytest.raises(IndexOutOfRangeError, match="index 1 is out of bounds") as eager:
        program(y)
    reset()
    with pytest.raises(IndexOutOfRangeError, match="index 1 is out of bounds") as compiled:
        minitorch.compile(program, backend=backend)(y)
    assert str(compiled.value) == str(eager.value)
    y = minitorch.tensor([1.0, 2.0])  # in range: runs
    np.testing.assert_array_equal(
        minitorch.compile(program, backend=backend)(y).numpy(), [2.0, 4.0]
    )


def test_a_dead_constant_index_is_checked_after_an_eager_call_of_the_same_shapes():
    """The check does not ride on the shape rule, which the meta cache serves by shapes alone."""
    y = minitorch.tensor([1.0, 2.0, 3.0])
    y[[0, 2, 0]]  # eager, in range: the meta cache now knows this signature

    def program(y):
        unused = y[[0, 5, 0]]  # noqa: F841
        return y * 2

    reset()
    with pytest.raises(IndexOutOfRangeError, match="index 5 is out of bounds for dimension 0"):
        minitorch.compile(program, backend="eager")(y)
