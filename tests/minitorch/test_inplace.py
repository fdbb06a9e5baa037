"""In-place ops: values against numpy, PyTorch's dtype and shape rules, and failed ops that
leave the tensor unchanged. Autograd through in-place ops is in test_inplace_autograd.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.device import cuda_is_available
from minitorch.errors import DTypeError, MinitorchError, ShapeError

A = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=np.float32)
B = np.array([2.0, -0.5, 4.0], dtype=np.float32)


@pytest.mark.parametrize(
    "name, call, reference",
    [
        ("add_", lambda x, y: x.add_(y), lambda a, b: a + b),
        ("add_ alpha", lambda x, y: x.add_(y, alpha=2), lambda a, b: a + 2 * b),
        ("sub_", lambda x, y: x.sub_(y), lambda a, b: a - b),
        ("sub_ alpha", lambda x, y: x.sub_(y, alpha=-1), lambda a, b: a + b),
        ("mul_", lambda x, y: x.mul_(y), lambda a, b: a * b),
        ("div_", lambda x, y: x.div_(y), lambda a, b: a / b),
        ("clamp_", lambda x, y: x.clamp_(-1.0, 2.0), lambda a, b: np.clip(a, -1.0, 2.0)),
        ("clamp_ min", lambda x, y: x.clamp_(min=0.0), lambda a, b: np.maximum(a, 0.0)),
        ("zero_", lambda x, y: x.zero_(), lambda a, b: np.zeros_like(a)),
        ("fill_", lambda x, y: x.fill_(2.5), lambda a, b: np.full_like(a, 2.5)),
        (
            "fill_ 0-d",
            lambda x, y: x.fill_(minitorch.tensor(-3.0)),
            lambda a, b: np.full_like(a, -3),
        ),
        ("copy_", lambda x, y: x.copy_(y), lambda a, b: np.broadcast_to(b, a.shape)),
        ("+=", lambda x, y: x.__iadd__(y), lambda a, b: a + b),
        ("-=", lambda x, y: x.__isub__(y), lambda a, b: a - b),
        ("*=", lambda x, y: x.__imul__(y), lambda a, b: a * b),
        ("/=", lambda x, y: x.__itruediv__(y), lambda a, b: a / b),
        ("+= scalar", lambda x, y: x.__iadd__(3), lambda a, b: a + 3),
        (
            "*= 0-d",
            lambda x, y: x.__imul__(minitorch.tensor(2.0, dtype=minitorch.float64)),
            lambda a, b: a * 2,
        ),
    ],
)
def test_in_place_ops_match_numpy(name, call, reference):
    x = minitorch.tensor(A)
    memory = x.data_ptr()
    out = call(x, minitorch.tensor(B))
    assert out is x and x.data_ptr() == memory and x.dtype is minitorch.float32
    np.testing.assert_allclose(x.numpy(), reference(A, B), rtol=1e-6)
    assert x._version == 1


def test_operators_rebind_to_the_same_tensor():
    x = minitorch.ones(2)
    y = x
    y += 1
    y *= minitorch.tensor([2.0, 3.0])
    y -= 1
    y /= 2
    assert y is x and x.tolist() == [1.5, 2.5] and x._version == 4


def test_integer_and_bool_tensors():
    x = minitorch.tensor([1, 2, 3])
    x += 2
    x *= minitorch.tensor([1, 2, 3], dtype=minitorch.int32)
    assert x.tolist() == [3, 8, 15] and x.dtype is minitorch.int64
    x.fill_(1.9)  # fill_ and copy_ convert, as PyTorch does
    assert x.tolist() == [1, 1, 1]
    x.copy_(minitorch.tensor([0.5, 2.5, -1.5]))
    assert x.tolist() == [0, 2, -1]
    m = minitorch.tensor([True, False])
    m.copy_(minitorch.tensor([0, 3]))
    assert m.tolist() == [False, True] and m.dtype is minitorch.bool


def test_a_wider_float_result_is_converted_back():
    x = minitorch.ones(2)
    x += minitorch.tensor([0.1, 0.2], dtype=minitorch.float64)
    assert x.dtype is minitorch.float32
    np.testing.assert_allclose(x.numpy(), [1.1, 1.2], rtol=1e-6)


@pytest.mark.parametrize(
    "make, call, error, message",
    [
        (
            lambda: minitorch.tensor([1, 2]),
            lambda x: x.add_(1.5),
            DTypeError,
            "add_: result type float32 can't be cast to the desired output type int64",
        ),
        (
            lambda: minitorch.tensor([1, 2]),
            lambda x: x.div_(2),
            DTypeError,
            "div_: result type float32 can't be cast to the desired output type int64",
        ),
        (
            lambda: minitorch.tensor([1, 2], dtype=minitorch.int32),
            lambda x: x.mul_(minitorch.tensor([0.5, 1.0])),
            DTypeError,
            "result type float32 can't be cast to the desired output type int32",
        ),
        (
            lambda: minitorch.tensor([True]),
            lambda x: x.add_(1),
            DTypeError,
            "result type int64 can't be cast to the desired output type bool",
        ),
        (
            lambda: minitorch.zeros(3),
            lambda x: x.add_(minitorch.ones(2, 3)),
            ShapeError,
            r"add_: output with shape \(3,\) doesn't match the broadcast shape \(2, 3\)",
        ),
        (
            lambda: minitorch.zeros(3),
            lambda x: x.sub_(minitorch.ones(2)),
            ShapeError,
            r"sub: shapes \(3,\) and \(2,\) cannot be broadcast",
        ),
        (
            lambda: minitorch.zeros(3),
            lambda x: x.copy_(minitorch.ones(2)),
            ShapeError,
            r"value tensor of shape \(2,\) cannot be broadcast to indexing result of shape \(3,\)",
        ),
        (
            lambda: minitorch.zeros(3),
            lambda x: x.fill_(minitorch.ones(2)),
            ShapeError,
            r"fill_ only supports a 0-d value tensor, got one of shape \(2,\)",
        ),
        (
            lambda: minitorch.zeros(1).expand(3),
            lambda x: x.add_(1),
            MinitorchError,
            "more than one element of the written-to tensor refers to a single memory location",
        ),
    ],
)
def test_a_failed_in_place_op_changes_nothing(make, call, error, message):
    x = make()
    before = x.clone()
    with pytest.raises(error, match=message):
        call(x)
    assert x.tolist() == before.tolist() and x.dtype is before.dtype and x._version == 0


def test_copy_between_devices_and_from_views():
    x = minitorch.zeros(2, 3)
    x.copy_(minitorch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]).T)  # a strided source
    assert x.tolist() == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]
    x.copy_(x.T.T)  # a source that is the destination itself
    assert x.tolist() == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]
    x[0].copy_(x[1])  # one row of a tensor into another
    assert x.tolist() == [[2.0, 4.0, 6.0], [2.0, 4.0, 6.0]]
    if cuda_is_available():
        y = minitorch.zeros(2, 3, device="cuda")
        y.copy_(x)
        assert y.device.type == "cuda" and y.cpu().tolist() == x.tolist()
