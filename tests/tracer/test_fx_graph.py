"""The fx graph IR: printing, naming, editing, lint, code generation and the Interpreter.

The generated code and the Interpreter are both held to eager minitorch on the same inputs.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest

import minitorch
from minitorch import nn
from tracer.aot import make_fx
from tracer.fx import Graph, GraphLintError, GraphModule, Interpreter


def sincos_graph() -> Graph:
    """sum(sin(x)**2 + cos(x)**2), built node by node."""
    g = Graph()
    x = g.placeholder("x")
    sin = g.call_function(minitorch.sin, (x,))
    pow_1 = g.call_function(operator.pow, (sin, 2))
    cos = g.call_function(minitorch.cos, (x,))
    pow_2 = g.call_function(operator.pow, (cos, 2))
    add = g.call_function(operator.add, (pow_1, pow_2))
    total = g.call_function(minitorch.sum, (add,))
    g.output((total,))
    return g


def sincos_eager(x):
    return (minitorch.sum(minitorch.sin(x) ** 2 + minitorch.cos(x) ** 2),)


SINCOS_GRAPH = """\
graph():
    %x : [num_users=2] = placeholder[target=x]
    %sin : [num_users=1] = call_function[target=minitorch.sin](args = (%x,), kwargs = {})
    %pow_1 : [num_users=1] = call_function[target=operator.pow](args = (%sin, 2), kwargs = {})
    %cos : [num_users=1] = call_function[target=minitorch.cos](args = (%x,), kwargs = {})
    %pow_2 : [num_users=1] = call_function[target=operator.pow](args = (%cos, 2), kwargs = {})
    %add : [num_users=1] = call_function[target=operator.add](args = (%pow_1, %pow_2), kwargs = {})
    %sum_1 : [num_users=1] = call_function[target=minitorch.sum](args = (%add,), kwargs = {})
    return (sum_1,)"""

SINCOS_TABLE = """\
opcode         name    target                   args            kwargs
-------------  ------  -----------------------  --------------  ------
placeholder    x       x                        ()              {}
call_function  sin     minitorch.sin            (x,)            {}
call_function  pow_1   <built-in function pow>  (sin, 2)        {}
call_function  cos     minitorch.cos            (x,)            {}
call_function  pow_2   <built-in function pow>  (cos, 2)        {}
call_function  add     <built-in function add>  (pow_1, pow_2)  {}
call_function  sum_1   minitorch.sum            (add,)          {}
output         output  output                   ((sum_1,),)     {}"""

SINCOS_CODE = """\
def forward(self, x):
    sin = minitorch.sin(x)
    pow_1 = sin ** 2;  sin = None
    cos = minitorch.cos(x);  x = None
    pow_2 = cos ** 2;  cos = None
    add = pow_1 + pow_2;  pow_1 = pow_2 = None
    sum_1 = minitorch.sum(add);  add = None
    return (sum_1,)
"""

SINCOS_READABLE = """\
class GraphModule(minitorch.nn.Module):
    def forward(self, x: "f32[8]"):
        sin = minitorch.sin(x)
        pow_1 = sin ** 2;  sin = None
        cos = minitorch.cos(x);  x = None
        pow_2 = cos ** 2;  cos = None
        add = pow_1 + pow_2;  pow_1 = pow_2 = None
        sum_1 = minitorch.sum(add);  add = None
        return (sum_1,)
"""


def assert_same(actual, expected) -> None:
    """Tuples of tensors (or single tensors) with equal shapes, dtypes and values."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
        return
    assert tuple(actual.shape) == tuple(expected.shape) and actual.dtype is expected.dtype
    np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(), rtol=1e-6)


# ---- printing ------------------------------------------------------------------------------


def test_sincos_graph_prints_like_torch_fx():
    assert str(sincos_graph()) == SINCOS_GRAPH


def test_sincos_tabular():
    assert sincos_graph().tabular() == SINCOS_TABLE


def test_print_tabular_prints_the_table(capsys):
    sincos_graph().print_tabular()
    assert capsys.readouterr().out == SINCOS_TABLE + "\n"


def test_sincos_code():
    gm = GraphModule({}, sincos_graph())
    assert gm.code == SINCOS_CODE
    assert repr(gm) == "GraphModule()\n\n" + SINCOS_CODE


def test_print_readable_shows_input_shapes_when_known(capsys):
    g = sincos_graph()
    g.nodes[0].meta["val"] = minitorch.ones(8)
    gm = GraphModule({}, g)
    assert gm.print_readable(print_output=False) == SINCOS_READABLE
    assert capsys.readouterr().out == ""
    gm.print_readable()
    assert capsys.readouterr().out == SINCOS_READABLE + "\n"


def test_print_readable_without_shapes():
    text = GraphModule({}, sincos_graph()).print_readable(print_output=False)
    assert text.splitlines()[1] == "    def forward(self, x):"


def test_sincos_runs_like_eager():
    gm = GraphModule({}, sincos_graph())
    x = minitorch.randn(8)
    assert_same(gm(x), sincos_eager(x))
    assert_same(Interpreter(gm).run(x), sincos_eager(x))


# ---- names -----------------------------------------------------------------------------------


def test_builtin_names_get_a_suffix_and_names_stay_unique():
    g = Graph()
    x = g.placeholder("x")
    x_again = g.placeholder("x")
    p1 = g.call_function(operator.pow, (x, 2))
    p2 = g.call_function(operator.pow, (x, 3))
    s1 = g.call_function(minitorch.sin, (x,))
    s2 = g.call_function(minitorch.sin, (x,))
    total = g.call_function(minitorch.sum, (x,))
    method = g.call_method("sum", (x,))
    inp = g.placeholder("input")
    kw = g.placeholder("lambda")
    attr = g.get_attr("layers.0.weight")
    names = [n.name for n in (x, x_again, p1, p2, s1, s2, total, method, inp, kw, attr)]
    assert names == [
        "x",
        "x_1",
        "pow_1",
        "pow_2",
        "sin",
        "sin_1",
        "sum_1",
        "sum_2",
        "input_1",
        "lambda_1",
        "layers_0_weight",
    ]
    assert all(name.isidentifier() for name in names)


def test_an_explicit_name_that_is_taken_gets_a_new_suffix():
    g = Graph()
    a = g.placeholder("a")
    first = g.create_node("call_function", operator.neg, (a,), name="t_1")
    second = g.create_node("call_function", operator.neg, (a,), name="t_1")
    assert (first.name, second.name) == ("t_1", "t_2")


# ---- editing ---------------------------------------------------------------------------------


def _names(g: Graph) -> list[str]:
    return [n.name for n in g.nodes]


def test_inserting_before_and_after():
    g = sincos_graph()
    sin = g.find_nodes(op="call_function", target=minitorch.sin)[0]
    with g.inserting_after(sin):
        neg = g.call_function(operator.neg, (sin,))
        exp = g.call_function(minitorch.exp, (neg,))  # goes after neg, not before it
    with g.inserting_before(sin):
        g.call_function(minitorch.log, (g.nodes[0],))
    assert _names(g)[:6] == ["x", "log", "sin", "neg", "exp", "pow_1"]
    assert exp.args == (neg,) and list(neg.users) == [exp]
    g.lint()
    # the insertion point is restored afterwards: new nodes go to the end again
    tail = g.call_function(minitorch.cos, (sin,))
    assert g.nodes[-1] is tail


def test_erase_node_refuses_a_node_with_users():
    g = sincos_graph()
    sin = g.find_nodes(op="call_function", target=minitorch.sin)[0]
    with pytest.raises(GraphLintError, match="sin"):
        g.erase_node(sin)
    assert "sin" in _names(g)


def test_replace_all_uses_with_then_erase():
    g = sincos_graph()
    x, sin = g.nodes[0], g.nodes[1]
    cos = g.find_nodes(op="call_function", target=minitorch.cos)[0]
    changed = sin.replace_all_uses_with(cos)
    assert [n.name for n in changed] == ["pow_1"]
    assert g.nodes[2].args == (cos, 2)
    assert not sin.users and len(cos.users) == 2
    g.erase_node(sin)
    assert list(x.users) == [cos]  # erasing unlinked sin from x
    # pow_1 now reads cos, which comes after it: the edit broke the program order
    with pytest.raises(GraphLintError, match="before it is defined"):
        g.lint()


def test_eliminate_dead_code():
    g = sincos_graph()
    x, sin = g.nodes[0], g.nodes[1]
    with g.inserting_after(sin):
        exp = g.call_function(minitorch.exp, (x,))
        g.call_function(operator.neg, (exp,))  # unused; once it goes, exp is unused too
    with g.inserting_before(sin):
        g.placeholder("unused")
    assert g.eliminate_dead_code()
    # inputs are part of the signature and stay, used or not
    assert _names(g) == ["x", "unused", "sin", "pow_1", "cos", "pow_2", "add", "sum_1", "output"]
    assert not g.eliminate_dead_code()  # nothing left to remove
    g.lint()


def test_dead_code_elimination_keeps_random_draws():
    # an unused dropout still advances the generator: the next draw depends on it
    g = sincos_graph()
    x = g.nodes[0]
    with g.inserting_after(x):
        g.call_function(minitorch.nn.functional.dropout, (x,))
    g.eliminate_dead_code()
    assert "dropout" in _names(g)


def test_compiled_code_draws_what_eager_draws_after_an_unused_dropout():
    def two_masks(x):
        minitorch.nn.functional.dropout(x)
        return minitorch.nn.functional.dropout(x)

    x = minitorch.ones(64)
    for backend in ("eager", "aot_eager", "inductor"):
        minitorch.manual_seed(0)
        want = two_masks(x)
        minitorch.manual_seed(0)
        got = minitorch.compile(two_masks, backend=backend)(x)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


# ---- lint ------------------------------------------------------------------------------------


def test_lint_accepts_a_valid_graph():
    sincos_graph().lint()


def test_lint_catches_use_before_def():
    g = sincos_graph()
    sin, pow_2 = g.nodes[1], g.nodes[4]
    sin.args = (pow_2,)
    with pytest.raises(GraphLintError, match="sin uses pow_2 before it is defined"):
        g.lint()


def test_lint_catches_a_node_from_another_graph():
    g, other = sincos_graph(), Graph()
    stranger = other.placeholder("y")
    g.nodes[1].args = (stranger,)
    with pytest.raises(GraphLintError, match="uses y, which is not in this graph"):
        g.lint()


@pytest.mark.parametrize(
    "op, target, pattern",
    [
        ("call_function", "sin", "call_function target 'sin' is not callable"),
        ("call_method", minitorch.sum, "call_method needs a string target"),
        ("get_attr", 3, "get_attr needs a string target"),
        ("call_module", operator.add, "call_module needs a string target"),
    ],
)
def test_lint_catches_bad_target_types(op, target, pattern):
    g = Graph()
    x = g.placeholder("x")
    g.create_node(op, target, (x,), name="bad")
    with pytest.raises(GraphLintError, match=pattern):
        g.lint()


def test_lint_catches_a_dangling_user():
    # A user list naming a node that no longer reads this one (an edit that bypassed
    # Node.args, or a half-done erase) is the classic corruption of a hand-edited graph.
    g = sincos_graph()
    x, cos = g.nodes[0], g.nodes[3]
    assert cos.name == "cos"
    x.users[g.nodes[-2]] = None  # claims sum_1 reads x; it does not
    with pytest.raises(GraphLintError, match="x lists sum_1 as a user, but sum_1 does not read it"):
        g.lint()


def test_lint_catches_a_missing_user():
    g = sincos_graph()
    x = g.nodes[0]
    del x.users[g.nodes[1]]  # sin reads x, but x forgot it
    with pytest.raises(GraphLintError, match="x.users is missing its user sin"):
        g.lint()


def test_lint_catches_two_nodes_with_one_name():
    g = sincos_graph()
    g.nodes[3].name = "sin"
    with pytest.raises(GraphLintError, match="two nodes are named sin"):
        g.lint()


def test_lint_errors_are_minitorch_errors():
    assert issubclass(GraphLintError, minitorch.MinitorchError)


def test_lint_catches_an_output_that_is_not_last():
    g = sincos_graph()
    output = g.nodes[-1]
    with g.inserting_after(output):
        g.call_function(minitorch.exp, (g.nodes[0],))
    with pytest.raises(GraphLintError, match="output.*comes last"):
        g.lint()


def test_lint_catches_two_outputs():
    g = sincos_graph()
    g.output(g.nodes[0])
    with pytest.raises(GraphLintError, match="at most one output"):
        g.lint()


# ---- trace, edit, recompile --------------------------------------------------------------------


def test_trace_edit_recompile_run():
    def f(x):
        return minitorch.sin(x) * 2.0

    x = minitorch.randn(5)
    gm = make_fx(f, ["x"])(x)
    assert_same(gm(x), f(x))

    # sin -> cos, then add 1 after the multiplication
    g = gm.graph
    (sin,) = g.find_nodes(op="call_function", target=minitorch.ops.sin)
    sin.target = minitorch.ops.cos
    (mul,) = g.find_nodes(op="call_function", target=minitorch.ops.mul)
    with g.inserting_after(mul):
        plus_one = g.call_function(minitorch.ops.add, (mul, 1.0))
    mul.replace_all_uses_with(plus_one)
    plus_one.args = (mul, 1.0)  # replace_all_uses_with rewired plus_one's own input too
    g.lint()
    gm.recompile()

    assert "minitorch.ops.cos(x)" in gm.code and "minitorch.ops.add(mul, 1.0)" in gm.code
    assert_same(gm(x), minitorch.cos(x) * 2.0 + 1.0)
    assert_same(Interpreter(gm).run(x), minitorch.cos(x) * 2.0 + 1.0)


def test_traced_print_readable_has_shapes():
    example = minitorch.ones(3, 2, dtype=minitorch.float64)
    gm = make_fx(lambda x: minitorch.sin(x) * 2.0, ["x"])(example)
    signature = gm.print_readable(print_output=False).splitlines()[1]
    assert signature == '    def forward(self, x: "f64[3, 2]"):'


def test_assigning_a_graph_recompiles():
    gm = GraphModule({}, sincos_graph())
    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_function(minitorch.neg, (x,)))
    gm.graph = g
    assert (
        gm.code == "def forward(self, x):\n    neg = minitorch.neg(x);  x = None\n    return neg\n"
    )
    assert_same(gm(minitorch.ones(2)), -minitorch.ones(2))


# ---- modules, attributes, methods and the Interpreter ----------------------------------------


class Scale(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(minitorch.tensor([2.0, 3.0]))

    def forward(self, x):
        return x * self.weight


class Root(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = Scale()
        self.bias = nn.Parameter(minitorch.tensor([0.5, -1.0]))


MODULE_CODE = """\
def forward(self, x):
    scale_weight = self.scale.weight
    scale = self.scale(x);  x = None
    bias = self.bias
    add = scale + bias;  scale = bias = None
    sum_1 = add.sum(dim = 0);  add = None
    mul = minitorch.mul(sum_1, scale_weight);  sum_1 = scale_weight = None
    return mul
"""


def module_graph() -> Graph:
    """sum(scale(x) + bias, dim=0) * scale.weight, with every opcode."""
    g = Graph()
    x = g.placeholder("x")
    weight = g.get_attr("scale.weight")
    scaled = g.call_module("scale", (x,))
    bias = g.get_attr("bias")
    add = g.call_function(operator.add, (scaled, bias))
    total = g.call_method("sum", (add,), {"dim": 0})
    g.output(g.call_function(minitorch.mul, (total, weight)))
    return g


def test_graph_module_copies_what_the_graph_reads():
    root = Root()
    gm = GraphModule(root, module_graph())
    assert gm.code == MODULE_CODE
    assert sorted(name for name, _ in gm.named_parameters()) == ["bias", "scale.weight"]
    assert gm.scale is root.scale and gm.bias is root.bias


def test_interpreter_agrees_with_the_generated_code():
    root = Root()
    gm = GraphModule(root, module_graph())
    x = minitorch.tensor([1.0, 2.0])
    expected = (root.scale(x) + root.bias).sum(dim=0) * root.scale.weight
    assert_same(gm(x), expected)
    assert_same(Interpreter(gm).run(x), expected)


def test_interpreter_dispatches_by_opcode_name():
    class CountCalls(Interpreter):
        def __init__(self, module) -> None:
            super().__init__(module)
            self.seen: list[str] = []

        def call_function(self, target, args, kwargs):
            self.seen.append(target.__name__)
            return super().call_function(target, args, kwargs)

    counter = CountCalls(GraphModule({}, sincos_graph()))
    counter.run(minitorch.ones(2))
    assert counter.seen == ["sin", "pow", "cos", "pow", "add", "sum"]


def test_a_local_function_target_runs():
    def double(t):
        return t * 2.0

    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_function(double, (x,)))
    gm = GraphModule({}, g)
    assert gm.graph.nodes[1].name == "double"
    assert_same(gm(minitorch.ones(3)), minitorch.ones(3) * 2.0)


def test_constants_that_print_as_names_run():
    g = Graph()
    x = g.placeholder("x")
    big = g.call_function(operator.mul, (x, float("inf")))
    shifted = g.call_function(operator.add, (big, -1.5))
    shaped = g.call_function(minitorch.reshape, (shifted, minitorch.Size([3, 1])))
    wide = g.call_method("to", (shaped, minitorch.float64))
    g.output((wide, g.call_function(operator.add, (x, float("nan")))))
    gm = GraphModule({}, g)
    assert "x * inf" in gm.code and "minitorch.float64" in gm.code
    x = minitorch.tensor([1.0, -2.0, 0.5])
    expected = ((x * float("inf") + -1.5).reshape(3, 1).double(), x + float("nan"))
    for result in (gm(x), Interpreter(gm).run(x)):
        assert_same(result[0], expected[0])
        assert np.isnan(result[1].numpy()).all()


def test_submodules_whose_names_are_not_identifiers():
    # A Sequential-like container names its children '0', '1', ...
    root, layers = nn.Module(), nn.Module()
    layers.add_module("0", Scale())
    root.add_module("layers", layers)
    g = Graph()
    x = g.placeholder("x")
    weight = g.get_attr("layers.0.weight")
    g.output(g.call_function(operator.add, (g.call_module("layers.0", (x,)), weight)))
    gm = GraphModule(root, g)
    assert "getattr(self.layers, '0').weight" in gm.code
    x = minitorch.tensor([1.0, 2.0])
    expected = x * layers.get_submodule("0").weight + layers.get_submodule("0").weight
    assert_same(gm(x), expected)
    assert_same(Interpreter(gm).run(x), expected)
