"""Each construct the translator supports: the compiled function returns what eager returns.

Every function here must be captured whole (check_compiled asserts no fallback), and the
graph the backend received is checked where its shape is the point.
"""

from __future__ import annotations

import math
import operator

import pytest

import minitorch
from minitorch import cos
from tests.tracer.dynamo.helpers import CountingBackend, assert_same, check_compiled
from tracer.dynamo import cache_entries, optimize
from tracer.dynamo.compiler import EAGER

pytestmark = pytest.mark.capture

W = minitorch.randn(4)
SCALE = 2.0


def x34():
    return minitorch.randn(3, 4)


def calls_of(backend: CountingBackend) -> list:
    """(op, target) of every call node of the one graph the backend got."""
    (gm,) = backend.graphs
    return [(n.op, n.target) for n in gm.graph.nodes if n.op.startswith("call")]


# ---- calls ----------------------------------------------------------------------------------


def tensor_methods(x):
    return x.sin().exp(), x.cos(), x.log().neg(), x.mean()


def method_kwargs(x):
    return x.sum(dim=0), x.sum(dim=1, keepdim=True), x.mean(1, keepdim=True)


def module_functions(x):
    return minitorch.sin(x), minitorch.sum(x, dim=1, keepdim=True), minitorch.add(x, x, alpha=2)


def imported_functions(x):
    return cos(x), minitorch.ops.exp(x)


def math_on_constants(x):
    return x * math.sqrt(x.shape[0]) + math.pi + math.floor(2.5)


@pytest.mark.parametrize(
    "fn", [tensor_methods, method_kwargs, module_functions, imported_functions, math_on_constants]
)
def test_calls(fn):
    check_compiled(fn, x34().exp())  # positive, for log


def test_methods_become_call_method_and_functions_call_function():
    backend = check_compiled(method_kwargs, x34())
    assert calls_of(backend) == [
        ("call_method", "sum"),
        ("call_method", "sum"),
        ("call_method", "mean"),
    ]
    (gm,) = backend.graphs
    assert [n.kwargs for n in gm.graph.nodes if n.op == "call_method"][1] == {
        "dim": 1,
        "keepdim": True,
    }
    backend = check_compiled(module_functions, x34())
    assert [t for _, t in calls_of(backend)] == [minitorch.sin, minitorch.sum, minitorch.add]
    backend = check_compiled(imported_functions, x34())
    assert [t for _, t in calls_of(backend)] == [minitorch.cos, minitorch.ops.exp]
    assert "G['cos'] is ___function_cos" in cache_entries(imported_functions)[0].guard.source


def test_math_folds_into_a_constant():
    backend = check_compiled(math_on_constants, x34())
    (gm,) = backend.graphs
    (mul,) = [n for n in gm.graph.nodes if n.target is operator.mul]
    assert mul.args[1] == math.sqrt(3)


# ---- operators --------------------------------------------------------------------------------


def tensor_operators(x, y):
    return x + y, x - y, x * y, x / (y * y + 1), x**2, -x, +x, 2 - x, 3 * x, 1 / (x * x + 1)


def inplace_operators(x, y):
    a, b, c, d, e = x, x, x, x, x
    a += y
    b -= 2
    c *= y
    d /= 4
    e **= 2
    return a, b, c, d, e, x


def int_operators(x, n):
    k = (n // 2) + (n % 3) + (n << 1) + (n >> 1) + (n & 3) + (n | 4) + (n ^ 5) + n**2 - -n
    k //= 2
    k %= 7
    return x * k, k, n / 2, n < 3, n >= 3, n == 7, n != 7, not n, ~n


def python_constructs(x, n, y=None):
    in_range = 0 < n < 10  # COPY and SWAP
    member = n in (1, 2, 3) or n in {7, 8}  # CONTAINS_OP; a frozenset constant
    both = n and in_range  # JUMP_IF_FALSE_OR_POP on 3.11, COPY + POP_JUMP_IF_FALSE on 3.12+
    either = member or n
    k = 2 if n > 5 else 3  # JUMP_FORWARD
    t = x.shape[::-1]  # BUILD_SLICE
    del t  # DELETE_FAST
    x.sin()  # POP_TOP; the unused node is dropped from the graph
    if y is not None:  # IS_OP or POP_JUMP_IF_NONE
        x = x + y
    z = x * k
    z = z * 2  # noqa: E702 - one line: 3.13 fuses STORE_FAST + LOAD_FAST
    return z, in_range, member, both, either, y is None, n not in (4,)


@pytest.mark.parametrize(
    "fn, args",
    [
        (python_constructs, (x34(), 4)),
        (python_constructs, (x34(), 12, x34())),
        (tensor_operators, (x34(), x34())),
        (int_operators, (x34(), 7)),
    ],
)
def test_operators(fn, args):
    check_compiled(fn, *args)


def test_inplace_operators_on_an_input_are_captured_and_written_back():
    # Tensor has __iadd__ (it writes into x, and every alias of x sees it): recorded as the
    # out-of-place op, and the transformed code copies the result back into the caller's x.
    from tracer.dynamo import fallback_reasons

    x, y = x34(), x34()
    x_eager, y_eager = x.clone(), y.clone()
    backend = CountingBackend()
    out = optimize(inplace_operators, backend=backend)(x, y)
    assert_same(out, inplace_operators(x_eager, y_eager))
    assert_same(x, x_eager)  # the caller's tensor was mutated the same way
    assert out[0] is x and out[3] is x and out[5] is x  # aliases of x are x itself, as in eager
    assert fallback_reasons(inplace_operators) == [] and backend.count == 1


# ---- shapes, tuples, unpacking ------------------------------------------------------------------


def shape_arithmetic(x):
    a, b = x.shape
    return x.reshape(a * b), x.shape, x.shape[0], x.shape[-1], x.shape[1:], len(x.shape)


def shape_dependent(x):  # seed 000's second hard case
    bsz, *sizes = x.shape
    return x.reshape(bsz, -1), sizes


def metadata(x):
    return x.dtype, x.ndim, x.dim(), x.size(), x.size(1), x.numel(), x.stride(), x.requires_grad


def lists_and_stars(x):
    shape = [x.shape[0], -1]
    return x.reshape(shape), (*x.shape, 1), [1, 2]


def swap(x, y):
    x, y = y, x
    return x - y


def nested_return(x):
    return ((x, x.sin()), (1, (2.5, None)), "s")


def returns_constant(x):
    return 3


def returns_input(x):
    return x


def tuple_argument(pair):
    a, b = pair
    return a * b, pair


@pytest.mark.parametrize(
    "fn, args",
    [
        (shape_arithmetic, (x34(),)),
        (shape_dependent, (minitorch.randn(2, 3, 4),)),
        (metadata, (x34(),)),
        (lists_and_stars, (x34(),)),
        (swap, (x34(), x34())),
        (nested_return, (x34(),)),
        (returns_constant, (x34(),)),
        (returns_input, (x34(),)),
        (tuple_argument, ((x34(), x34()),)),
    ],
)
def test_values(fn, args):
    check_compiled(fn, *args)


def test_shape_reads_are_constants_in_the_graph():
    backend = check_compiled(shape_dependent, minitorch.randn(2, 3, 4))
    (gm,) = backend.graphs
    (reshape,) = [n for n in gm.graph.nodes if n.op == "call_method"]
    assert reshape.args[1:] == (2, -1)


def test_nothing_to_compute_means_no_graph():
    for fn in (returns_constant, returns_input):
        backend = check_compiled(fn, x34())
        assert backend.count == 0


def test_returning_the_input_returns_the_same_object():
    x = x34()
    assert optimize(returns_input, backend=EAGER)(x) is x


# ---- globals, defaults, closures, branches on constants ---------------------------------------


def uses_globals(x):
    return x * W + SCALE


def keyword_only(x, *, k=2, bias=None):
    if bias is None:
        return x * k
    return x * k + bias


def branch_on_int(x, n):
    if n > 2:
        return x + n
    return x - n


def while_on_constant(x, n):
    i = 0
    while i < n:
        x = x + i
        i += 1
    return x


def make_closure(scale):
    def scaled(x):
        return x * scale

    return scaled


def test_globals_become_inputs_named_after_their_source():
    backend = check_compiled(uses_globals, x34())
    (gm,) = backend.graphs
    assert [n.name for n in gm.graph.nodes if n.op == "placeholder"] == ["x", "G_W"]
    assert backend.example_inputs[0][1] is W


@pytest.mark.parametrize(
    "fn, args, kwargs",
    [
        (keyword_only, (x34(),), {}),
        (keyword_only, (x34(),), {"k": 3, "bias": x34()}),
        (branch_on_int, (x34(), 3), {}),
        (branch_on_int, (x34(), 1), {}),
        (while_on_constant, (x34(), 3), {}),
        (make_closure(1.5), (x34(),), {}),
    ],
)
def test_control_and_scopes(fn, args, kwargs):
    check_compiled(fn, *args, **kwargs)


class Scaler:
    def __init__(self, k: float) -> None:
        self.k = k

    def apply(self, x):
        return x.sin() * 2


def test_lambdas_compile():
    backend = check_compiled(lambda x: x.sin() * 2.0, x34())
    assert backend.count == 1


def test_bound_methods_compile():
    s = Scaler(2.0)
    x = x34()
    backend = CountingBackend()
    assert_same(optimize(s.apply, backend=backend)(x), s.apply(x))
    assert backend.count == 1


def test_requires_grad_inputs_flow_through_the_eager_backend():
    x = x34().requires_grad_()
    compiled = optimize(tensor_operators, backend=EAGER)
    y = x34()
    out = compiled(x, y)
    out[0].sum().backward()
    assert x.grad is not None
    assert cache_entries(compiled)[0].graph_module is not None
