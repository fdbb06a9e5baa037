"""autograd.Function: a user op with a hand-written backward, checked against built-in ops."""

import numpy as np
import pytest

import minitorch
from minitorch.autograd import Function


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class MulAdd(Function):
    """x * w + b, with a Python number `scale` that gets no gradient."""

    @staticmethod
    def forward(ctx, x, w, scale):
        ctx.save_for_backward(x, w)
        ctx.scale = scale
        return x * w * scale

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        return grad * w * ctx.scale, grad * x * ctx.scale, None


def test_a_function_matches_the_builtin_op_and_its_gradient():
    x = minitorch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward" and y.requires_grad
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * x.detach().numpy()), rtol=1e-6)


def test_several_inputs_and_a_non_tensor_argument():
    x = minitorch.rand(3, requires_grad=True)
    w = minitorch.rand(3, requires_grad=True)
    MulAdd.apply(x, w, 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * w.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), 3 * x.detach().numpy(), rtol=1e-6)


def test_forward_records_no_graph_of_its_own_and_no_grad_mode_is_respected():
    x = minitorch.rand(3, requires_grad=True)
    with minitorch.no_grad():
        assert Exp.apply(x).grad_fn is None
    assert Exp.apply(x).grad_fn.inputs == (x,)


def test_saved_tensors_are_freed_after_backward():
    x = minitorch.rand(3, requires_grad=True)
    y = Exp.apply(x).sum()
    y.backward()
    with pytest.raises(minitorch.AutogradError, match="second time"):
        y.backward()


def test_a_wrong_number_of_gradients_is_named():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(minitorch.AutogradError, match="returned 1 gradients, but forward took 2"):
        Bad.apply(minitorch.rand(2, requires_grad=True), minitorch.rand(2)).sum().backward()
