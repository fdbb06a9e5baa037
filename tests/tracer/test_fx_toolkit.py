"""The fx toolkit: Transformer, subgraph_rewriter.replace_pattern, ShapeProp, FxGraphDrawer.

Rewritten modules are held to eager minitorch on the same inputs; ShapeProp to the shapes and
dtypes of eager results; the drawing to the graph it draws.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

import minitorch as torch
import minitorch.fx as fx
from minitorch import nn
from minitorch.errors import InvalidArgumentError, MinitorchError
from minitorch.fx import subgraph_rewriter
from minitorch.fx.passes.graph_drawer import FxGraphDrawer, GraphvizError
from minitorch.fx.passes.shape_prop import ShapeProp, TensorMetadata
from tracer.fx.node import target_name


def assert_close(actual, expected) -> None:
    np.testing.assert_allclose(
        actual.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6
    )


def names(gm) -> list[str]:
    return [n.name for n in gm.graph.nodes]


class LinearDropRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.param = nn.Parameter(torch.rand(4))
        self.linear = nn.Linear(4, 5)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.linear(x + self.param)).relu()


# ---- Transformer ---------------------------------------------------------------------------


def test_transformer_identity_copies_graph_names_and_meta():
    torch.manual_seed(0)
    gm = fx.symbolic_trace(LinearDropRelu().eval())
    new = fx.Transformer(gm).transform()
    assert str(new.graph) == str(gm.graph)
    assert new.code == gm.code
    for old, copy in zip(gm.graph.nodes, new.graph.nodes):
        assert copy.meta.get("stack_trace") == old.meta.get("stack_trace")
    new.graph.lint()
    x = torch.randn(3, 4)
    assert_close(new(x), gm(x))


class DropoutRemover(torch.fx.Transformer):  # seed 001, as written there
    def call_module(self, target, args, kwargs):
        if isinstance(self.submodules[target], nn.Dropout):
            assert len(args) == 1
            return args[0]
        return super().call_module(target, args, kwargs)


def test_seed_dropout_remover():
    torch.manual_seed(0)
    model = LinearDropRelu()  # training mode: the dropout would be random
    new = DropoutRemover(fx.symbolic_trace(model)).transform()
    assert "drop" not in names(new)
    assert names(new) == ["x", "param", "add", "linear", "relu", "output"]
    assert [n.op for n in new.graph.nodes if n.name == "relu"] == ["call_method"]
    new.graph.lint()
    x = torch.randn(3, 4)
    assert_close(new(x), model.eval()(x))  # eval: dropout is the identity


def test_transformer_swaps_and_inserts_nodes():
    class AddToMul(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is torch.add:
                return super().call_function(torch.mul, args, kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "relu":  # record new nodes through the Proxy, as user code would
                return args[0].clamp(min=0.0) * 2
            return super().call_method(target, args, kwargs)

    gm = fx.symbolic_trace(lambda x, y: torch.add(x, y).relu() - 1)
    new = AddToMul(gm).transform()
    assert names(new) == ["x", "y", "mul", "clamp", "mul_1", "sub", "output"]
    assert "add" not in new.code
    x, y = torch.randn(3, 4), torch.randn(3, 4)
    assert_close(new(x, y), torch.clamp(x * y, min=0.0) * 2 - 1)
    assert_close(gm(x, y), torch.relu(x + y) - 1)  # the original is untouched


# ---- subgraph_rewriter.replace_pattern -----------------------------------------------------


def pattern(x, y):
    return torch.relu(torch.add(x, y))


def replacement(x, y):
    return torch.clamp(torch.sub(x, y), min=0.0)


def with_matches_and_near_misses(x, y, z):
    m1 = torch.relu(torch.add(x, y))  # match
    m2 = torch.relu(torch.add(m1, z))  # match, reading the first one's result
    miss_op = torch.relu(x + y)  # operator.add is not minitorch.add
    miss_tail = torch.add(x, z)  # no relu after it
    kept = torch.add(y, z)  # would match, but its value is also read below
    miss_escape = torch.relu(kept) + kept
    miss_order = torch.add(torch.relu(x), y)  # the ops in the other order
    return m2 + miss_op + miss_tail + miss_escape + miss_order


def expected(x, y, z):
    m1 = torch.clamp(x - y, min=0.0)
    m2 = torch.clamp(m1 - z, min=0.0)
    return m2 + torch.relu(x + y) + (x + z) + (torch.relu(y + z) + (y + z)) + (torch.relu(x) + y)


def test_replace_pattern_replaces_every_match_and_nothing_else():
    gm = fx.symbolic_trace(with_matches_and_near_misses)
    before = {n.name: (n.op, n.target) for n in gm.graph.nodes}
    matches = subgraph_rewriter.replace_pattern(gm, pattern, replacement)

    assert [m.anchor.name for m in matches] == ["relu", "relu_1"]
    assert [sorted(g.name for g in m.nodes_map.values()) for m in matches] == [
        ["add", "relu", "x", "y"],
        ["add_1", "relu", "relu_1", "z"],
    ]
    after = {n.name: (n.op, n.target) for n in gm.graph.nodes}
    removed = set(before) - set(after)
    assert removed == {"add", "relu", "add_1", "relu_1"}
    for name in set(before) & set(after):
        assert after[name] == before[name]  # every near-miss stays as it was
    assert [n.target for n in gm.graph.nodes].count(torch.clamp) == 2
    gm.graph.lint()
    x, y, z = torch.randn(3, 4), torch.randn(3, 4), torch.randn(3, 4)
    assert_close(gm(x, y, z), expected(x, y, z))


def test_replace_pattern_chain_matches_do_not_overlap():
    def four_relus(x):
        return torch.relu(torch.relu(torch.relu(torch.relu(x))))

    gm = fx.symbolic_trace(four_relus)
    matches = subgraph_rewriter.replace_pattern(
        gm, lambda x: torch.relu(torch.relu(x)), lambda x: torch.abs(x) * 0.5
    )
    assert [m.anchor.name for m in matches] == ["relu_1", "relu_3"]
    assert [n.target for n in gm.graph.nodes].count(torch.abs) == 2
    gm.graph.lint()
    x = torch.randn(5)
    assert_close(gm(x), torch.abs(torch.abs(x) * 0.5) * 0.5)


def test_replace_pattern_constants_and_repeated_inputs_must_agree():
    gm = fx.symbolic_trace(lambda a, b: (a * 2) + (a * 3) + (a + a) + (a + b))
    doubled = subgraph_rewriter.replace_pattern(gm, lambda x: x * 2, lambda x: x * 20)
    assert len(doubled) == 1
    same_twice = subgraph_rewriter.replace_pattern(gm, lambda x: x + x, lambda x: x * 100)
    assert len(same_twice) == 1  # `a + a` only: `a + b` reads two different values
    a, b = torch.randn(4), torch.randn(4)
    assert_close(gm(a, b), (a * 20) + (a * 3) + (a * 100) + (a + b))


def test_replace_pattern_without_a_match_leaves_code_alone():
    gm = fx.symbolic_trace(lambda x: torch.sin(x) + 1)
    code = gm.code
    assert subgraph_rewriter.replace_pattern(gm, pattern, replacement) == []
    assert gm.code == code


def test_replacement_brings_its_parameters():
    class Scale(nn.Module):  # its buffer has the name of one of gm's parameters
        def __init__(self):
            super().__init__()
            self.register_buffer("param", torch.full((5,), 10.0))

        def forward(self, x):
            return x * self.param

    torch.manual_seed(0)
    model = LinearDropRelu().eval()
    gm = fx.symbolic_trace(model)
    scale = Scale()
    matches = subgraph_rewriter.replace_pattern(gm, lambda x: x.relu(), scale)
    assert len(matches) == 1
    assert gm.param is model.param  # gm's own parameter is kept; the buffer gets a new name
    assert gm.param_1 is scale.param
    x = torch.randn(3, 4)
    assert_close(gm(x), model.linear(x + model.param) * 10.0)


def test_replace_pattern_rejects_bad_patterns():
    gm = fx.symbolic_trace(lambda x: torch.relu(x))
    with pytest.raises(InvalidArgumentError, match="2 inputs and the replacement 1"):
        subgraph_rewriter.replace_pattern(gm, pattern, lambda x: x)
    with pytest.raises(InvalidArgumentError, match="must return one value"):
        subgraph_rewriter.replace_pattern(gm, lambda x: (torch.relu(x), x), lambda x: x)
    with pytest.raises(InvalidArgumentError, match="never reads its input y"):
        subgraph_rewriter.replace_pattern(gm, lambda x, y: torch.relu(x), lambda x, y: y)


# ---- ShapeProp -----------------------------------------------------------------------------


class ShapeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 5)

    def forward(self, x):
        h = self.linear(x)
        t = h.transpose(0, 1)
        return torch.sum(t, dim=1), t > 0, x.shape


def test_shape_prop_matches_eager_values():
    torch.manual_seed(0)
    model = ShapeNet()
    gm = fx.symbolic_trace(model)
    x = torch.randn(3, 4)
    result = ShapeProp(gm).propagate(x)
    assert_close(result[0], model(x)[0])

    h = model.linear(x)  # the eager values, node by node
    t = h.transpose(0, 1)
    eager = {"x": x, "linear": h, "transpose": t, "sum_1": torch.sum(t, dim=1), "gt": t > 0}
    for node in gm.graph.nodes:
        if node.name in eager:
            want = eager[node.name]
            assert node.meta["tensor_meta"] == TensorMetadata(
                want.shape, want.dtype, want.requires_grad, want.stride()
            ), node.name
    meta = {n.name: n.meta.get("tensor_meta") for n in gm.graph.nodes}
    assert meta["gt"].dtype is torch.bool
    assert meta["linear"].requires_grad and not meta["x"].requires_grad
    assert meta["transpose"].stride == (1, 5)
    assert meta["getattr_1"] is None  # x.shape is not a tensor
    out_meta = meta["output"]
    assert [m.shape for m in out_meta[:2]] == [(5,), (5, 3)]
    assert out_meta[2] == (None, None)  # the structure of the value: a shape of two ints


def test_shape_prop_import_paths():
    from minitorch.fx.passes.shape_prop import ShapeProp as seed_shape_prop

    assert seed_shape_prop is ShapeProp is torch.fx.passes.shape_prop.ShapeProp
    assert torch.fx.passes.graph_drawer.FxGraphDrawer is FxGraphDrawer
    assert fx.subgraph_rewriter.replace_pattern is subgraph_rewriter.replace_pattern


# ---- FxGraphDrawer -------------------------------------------------------------------------

RECORD = re.compile(r'^    "(\w+)" \[label="\{(.*)\}", fillcolor="#[0-9a-f]{6}"\];$')
EDGE = re.compile(r'^    "(\w+)" -> "(\w+)";$')


def parse_dot(text: str) -> tuple[dict[str, list[str]], set[tuple[str, str]]]:
    """{node name: its record fields}, {(input, user)} from our DOT output."""
    lines = text.splitlines()
    assert lines[0].startswith("digraph ") and lines[-1] == "}"
    records, edges = {}, set()
    for line in lines[2:-1]:
        if match := RECORD.match(line):
            records[match[1]] = re.split(r"(?<!\\)\|", match[2])
        else:
            match = EDGE.match(line)
            assert match, line
            edges.add((match[1], match[2]))
    return records, edges


def test_graph_drawer_dot_has_one_record_per_node_and_one_edge_per_input():
    torch.manual_seed(0)
    gm = fx.symbolic_trace(LinearDropRelu())
    records, edges = parse_dot(FxGraphDrawer(gm, "f").get_dot_graph().to_string())
    assert list(records) == names(gm)
    for node in gm.graph.nodes:
        fields = records[node.name]
        target = target_name(node.target)
        assert fields[:3] == [f"name=%{node.name}", f"op_code={node.op}", f"target={target}"]
        assert not any(f.startswith("shape=") for f in fields)
    assert edges == {(i.name, n.name) for n in gm.graph.nodes for i in n.all_input_nodes}


def test_graph_drawer_shows_shapes_after_shape_prop_and_escapes_labels():
    gm = fx.symbolic_trace(lambda x: torch.clamp(x, min=0.0, max=1.0))
    ShapeProp(gm).propagate(torch.randn(2, 3).to(torch.float64))
    records, _ = parse_dot(FxGraphDrawer(gm, "f").get_dot_graph().to_string())
    assert records["clamp"][3:] == [
        r"kwargs=\{min: 0.0, max: 1.0\}",
        "shape=[2, 3]",
        "dtype=float64",
    ]


def test_graph_drawer_needs_dot(monkeypatch):
    gm = fx.symbolic_trace(lambda x: torch.relu(x))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(GraphvizError, match=r"`dot` from Graphviz.*install graphviz") as info:
        FxGraphDrawer(gm, "f").get_dot_graph().create_svg()
    assert isinstance(info.value, MinitorchError)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_seed_inspect_backend_writes_svg(tmp_path):
    def f(x):
        return torch.sin(x) ** 2 + torch.cos(x) ** 2

    def inspect_backend(gm, sample_inputs):  # seed 003, writing under tmp_path
        gm.print_readable(print_output=False)
        with open(tmp_path / "forward.svg", "wb") as file:
            file.write(FxGraphDrawer(gm, "f").get_dot_graph().create_svg())
        return gm.forward

    torch._dynamo.reset()
    compiled_f = torch.compile(f, backend=inspect_backend)
    x = torch.rand(1000, requires_grad=True)
    assert_close(compiled_f(x), f(x))
    svg = (tmp_path / "forward.svg").read_bytes()
    assert b"<svg" in svg and b"name=%sin" in svg
