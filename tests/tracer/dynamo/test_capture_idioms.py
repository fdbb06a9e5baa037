"""Idioms of real models captured whole: `max(dim)` results as named tuples, in-place ops on
intermediates that require grad (`out += identity`, `ReLU(inplace=True)`). Each compiles to one
graph with no break and equals eager (values, input mutations, gradients)."""

from __future__ import annotations

import pytest

import minitorch
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch._dynamo import explain
from tests.tracer.dynamo.capture_check import check_whole

pytestmark = pytest.mark.capture


def _x(requires_grad: bool = True):
    def make():
        minitorch.manual_seed(0)
        return (minitorch.randn(4, 6, requires_grad=requires_grad),)

    return make


# ---- max / min / topk results --------------------------------------------------------------


def softmax_by_max_index(x):
    return (x - x.max(dim=-1, keepdim=True)[0]).exp()


def softmax_by_values(x):
    return (x - x.max(-1, keepdim=True).values).exp()


def unpacked(x):
    v, i = x.min(-1)
    return v * 2, i


def topk_fields(x):
    top = x.topk(2)
    return top.values.sum(-1), top.indices


def returned_whole(x):
    return (x * 2).max(0)


@pytest.mark.parametrize(
    "fn", [softmax_by_max_index, softmax_by_values, unpacked, topk_fields, returned_whole]
)
def test_values_indices_pairs_are_named_tuples(fn):
    check_whole(fn, _x())


def test_a_returned_pair_keeps_its_type_and_names():
    x = minitorch.randn(3, 4)
    out = minitorch.compile(returned_whole, backend="eager")(x)
    assert type(out) is type(x.max(0))
    assert out.indices.dtype is minitorch.int64


# ---- in-place ops on intermediates ---------------------------------------------------------


def residual(x):
    out = x * 2
    out += x  # eager: AddBackward of the old `out`, which no formula read
    return out.sin()


def relu_inplace(x):
    return F.relu(x * 3 - 1, inplace=True) * 2


RELU = nn.ReLU(inplace=True)


def relu_module(x):
    y = RELU(x @ x.t()) * 1  # relu saves its output: writing RELU's own would fail backward()
    y.add_(1).mul_(2)
    return y


def clamp_then_sub(x):
    y = x.sin()  # sin's formula reads its input, not its output: the write is safe
    y.clamp_(min=0.0).sub_(0.5)
    return y


def masked_write(x):
    y = x * 2
    y[y < 0] = 0  # the mask does not require grad: eager recorded nothing that saved y
    return y


LEAKY = nn.LeakyReLU(0.2, inplace=True)  # calls F.leaky_relu(x, 0.2, True): positional


def leaky_relu_inplace(x):
    return LEAKY(x * 3) + F.relu(x - 1, True) * F.leaky_relu(x + 1, 0.1, inplace=True)


def writes_into_copies(x):
    t = x.clone()  # clone, cat, stack and roll copy (the rest of functional.views makes views)
    t[0] = 1
    u = minitorch.cat([t, x]).roll(1, 0)
    u *= 2
    return u


@pytest.mark.parametrize(
    "fn",
    [
        residual,
        relu_inplace,
        relu_module,
        clamp_then_sub,
        masked_write,
        writes_into_copies,
        leaky_relu_inplace,
    ],
)
def test_in_place_on_intermediates_that_require_grad(fn):
    check_whole(fn, _x())


def overwrites_a_saved_output(x):
    y = x.exp()  # exp's derivative reads its output: eager's backward refuses after the write
    y += 1
    return y


def overwrites_a_read_value(x):
    y = x * 2
    z = y.sin()  # sin saved y
    y += 1
    return z, y


def masks_a_saved_output(x):
    y = x.exp()
    y[y > 1] = 0  # the mask saved nothing, but exp saved its output
    return y


def overwrites_a_relu_output(x):
    y = F.relu(x * 2, inplace=True)  # PyTorch's relu saves its output, though ours reads its
    y.add_(1)  # mask ([Note: outputs PyTorch saves])
    return y


@pytest.mark.parametrize(
    "fn",
    [
        overwrites_a_saved_output,
        overwrites_a_read_value,
        masks_a_saved_output,
        overwrites_a_relu_output,
    ],
)
def test_a_write_autograd_may_need_is_not_functionalized(fn):
    report = explain(fn)(minitorch.randn(3, requires_grad=True))
    assert report.graph_break_count >= 1
    assert any("requires grad" in b.reason for b in report.break_reasons)


def test_eager_errors_stay():
    """A saved output overwritten: compiled raises eager's error at backward()."""
    x = minitorch.randn(3, requires_grad=True)
    compiled = minitorch.compile(overwrites_a_saved_output)
    with pytest.raises(minitorch.errors.AutogradError, match="modified by an inplace"):
        compiled(x).sum().backward()


def overwrites_a_softmax_no_gradient_reaches(z):
    out = z * z
    dead = z.softmax(0)
    dead.mul_(2)  # PyTorch's softmax saved `dead`, but no gradient of `out` goes through it
    return out


def overwrites_a_softmax_a_gradient_reaches(z):
    weights = z.softmax(0)
    out = weights * 3
    weights.mul_(2)
    return out


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
@pytest.mark.parametrize(
    "fn", [overwrites_a_softmax_no_gradient_reaches, overwrites_a_softmax_a_gradient_reaches]
)
def test_a_kept_output_is_checked_only_where_eagers_backward_goes(fn, backend):
    # found by the fuzzer (seed 202217): the check ran whether or not a gradient reached it
    def outcome(f):
        z = minitorch.tensor([-1.0, 0.5], dtype=minitorch.float64, requires_grad=True)
        try:
            f(z).sum().backward()
        except minitorch.errors.AutogradError:
            return "AutogradError"
        return z.grad.numpy().tolist()

    assert outcome(minitorch.compile(fn, backend=backend)) == outcome(fn)


def writes_a_leaf(x):
    return x.add_(1)


def writes_a_view_of_a_leaf(x):
    y = x.t()
    return y.add_(1)


def writes_what_dropout_passed_through(x):
    y = F.dropout(x, 0.0)  # x itself
    y += 1
    return y


@pytest.mark.parametrize(
    "fn", [writes_a_leaf, writes_a_view_of_a_leaf, writes_what_dropout_passed_through]
)
def test_in_place_on_a_leaf_that_requires_grad_raises_as_in_eager(fn):
    x = minitorch.randn(3, 2, requires_grad=True)
    with pytest.raises(minitorch.errors.MinitorchError) as eager:
        fn(x)
    with pytest.raises(type(eager.value)):
        minitorch.compile(fn)(x)
