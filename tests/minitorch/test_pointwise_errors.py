"""Bad input to the pointwise ops: minitorch errors that name the op, the shapes or the dtype.

A composite (gt, clamp, masked_fill, ...) reports under its own name, not under the name of
an op it decomposes into.
"""

from __future__ import annotations

import pytest

import minitorch


def t(*shape, dtype=minitorch.float32):
    return minitorch.zeros(*shape, dtype=dtype)


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda: t(2) == t(3), "eq"),
        (lambda: t(2) != t(3), "ne"),
        (lambda: t(2) < t(3), "lt"),
        (lambda: t(2) <= t(3), "le"),
        (lambda: t(2) > t(3), "gt"),
        (lambda: t(2) >= t(3), "ge"),
        (lambda: minitorch.maximum(t(2, 2), t(3)), "maximum"),
        (lambda: minitorch.minimum(t(2, 2), t(3)), "minimum"),
        (lambda: minitorch.where(t(2, dtype=minitorch.bool), t(3), 0.0), "where"),
        (lambda: minitorch.clamp(t(2), min=t(3)), "clamp"),
        (lambda: minitorch.clamp(t(2, 2), min=t(2), max=t(3)), "clamp"),
        (lambda: t(2).masked_fill(t(3, dtype=minitorch.bool), 1.0), "masked_fill"),
        (lambda: t(2) ** t(3), "pow"),
    ],
)
def test_shape_mismatches_name_the_op_and_both_shapes(call, op):
    with pytest.raises(minitorch.ShapeError) as info:
        call()
    message = str(info.value)
    assert message.startswith(f"{op}:"), message
    assert "(3,)" in message and "(2," in message
    assert __file__ in message  # the user's line


@pytest.mark.parametrize(
    "call, words",
    [
        (
            lambda: minitorch.where(t(2), t(2), t(2)),
            "where: expected a bool condition, got float32",
        ),
        (lambda: t(2).masked_fill(t(2), 1.0), "masked_fill: expected a bool mask, got float32"),
        (lambda: minitorch.abs(t(2, dtype=minitorch.bool)), "abs: not supported for dtype bool"),
        (lambda: minitorch.relu(t(2, dtype=minitorch.bool)), "relu: not supported for dtype bool"),
        (
            lambda: minitorch.clamp(t(2, dtype=minitorch.bool), 0),
            "clamp: not supported for dtype bool",
        ),
        (lambda: t(2, dtype=minitorch.int64) ** -1, "integers to negative integer powers"),
        (lambda: t(2, dtype=minitorch.bool) ** t(2, dtype=minitorch.bool), "pow: not supported"),
        (
            lambda: minitorch.ops.gelu(t(2, dtype=minitorch.int64)),
            "gelu: expected a floating point tensor, got int64",
        ),
        (
            lambda: minitorch.ops.silu(t(2, dtype=minitorch.int32)),
            "silu: expected a floating point",
        ),
        (lambda: minitorch.maximum(t(2), 1.0), "maximum(): expected a Tensor, got float"),
        (lambda: minitorch.pow(2, 3), "pow(): expected a Tensor, got int and int"),
    ],
)
def test_bad_dtypes_and_arguments_are_dtype_errors(call, words):
    with pytest.raises(minitorch.DTypeError, match=words.replace("(", r"\(").replace(")", r"\)")):
        call()


def test_other_bad_arguments():
    with pytest.raises(minitorch.MinitorchError, match="clamp: at least one of 'min' or 'max'"):
        minitorch.clamp(t(2))
    with pytest.raises(minitorch.MinitorchError, match="approximate must be 'none' or 'tanh'"):
        minitorch.ops.gelu(t(2), approximate="fast")
    with pytest.raises(minitorch.ShapeError, match=r"masked_fill: the value must be .* \(2,\)"):
        t(2).masked_fill(t(2, dtype=minitorch.bool), t(2))


def test_a_failed_comparison_leaves_nothing_behind():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(minitorch.ShapeError):
        minitorch.where(x > 1, x, t(3))
    assert x.grad is None and x.tolist() == [1.0, 2.0]
