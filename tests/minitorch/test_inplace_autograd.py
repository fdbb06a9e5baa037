"""Autograd through in-place ops, as PyTorch does it: leaves that cannot be written, version
counters that catch overwritten saved tensors, histories rebased onto the in-place op, writes
through views (CopySlices), and the other autograd flags (retain_grad, detach_, ...).

Gradients are checked against the same computation written without in-place ops.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.errors import AutogradError, DTypeError

X = [1.0, -2.0, 3.0, 0.5]


def leaf(values=X):
    return minitorch.tensor(values, dtype=minitorch.float64, requires_grad=True)


def grad_of(program) -> list:
    """d(program(x).sum())/dx at X."""
    x = leaf()
    program(x).sum().backward()
    return x.grad.tolist()


# (in-place program, the same computation out of place)
PROGRAMS = {
    "add_": (lambda x: (x * 2).add_(1), lambda x: x * 2 + 1),
    "mul_ by a tensor": (lambda x: (x * 1).mul_(x), lambda x: x * x),
    "div_": (lambda x: (x + 5).div_(x * x + 1), lambda x: (x + 5) / (x * x + 1)),
    "clamp_": (lambda x: (x * 3).clamp_(-2.0, 4.0), lambda x: (x * 3).clamp(-2.0, 4.0)),
    "chain": (lambda x: (x * 1).add_(x).mul_(x).sub_(1), lambda x: (x + x) * x - 1),
    "zero_": (lambda x: (x * 2).zero_() + x, lambda x: x * 0 + x),
    "copy_": (lambda x: (x * 2).copy_(x.exp()), lambda x: x.exp()),
    "+= into a buffer": (lambda x: _accumulated(x), lambda x: x * 3 + x.sin()),
    "residual": (lambda x: _residual(x), lambda x: ((x * 2 + 1) + x).relu()),
    "setitem": (
        lambda x: _setitem(x),
        lambda x: minitorch.cat([x[:1] * 2, x[1:2] * 0 + 7, x[2:] * 2]),
    ),
    "setitem a tensor": (
        lambda x: _setitem_tensor(x),
        lambda x: minitorch.cat([x[:2] * 2, x[:2].exp()]),
    ),
    "through a view": (lambda x: _through_view(x), lambda x: minitorch.cat([x[:2], x[2:] * x[2:]])),
    "through a view of a view": (lambda x: _view_of_view(x), lambda x: _view_of_view_ref(x)),
    "base written, then view used": (lambda x: _stale_view(x), lambda x: x[1:] * 3),
    "old consumer": (lambda x: _old_consumer(x), lambda x: x * 2 + 1),
}


def _accumulated(x):
    buf = minitorch.zeros(4, dtype=minitorch.float64)  # a leaf that does not require grad
    buf += x
    buf += x * 2
    buf += x.sin()
    return buf


def _residual(x):
    out = x * 2 + 1
    out += x
    return out.relu()


def _setitem(x):
    y = x * 2
    y[1] = 7.0
    return y


def _setitem_tensor(x):
    y = minitorch.zeros(4, dtype=minitorch.float64)
    y[:2] = x[:2] * 2
    y[2:] = x[:2].exp()
    return y


def _through_view(x):
    y = x * 1
    tail = y[2:]
    tail.mul_(x[2:])  # writes y's memory: y's history becomes CopySlices
    return y


def _view_of_view(x):
    y = minitorch.stack([x, x * 10])  # (2, 4)
    v = y.T[1:]  # (3, 2), a view of a view
    v[:, 0].add_(v[:, 1])  # y[0, 1:] += y[1, 1:]
    return y.sum(0)


def _view_of_view_ref(x):
    return minitorch.cat([x[:1], x[1:] + x[1:] * 10]) + x * 10


def _stale_view(x):
    y = x * 1
    v = y[1:]  # made before the write below
    y.mul_(3)
    return v


def _old_consumer(x):
    y = x * 2
    z = y + 1  # consumed y's old value
    y.mul_(5)
    return z


@pytest.mark.parametrize("name", PROGRAMS)
def test_gradients_match_the_out_of_place_computation(name):
    in_place, reference = PROGRAMS[name]
    np.testing.assert_allclose(in_place(leaf()).tolist(), reference(leaf()).tolist(), rtol=1e-12)
    np.testing.assert_allclose(grad_of(in_place), grad_of(reference), rtol=1e-12)


def test_the_history_is_rebased_onto_the_in_place_op():
    x = leaf()
    y = x * 2
    assert y.grad_fn.name() == "MulBackward0"
    y.add_(1)
    assert y.grad_fn.name() == "AddBackward0" and not y.is_leaf
    y.sum().backward()
    assert x.grad.tolist() == [2.0] * 4


def test_a_write_through_a_view_gives_the_base_copy_slices():
    y = leaf() * 1
    y[1:].mul_(2)
    assert y.grad_fn.name() == "CopySlices"
    buf = minitorch.zeros(3)  # no grad before the write; grad after
    assert not buf.requires_grad
    early = buf[1:]  # a view made before its base had a history
    buf[2:] = leaf([5.0])
    assert buf.requires_grad and early.requires_grad
    assert early.grad_fn.name() == "IndexBackward0"


def test_leaves_that_require_grad_cannot_be_written():
    x = leaf()
    with pytest.raises(
        AutogradError,
        match="a leaf Variable that requires grad is being used in an in-place operation",
    ):
        x.add_(1)
    with pytest.raises(AutogradError, match="a view of a leaf Variable that requires grad"):
        x[1:].zero_()
    with pytest.raises(AutogradError, match="a leaf Variable"):
        x[0] = 1.0
    assert x.tolist() == X and x._version == 0
    with minitorch.no_grad():  # as an optimizer step does
        x.sub_(1)
        x[0] = 0.0
    assert x.tolist() == [0.0, -3.0, 2.0, -0.5] and x._version == 2 and x.is_leaf


def test_a_view_made_in_no_grad_mode_cannot_be_written_with_grad_on():
    y = leaf() * 1
    with minitorch.no_grad():
        v = y[:2]
    assert v.requires_grad and v.grad_fn is None  # as PyTorch's: [Note: views made under no_grad]
    with pytest.raises(AutogradError, match="created in no_grad mode"):
        v.add_(1)


@pytest.mark.parametrize(
    "program, saved",
    [
        (lambda x: _overwrite_after(x, lambda y: y.exp(), output=True), "output 0 of ExpBackward0"),
        (lambda x: _overwrite_after(x, lambda y: y.sin(), output=False), "input 0 of SinBackward0"),
        (lambda x: _overwrite_after(x, lambda y: y * y, output=False), "input 1 of MulBackward0"),
    ],
)
def test_overwriting_a_saved_tensor_fails_backward_with_the_versions(program, saved):
    with pytest.raises(
        AutogradError,
        match=(
            "one of the variables needed for gradient computation has been modified by an inplace "
            rf"operation: \[float64 \[4\]\], {saved}, is at version 1; expected version 0 instead"
        ),
    ):
        program(leaf()).sum().backward()


def _overwrite_after(x, op, output: bool):
    y = x * 1
    out = op(y)
    (out if output else y).add_(1)
    return out


def test_a_formula_that_needs_only_shapes_survives_the_write():
    x = leaf()
    y = x * 1
    z = y + 1  # add's derivative does not read y
    y.add_(100)
    z.sum().backward()
    assert x.grad.tolist() == [1.0] * 4


def test_writes_without_grad_bump_the_version_too():
    x = leaf()
    y = x.exp()
    with minitorch.no_grad():
        y.mul_(2)  # exp's saved output changed: backward must refuse
    assert y.grad_fn.name() == "ExpBackward0" and y._version == 1
    with pytest.raises(AutogradError, match="is at version 1; expected version 0"):
        y.sum().backward()
    d = x.detach()
    d.add_(1)  # detach() shares the memory and the counter
    assert x._version == 1


def test_retain_grad():
    x = leaf()
    y = x * 2
    y.retain_grad()
    assert y.retains_grad
    (y * y).sum().backward()
    assert y.grad.tolist() == [4.0 * v for v in X]
    x.retain_grad()  # a leaf keeps its grad anyway
    with pytest.raises(AutogradError, match="requires_grad=False"):
        minitorch.ones(2).retain_grad()
    y = x * 2
    y.retain_grad()
    y.add_(1)  # the retained gradient follows the rebased history
    y.sum().backward()
    assert y.grad.tolist() == [1.0] * 4


def test_detach_in_place_and_requires_grad_flags():
    y = leaf() * 2
    with pytest.raises(AutogradError, match="only change requires_grad flags of leaf"):
        y.requires_grad_(False)
    with pytest.raises(AutogradError, match="can't detach views in-place"):
        y[1:].detach_()
    assert y.detach_() is y and y.is_leaf and not y.requires_grad
    with pytest.raises(DTypeError, match="only floating point tensors can require gradients"):
        minitorch.tensor([1, 2]).requires_grad_()
    z = minitorch.zeros(2)
    assert z.requires_grad_() is z and z.requires_grad and z.is_leaf


def test_backward_twice_through_an_in_place_op():
    x = leaf()
    y = x * 2
    y.mul_(3)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert x.grad.tolist() == [12.0] * 4


def test_a_product_with_a_number_saves_nothing_of_the_tensor():
    """`y * 0` needs no value of y for its gradient: writing y afterwards is fine, as in
    PyTorch (mul by a Python number saves nothing)."""
    x = minitorch.ones(3, requires_grad=True)
    y = x * 2
    z = y * 0
    y.add_(1)
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros(3, dtype=np.float32))


def test_a_quotient_written_in_place_still_has_gradients():
    """div's gradient reads its inputs, not its output, as PyTorch's does: clamping the
    quotient in place (a normalization clipped) leaves backward able to run."""
    x = leaf()
    y = x * 1
    q = y / (y * y + 1)
    q.clamp_(-0.4, 0.4)
    q.sum().backward()
    v = np.array(X)  # the clamp stops the gradient of 1.0 only (q = 0.5)
    want = np.where(np.abs(v / (v * v + 1)) <= 0.4, (1 - v * v) / (v * v + 1) ** 2, 0.0)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-12)


def test_a_product_with_a_mask_saves_nothing_of_the_tensor():
    """`y * mask` needs only the mask for y's gradient (the mask requires none): writing y
    afterwards is fine, as in PyTorch (dropout written out)."""
    x = leaf()
    y = x * 1
    z = y * (x.detach() > 0).double()
    y.add_(1)
    z.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), (np.array(X) > 0).astype(np.float64))
