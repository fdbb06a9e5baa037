"""int32, int64 and bool through the whole compiler: compiled programs equal eager mode.

The conformance suite (tests/conformance) grades each loop-IR op on integers against the
reference interpreter; these tests hold whole programs, lowered from real graphs, to eager
mode: the same values and dtypes, and no extern step where an integer once sent one.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from ir.segments import ExternStep
from minitorch.compile.inductor import compile_graph
from tracer.aot import make_fx, partition_joint, trace_joint

BACKENDS = ["inductor", "interpreter", "numpy"]  # inductor: the default, LLVM on the CPU

I64 = minitorch.tensor([[3, -7, 0], [2**40, -1, 5]])
I32 = minitorch.tensor([[3, -7, 0], [9, -1, 2**31 - 1]], dtype=minitorch.int32)
FLOATS = minitorch.tensor([[1.5, -2.7, 0.0], [3.9, -0.5, 1e9]])


def _compiled(fn, *inputs, backend="inductor"):
    minitorch._dynamo.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a backend failure would fall back with a warning
        return minitorch.compile(fn, backend=backend, fullgraph=True)(*inputs)


def _assert_same(got, want):
    for g, w in zip(got, want, strict=True):
        assert g.dtype is w.dtype
        np.testing.assert_array_equal(g.numpy(), w.numpy())


PROGRAMS = {
    # + - * wrap around at the extremes, as eager's numpy kernels do
    "arithmetic": (lambda a: (a + a * 3 - 1, a * a, -a, a.abs(), a**3), [I64]),
    "arithmetic_int32": (lambda a: (a + a * 3 - 1, a * a, -a, a.abs(), a**3), [I32]),
    # int64 + int32 promotes; int / int is true division (a float); comparisons are signed
    "promotion": (lambda a, b: (a + b, a / b, a > b, a == -b, a < 0.5), [I64, I32 + 10]),
    # float -> int truncates toward zero; any -> bool is != 0
    "casts": (lambda x: (x.long(), x.int(), x.bool(), x.long().bool(), I32.float()), [FLOATS]),
    # sums of int32 and bool are int64, as PyTorch's
    "sums": (lambda a, m: (a.sum(), a.sum(dim=1), m.sum(dim=0), (a > 2).sum()), [I32, I64 > 0]),
    "select": (
        lambda a, m: (minitorch.where(m, a, 0), minitorch.maximum(a, a * 2 - 3), a.clamp(-2, 4)),
        [I64, I64 > 0],
    ),
    "int_to_the_power": (lambda a: (2**a, a**0, a**2), [minitorch.tensor([0, 1, 5, 62])]),
    # NaN, infinities and floats beyond the integer's range: the smallest integer, as x86 and
    # numpy give it (LLVM's fptosi alone made them poison: `nan.long() == 0` came out True)
    "casts_out_of_range": (
        lambda x: (x.long(), x.int(), x.long() == 0, (x * 0).int() == 0),
        [
            minitorch.tensor(
                [
                    np.nan,
                    np.inf,
                    -np.inf,
                    1e20,
                    -1e20,
                    2.0**31,
                    -(2.0**31),
                    2.0**63,
                    -(2.0**63),
                    -3.7,
                ]
            )
        ],
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_integer_programs_compile_to_eager_values(name, backend):
    fn, inputs = PROGRAMS[name]
    with np.errstate(invalid="ignore"):  # numpy's warning for NaN and out-of-range casts
        _assert_same(_compiled(fn, *inputs, backend=backend), fn(*inputs))


def _joint_externs(fn, *inputs):
    """The extern steps of fn's forward and backward graphs, compiled by the default backend."""
    parts = partition_joint(*trace_joint(fn, list(inputs)))
    steps = []
    for graph in (parts.forward, parts.backward):
        steps += [s for s in compile_graph(graph).steps if isinstance(s, ExternStep)]
    return steps


def test_softmax_forward_and_backward_run_no_extern_step():
    x = minitorch.randn(4, 5, requires_grad=True)
    # amax's backward counts the ties, sum(x == amax) in int64: once an extern step, as amax
    # itself was
    assert _joint_externs(lambda x: (minitorch.softmax(x, dim=-1),), x) == []
    assert _joint_externs(lambda x: (F.log_softmax(x, dim=-1),), x) == []


def _nll_of_log_softmax(logits, labels):  # cross-entropy, spelled in what capture takes whole
    return -F.log_softmax(logits, dim=-1).gather(1, labels.reshape(-1, 1)).mean()


def test_a_loss_over_int64_labels_matches_eager_forward_and_backward():
    logits = minitorch.randn(6, 5, requires_grad=True)
    labels = minitorch.tensor([1, 0, 4, 2, 2, 3])
    eager = _nll_of_log_softmax(logits, labels)
    eager.backward()
    expected = logits.grad.numpy().copy()
    logits.grad = None
    loss = _compiled(_nll_of_log_softmax, logits, labels)
    loss.backward()
    np.testing.assert_allclose(loss.item(), eager.item(), rtol=1e-6)
    np.testing.assert_allclose(logits.grad.numpy(), expected, rtol=1e-5, atol=1e-7)


def test_cross_entropy_runs_no_extern_step_for_its_labels():
    logits = minitorch.randn(6, 5, requires_grad=True)
    labels = minitorch.tensor([1, 0, 4, 2, 2, 3])
    externs = _joint_externs(lambda x, y: (F.cross_entropy(x, y),), logits, labels)
    # the labels' ignore_index mask and the tie counts compile; what runs eagerly is an op
    # with no lowering, or a view only such an op reads
    reasons = [s.reason for s in externs]
    assert not [r for r in reasons if "does not compile" in r], reasons


def test_a_graph_of_integers_is_one_kernel():
    gm = make_fx(lambda a, b: (((a * 2 + b) > 3).sum(dim=1),))(I64, I32)
    compiled = compile_graph(gm)
    assert len(compiled.steps) == 1 and len(compiled.kernels) == 1
    _assert_same(compiled(I64, I32), (((I64 * 2 + I32) > 3).sum(dim=1),))
