"""Small Tensor methods that public programs call (found by porting them, tests/models): each
against numpy or PyTorch's documented behaviour, eager and compiled."""

import numpy as np
import pytest

import minitorch
from minitorch._dynamo import explain
from minitorch.errors import AutogradError


def test_masked_fill_writes_in_place_and_its_gradient_skips_the_filled_entries():
    x = minitorch.randn(3, 4, requires_grad=True)
    mask = minitorch.tensor([True, False, True, False])  # broadcasts over the rows
    y = x * 1
    assert y.masked_fill_(mask, -1.0) is y
    np.testing.assert_array_equal(
        y.detach().numpy(), np.where(mask.numpy(), -1.0, x.detach().numpy())
    )
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(~mask.numpy(), (3, 4)))
    with pytest.raises(AutogradError, match="leaf"):
        x.masked_fill_(mask, 0.0)


def test_type_as_and_is_floating_point():
    x = minitorch.arange(3)
    doubles = x.type_as(minitorch.zeros(1, dtype=minitorch.float64))
    assert doubles.dtype is minitorch.float64 and doubles.tolist() == [0.0, 1.0, 2.0]
    assert not x.is_floating_point() and doubles.is_floating_point()


def masked_then_cast(x, like):
    y = x * 2
    y.masked_fill_(y > 0, 0.0)
    return y.type_as(like) if x.is_floating_point() else y


def test_the_methods_compile_whole_and_equal_eager():
    x, like = minitorch.randn(3, 4), minitorch.zeros(1, dtype=minitorch.float64)
    report = explain(masked_then_cast)(x, like)
    assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)
    got = minitorch.compile(masked_then_cast)(x, like)
    want = masked_then_cast(x, like)
    assert got.dtype is want.dtype is minitorch.float64
    np.testing.assert_array_equal(got.numpy(), want.numpy())
