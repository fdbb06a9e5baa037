"""Eager semantics the fuzzer found differing from PyTorch, each pinned to PyTorch's documented
behaviour: numpy scalars as Python numbers, writes into a view of an expanded tensor, saved
outputs overwritten in place, and views made under no_grad."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch.errors import AutogradError, MinitorchError

BACKENDS = ["eager", "aot_eager", "inductor"]

# ---- numpy scalars are Python numbers ([Note: numpy scalars] in minitorch/dispatch.py) -----

NUMPY_SCALARS = [np.float32(2.5), np.float64(2.5), np.int64(3), np.int32(-2), np.bool_(True)]
OPERATORS = {
    "mul": lambda x, s: x * s,
    "rmul": lambda x, s: s * x,
    "add": lambda x, s: x + s,
    "rsub": lambda x, s: s - x,
    "truediv": lambda x, s: x / s,
    "pow": lambda x, s: x**s,
    "lt": lambda x, s: x < s,
    "rge": lambda x, s: s >= x,
    "eq": lambda x, s: x == s,
    "gt": lambda x, s: x > s,
    "clamp": lambda x, s: x.clamp(min=s),
    "masked_fill": lambda x, s: x.masked_fill(x > 0, s),
    "where": lambda x, s: minitorch.where(x > 0, x, s),
    "function": lambda x, s: minitorch.mul(x, s),
}


@pytest.mark.parametrize("scalar", NUMPY_SCALARS, ids=lambda s: type(s).__name__)
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.int64])
@pytest.mark.parametrize("op", OPERATORS)
def test_numpy_scalar_is_a_python_number(op, dtype, scalar):
    """Same values and dtype as with scalar.item(): float32 * np.float64(2) is float32."""
    if dtype is minitorch.int64 and op == "pow" and scalar < 0:
        pytest.skip("an integer to a negative power is an error either way")
    x = minitorch.tensor([1, -2, 3], dtype=dtype)
    got, want = OPERATORS[op](x, scalar), OPERATORS[op](x, scalar.item())
    assert got.dtype is want.dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())  # NaN equals NaN


def test_numpy_scalar_in_place_and_writes():
    x = minitorch.tensor([1.0, 2.0, 3.0])
    x += np.float64(1)
    x.mul_(np.int64(2))
    x[0] = np.float32(7)
    x[1:].fill_(np.float32(0.5))
    assert x.dtype is minitorch.float32
    assert x.tolist() == [7.0, 0.5, 0.5]


@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_scalar_compiled(backend):
    scale = np.float32(2.0)

    def program(x, shift):
        return x * scale + shift - np.float64(1) * x

    x = minitorch.tensor([1.0, -2.0])
    got = minitorch.compile(program, backend=backend)(x, np.int64(3))
    assert got.dtype is minitorch.float32
    assert got.tolist() == program(x, 3).tolist() == [4.0, 1.0]


# ---- a write into a view of an expanded tensor -------------------------------------------
# PyTorch refuses a write only where the written tensor's own elements overlap; one row of an
# expanded tensor does not, and the write reaches the expanded tensor's memory (numpy's view is
# read-only: minitorch/inplace.py, _writeable_alias).

WRITES = {  # write -> x's values after it, from x = [5.]
    "zero_": (lambda v: v.zero_(), 0.0),
    "fill_": (lambda v: v.fill_(1.0), 1.0),
    "copy_": (lambda v: v.copy_(minitorch.ones(())), 1.0),
    "add_": (lambda v: v.add_(1.0), 6.0),
    "setitem": (lambda v: v.__setitem__((), 2.0), 2.0),
}


@pytest.mark.parametrize("write", WRITES)
def test_write_into_one_element_of_an_expanded_tensor_reaches_its_memory(write):
    x = minitorch.tensor([5.0])
    expanded = x.expand(3)
    fn, value = WRITES[write]
    fn(expanded[0])
    assert x.tolist() == [value] and expanded.tolist() == [value] * 3
    assert x._version == 1


def test_write_into_a_row_of_an_expanded_matrix():
    x = minitorch.zeros(2)
    x.expand(3, 2)[1].copy_(minitorch.tensor([1.0, 2.0]))
    x.expand(3, 2)[2][1] = 7.0
    assert x.tolist() == [1.0, 7.0]


@pytest.mark.parametrize("write", [lambda v: v.zero_(), lambda v: v.add_(1.0)])
def test_write_into_overlapping_elements_is_a_minitorch_error(write):
    x = minitorch.zeros(2)
    with pytest.raises(MinitorchError, match="single memory location.*clone"):
        write(x.expand(3, 2)[:2])
    assert x.tolist() == [0.0, 0.0]


def test_write_into_read_only_memory_is_a_minitorch_error():
    array = np.zeros(3, np.float32)
    array.flags.writeable = False
    with pytest.raises(MinitorchError, match="add_: .*read-only"):
        minitorch.from_numpy(array).add_(1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_write_into_an_expanded_view_compiled(backend):
    def program(x):
        x.expand(3)[0].fill_(2.0)
        return x + 1

    x = minitorch.zeros(1)
    assert minitorch.compile(program, backend=backend)(x).tolist() == [3.0]
    assert x.tolist() == [2.0]


# ---- views made under no_grad ([Note: views made under no_grad] in minitorch/tensor.py) ----


def _made_under_no_grad(x):
    with minitorch.no_grad():
        return x[0], x[1:].reshape(2), x * 2, x.detach()


def test_a_view_made_under_no_grad_requires_grad_but_has_no_history():
    x = minitorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v, reshaped, product, detached = _made_under_no_grad(x)
    assert v.requires_grad and v.grad_fn is None and v.is_leaf and v._base is x
    assert reshaped.requires_grad and reshaped.grad_fn is None
    assert not product.requires_grad  # not a view
    assert not detached.requires_grad  # detach() is no differentiable view


def test_a_view_made_under_no_grad_of_a_tensor_without_grad_does_not_require_grad():
    with minitorch.no_grad():
        v = minitorch.ones(3)[0]
    assert not v.requires_grad


def test_no_gradient_reaches_the_base_through_a_no_grad_view():
    x = minitorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    v, reshaped, _, _ = _made_under_no_grad(x)
    y = v * 2 + (reshaped * x[1:]).sum()  # recorded: v and reshaped require grad
    assert y.grad_fn is not None
    assert y.grad_fn.next_functions[0][0].next_functions == ((None, 0),)
    y.backward()
    assert v.grad is None and reshaped.grad is None
    assert x.grad.tolist() == [0.0, 2.0, 3.0]  # only through x[1:], made with grad on


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_grad_view_compiled(backend):
    def program(x):
        with minitorch.no_grad():
            v = x[0]
        return v * 2, v

    x = minitorch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y, v = minitorch.compile(program, backend=backend)(x)
    assert y.requires_grad and v.requires_grad and v.grad_fn is None
    y.backward()
    assert x.grad is None


@pytest.mark.parametrize(
    "write", [lambda v: v.mul_(2), lambda v: v.copy_(v + 1), lambda v: v.__setitem__(0, 1.0)]
)
def test_writing_a_no_grad_view_with_grad_on_is_an_error(write):
    x = minitorch.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
    with minitorch.no_grad():
        v = x[1:]
    with pytest.raises(AutogradError, match="created in no_grad mode"):
        write(v)
    with minitorch.no_grad():
        write(v)  # both in no_grad: an ordinary write, seen by x
    assert x[1:].tolist() != [2.0, 3.0]


def test_writing_a_value_that_requires_grad_into_a_no_grad_view_is_an_error():
    buf = minitorch.zeros(3)
    with minitorch.no_grad():
        head = buf[:2]
    w = minitorch.ones(2, requires_grad=True)
    with pytest.raises(AutogradError, match="created in no_grad mode"):
        head.copy_(w)
    assert buf.tolist() == [0.0, 0.0, 0.0] and not buf.requires_grad


# ---- an output PyTorch saves for backward, written in place ([Note: outputs PyTorch saves]) -

SAVE_THEIR_OUTPUT = {
    "relu": minitorch.relu,
    "sqrt": minitorch.sqrt,
    "rsqrt": minitorch.rsqrt,
    "reciprocal": minitorch.reciprocal,
    "exp": minitorch.exp,
    "tanh": minitorch.tanh,
    "sigmoid": minitorch.sigmoid,
    "softmax": lambda x: minitorch.softmax(x, 0),
    "log_softmax": lambda x: minitorch.log_softmax(x, 0),
}
NAMES = {"log_softmax": "LogSoftmax"}


def _overwrite_output(program, write=lambda y: y.mul_(3)):
    x = minitorch.tensor([0.5, 1.5, 2.0], requires_grad=True)
    y = program(x)
    z = y * 1.0
    write(y)
    z.sum().backward()


@pytest.mark.parametrize("backend", [None, *BACKENDS])
@pytest.mark.parametrize("name", SAVE_THEIR_OUTPUT)
def test_writing_an_output_saved_for_backward_fails_backward(name, backend):
    fn = SAVE_THEIR_OUTPUT[name]

    def program(x):
        return fn(x * 2 + 1)

    if backend is not None:
        program = minitorch.compile(program, backend=backend)
    saved = "output 0 of " + NAMES.get(name, name.capitalize()) + "Backward0"
    if backend in ("aot_eager", "inductor"):  # a compiled node may name its own saved tensor
        saved = f"({saved}|saved tensor \\d+ of CompiledFunctionBackward)"
    with pytest.raises(
        AutogradError,
        match=(
            rf"modified by an inplace operation: \[float32 \[3\]\], {saved}, "
            "is at version 1; expected version 0"
        ),
    ):
        _overwrite_output(program)


@pytest.mark.parametrize("write", [lambda y: y[1:].add_(1), lambda y: y.__setitem__(0, 2.0)])
def test_writing_a_saved_output_through_a_view_fails_backward(write):
    with pytest.raises(AutogradError, match="output 0 of ReluBackward0"):
        _overwrite_output(minitorch.relu, write)


def test_an_output_written_after_backward_is_fine():
    x = minitorch.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    y = minitorch.relu(x)
    y.sum().backward()
    y.mul_(3)  # after backward: nothing reads it any more
    assert x.grad.tolist() == [0.0, 0.0, 1.0]


def test_a_composite_that_saves_no_output_still_takes_the_write():
    """gelu's derivative reads its input, in PyTorch too: writing its output is fine."""
    x = minitorch.tensor([0.5, -1.5], requires_grad=True)
    y = minitorch.nn.functional.gelu(x)
    z = y * 2
    y.mul_(3)
    z.sum().backward()
    reference = minitorch.tensor([0.5, -1.5], requires_grad=True)
    (minitorch.nn.functional.gelu(reference) * 2).sum().backward()
    assert x.grad.tolist() == reference.grad.tolist()


@pytest.mark.parametrize("backend", [None, *BACKENDS])
def test_writing_a_saved_output_inside_a_compiled_frame_fails_backward(backend):
    """Dynamo may not rewrite the write functionally (which would hide it): see
    [Note: in-place on a tensor that requires grad] in tracer/dynamo/variables/inplace.py."""

    def program(x):
        y = minitorch.relu(x * 2 - 1)
        z = y * 1.0
        y.mul_(3)
        return z

    if backend is not None:
        program = minitorch.compile(program, backend=backend)
    x = minitorch.tensor([0.5, 1.5, -2.0], requires_grad=True)
    with pytest.raises(AutogradError, match="modified by an inplace operation"):
        program(x).sum().backward()
