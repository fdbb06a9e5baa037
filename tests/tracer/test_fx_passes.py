"""The inference passes: conv-bn fusion, dropout removal, CSE, constant folding.

Every rewritten module is held to eager minitorch on the same inputs, and the node counts
before and after pin what each pass removed and what it had to keep (random draws, writes).
"""

from __future__ import annotations

import copy
import operator
import textwrap
from typing import Any

import numpy as np
import pytest

import minitorch as torch
import minitorch.fx as fx
import minitorch.nn as nn
import minitorch.nn.functional as F
from minitorch.errors import MinitorchError
from minitorch.nn.utils.fusion import fuse_conv_bn_eval
from tracer.fx import Graph, GraphModule, symbolic_trace
from tracer.fx.passes import const_fold as const_fold_module
from tracer.fx.passes import cse as cse_module
from tracer.fx.passes import fuse_conv_bn as fuse_module
from tracer.fx.passes import remove_dropout as dropout_module
from tracer.fx.passes.const_fold import fold_constants
from tracer.fx.passes.cse import eliminate_common_subexpressions
from tracer.fx.passes.fuse_conv_bn import fuse_conv_bn
from tracer.fx.passes.remove_dropout import remove_dropout


def assert_close(actual, expected) -> None:
    np.testing.assert_allclose(
        actual.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-5
    )


def count(gm, op: str, target: Any = None) -> int:
    return len(gm.graph.find_nodes(op=op, target=target))


def module_types(gm) -> list[type]:
    return [type(gm.get_submodule(n.target)) for n in gm.graph.nodes if n.op == "call_module"]


def with_statistics(model: nn.Module) -> nn.Module:
    """Give every BatchNorm running statistics and an affine map that are not the identity."""
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)) and m.running_mean is not None:
            n = m.num_features
            m.running_mean = torch.randn(n)
            m.running_var = torch.rand(n) + 0.5
            m.weight = nn.Parameter(torch.randn(n))
            m.bias = nn.Parameter(torch.randn(n))
    return model.eval()


# ---- conv-bn fusion ------------------------------------------------------------------------


class ConvBnNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.block = nn.Sequential(nn.Conv2d(4, 4, 3, bias=False), nn.BatchNorm2d(4), nn.ReLU())

    def forward(self, x):
        return self.block(torch.relu(self.bn(self.conv(x)))).sum(dim=1)


def test_fuse_conv_bn_matches_eager_and_removes_the_batch_norms():
    torch.manual_seed(0)
    model = with_statistics(ConvBnNet())
    gm = symbolic_trace(model)
    assert module_types(gm).count(nn.BatchNorm2d) == 2
    fused = fuse_conv_bn(gm)
    fused.graph.lint()
    assert module_types(fused) == [nn.Conv2d, nn.Conv2d, nn.ReLU]
    assert not any(isinstance(m, nn.BatchNorm2d) for m in fused.modules())
    x = torch.randn(2, 3, 6, 6)
    assert_close(fused(x), model(x))
    # The caller's module and layers are untouched: the fused convolutions are copies.
    assert module_types(gm).count(nn.BatchNorm2d) == 2
    assert gm.get_submodule("conv") is model.conv
    assert fused.get_submodule("conv") is not model.conv
    assert_close(gm(x), model(x))


def test_fuse_conv_bn_accepts_a_plain_module_and_keeps_its_class_name():
    torch.manual_seed(0)
    model = with_statistics(nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3)))
    fused = fuse_conv_bn(model)
    assert module_types(fused) == [nn.Conv2d]
    assert fused.code.splitlines()[1:] == [
        "    _0 = getattr(self, '0')(input_1);  input_1 = None",
        "    return _0",
    ]
    assert repr(fused).startswith("Sequential()")
    x = torch.randn(1, 2, 5, 5)
    assert_close(fused(x), model(x))


def test_fuse_conv_bn_in_training_mode_is_an_error():
    model = ConvBnNet()  # training mode
    gm = symbolic_trace(model)
    with pytest.raises(MinitorchError, match=r"'conv' -> 'bn' is in training mode.*eval"):
        fuse_conv_bn(gm)
    assert module_types(gm).count(nn.BatchNorm2d) == 2  # nothing half-fused


class UnfusablePairs(nn.Module):
    """Pairs that must not fuse: the conv output has another user; the conv runs twice; the
    BatchNorm has no running statistics (in eval mode it normalizes with the batch's own)."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)
        self.shared, self.bn2 = nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)
        self.conv3, self.bn3 = nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2, track_running_stats=False)

    def forward(self, x):
        y = self.conv(x)
        a = self.bn(y) + y
        b = self.bn2(self.shared(x)) + self.shared(x)
        return a + b + self.bn3(self.conv3(x))


def test_fuse_conv_bn_leaves_pairs_whose_rewrite_would_change_other_results():
    torch.manual_seed(0)
    model = with_statistics(UnfusablePairs())
    fused = fuse_conv_bn(model)
    assert module_types(fused).count(nn.BatchNorm2d) == 3
    x = torch.randn(2, 2, 3, 3)
    assert_close(fused(x), model(x))


# ---- dropout removal -----------------------------------------------------------------------


class Dropouts(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        y = F.dropout(self.linear(x), 0.3, training=True)  # random even in eval mode
        return self.drop(y).relu() + F.dropout(input=x, p=0.2, training=False)


def test_remove_dropout_removes_module_and_functional_dropout():
    torch.manual_seed(0)
    model = Dropouts()
    gm = symbolic_trace(model)
    assert count(gm, "call_function", F.dropout) == 2 and count(gm, "call_module", "drop") == 1
    clean = remove_dropout(gm)
    clean.graph.lint()
    assert [n.name for n in clean.graph.nodes] == ["x", "linear", "relu", "add", "output"]
    assert not hasattr(clean, "drop")
    x = torch.randn(3, 4)
    expected = model.linear(x).relu() + x
    assert_close(clean(x), expected)
    assert_close(clean.train()(x), expected)  # no randomness left, in either mode
    assert count(gm, "call_function", F.dropout) == 2  # the input graph is untouched


def test_jit_trace_of_an_eval_model_has_no_dropout_to_remove():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)).eval()
    traced = torch.jit.trace(model, torch.randn(2, 4))
    assert "dropout" not in traced.code
    assert remove_dropout(traced).code == traced.code


# ---- common-subexpression elimination ------------------------------------------------------


def repeated(x):
    a = (x.sin() * 2).exp() + torch.cos(x)
    b = (x.sin() * 2).exp() + torch.cos(x)
    return a * b + x.sum(dim=0) + x.sum(dim=1, keepdim=True)


def test_cse_merges_repeated_expressions():
    gm = symbolic_trace(repeated)
    merged = eliminate_common_subexpressions(gm)
    merged.graph.lint()
    calls = lambda g: sum(n.op in ("call_function", "call_method") for n in g.graph.nodes)
    assert calls(gm) == 15 and calls(merged) == 10  # sin, mul, exp, cos, add: once each
    assert count(merged, "call_method", "sum") == 2  # different kwargs: both stay
    x = torch.randn(4, 4)
    assert_close(merged(x), repeated(x))
    assert calls(gm) == 15  # the input graph is untouched


def test_cse_keeps_constants_of_different_types_apart():
    fn = lambda x: (x + 1, x + 1.0, x + True, x + 1)
    merged = eliminate_common_subexpressions(symbolic_trace(fn))
    assert count(merged, "call_function", operator.add) == 3
    x = torch.tensor([1, 2, 3])
    for got, want in zip(merged(x), fn(x)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_cse_keeps_the_sign_of_zero_constants_apart():
    fn = lambda x: (x * 0.0, x * -0.0)  # 0.0 == -0.0, but the products' signs differ
    merged = eliminate_common_subexpressions(symbolic_trace(fn))
    assert count(merged, "call_function", operator.mul) == 2
    x = torch.tensor([1.0, -1.0])
    for got, want in zip(merged(x), fn(x)):
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()))


def test_cse_never_merges_random_draws():
    fn = lambda x: (torch.rand_like(x), torch.rand_like(x), F.dropout(x), F.dropout(x))
    merged = eliminate_common_subexpressions(symbolic_trace(fn))
    assert len(merged.graph.nodes) == 6
    a, b, c, d = merged(torch.ones(50))
    assert not np.array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(c.numpy(), d.numpy())


def test_cse_never_merges_module_calls():
    class TwoDraws(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(x), self.drop(x)  # training mode: two different masks

    merged = eliminate_common_subexpressions(TwoDraws())
    assert count(merged, "call_module", "drop") == 2
    a, b = merged(torch.ones(50))
    assert not np.array_equal(a.numpy(), b.numpy())


def test_cse_on_jit_trace_merges_ops_but_not_dropout_masks():
    fn = lambda x: (x + 1).sin() * (x + 1).sin() + F.dropout(x) + F.dropout(x)
    torch.manual_seed(0)
    traced = torch.jit.trace(fn, torch.randn(40))
    merged = eliminate_common_subexpressions(traced)
    draw = torch.ops.rng_state  # dropout_mask is dropout_keep(x, p, rng_state(x))
    assert count(traced, "call_function", draw) == 2 and count(merged, "call_function", draw) == 2
    assert count(traced, "call_function", torch.ops.sin) == 2
    assert count(merged, "call_function", torch.ops.sin) == 1
    x = torch.randn(40)
    torch.manual_seed(1)
    expected = traced(x)
    torch.manual_seed(1)
    assert_close(merged(x), expected)  # the same draws in the same order


def test_cse_never_merges_across_or_before_an_in_place_write():
    def shifted(x):
        a = x + 1
        x.add_(1)
        return a, x + 1  # a != x + 1 now

    def cloned(x):
        a, b = x.clone(), x.clone()
        a.add_(1)  # merged clones would write b too
        return a, b

    def relu_in_place(x):
        a = x.cos() + x
        F.relu(x, True)  # inplace, passed by position
        return a, x.cos() + x

    for fn in (shifted, cloned, relu_in_place):
        merged = eliminate_common_subexpressions(symbolic_trace(fn))
        assert len(merged.graph.nodes) == len(symbolic_trace(fn).graph.nodes)
        got, want = merged(torch.tensor([-1.0, 2.0])), fn(torch.tensor([-1.0, 2.0]))
        for g, w in zip(got, want):
            assert_close(g, w)


def test_cse_never_merges_across_a_functional_batch_norm_in_training():
    class Stats(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mean", torch.zeros(3))
            self.register_buffer("var", torch.ones(3))

        def forward(self, x):
            before = self.mean * 2
            F.batch_norm(x, self.mean, self.var, training=True)  # updates mean in place
            return before, self.mean * 2

    merged = eliminate_common_subexpressions(Stats())
    assert count(merged, "call_function", operator.mul) == 2
    before, after = merged(torch.randn(4, 3) + 5)
    assert not np.allclose(before.numpy(), after.numpy())


def test_cse_keeps_module_calls_and_merges_after_the_last_write():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear, self.relu = nn.Linear(3, 3), nn.ReLU(inplace=True)

        def forward(self, x):
            y = self.linear(x) + self.linear(x)  # two calls: a module is never merged
            y = self.relu(y)  # writes y: nothing before this line is merged
            return (y * 2).exp() + (y * 2).exp() + x.cos() + x.cos()

    torch.manual_seed(0)
    model = Net()
    merged = eliminate_common_subexpressions(model)
    assert count(merged, "call_module", "linear") == 2
    assert count(merged, "call_method", "exp") == 1 and count(merged, "call_method", "cos") == 1
    x = torch.randn(2, 3)
    assert_close(merged(x), model(x))


# ---- constant folding ----------------------------------------------------------------------


class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4))
        self.b = nn.Parameter(torch.randn(4))

    def forward(self, x):
        scale = self.w.exp() * 2 + self.b.sin()  # parameters only: one constant
        return (x * scale).reshape(self.w.shape[0], -1) + self.b


def test_fold_constants_precomputes_parameter_only_subgraphs():
    torch.manual_seed(0)
    model = Affine()
    gm = symbolic_trace(model)
    folded = fold_constants(gm)
    folded.graph.lint()
    ops = [(n.op, n.target) for n in folded.graph.nodes]
    assert ("call_method", "exp") not in ops and ("call_method", "sin") not in ops
    assert ("get_attr", "_folded_constant0") in ops and ("get_attr", "w") in ops  # w.shape
    assert ("call_function", getattr) in ops  # a constant Python value stays a node
    assert dict(folded.named_buffers()).keys() == {"_folded_constant0"}
    x = torch.randn(4)
    assert_close(folded(x), model(x))
    assert count(gm, "call_method", "exp") == 1  # the input graph is untouched


def test_folded_constant_is_a_snapshot_of_the_parameters():
    torch.manual_seed(0)
    model = Affine()
    folded = fold_constants(model)
    x = torch.randn(4)
    before = model(x)
    with torch.no_grad():
        model.w.mul_(3.0)  # the folded value was computed from the old w: it is not redone
    assert not np.allclose(model(x).detach().numpy(), before.detach().numpy())
    assert_close(folded(x), before)
    assert_close(fold_constants(model)(x), model(x))  # folding again refreshes it


def test_fold_constants_never_folds_random_draws():
    class Noisy(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(50))

        def forward(self, x):
            return x + (self.w + torch.rand_like(self.w))

    folded = fold_constants(Noisy())
    assert count(folded, "call_function", torch.rand_like) == 1
    x = torch.zeros(50)
    assert not np.array_equal(folded(x).detach().numpy(), folded(x).detach().numpy())


def test_fold_constants_on_jit_trace_folds_the_weight_transpose():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    traced = torch.jit.trace(model, torch.randn(2, 4))
    assert count(traced, "call_function", torch.ops.permute) == 1
    folded = fold_constants(traced)
    assert count(folded, "call_function", torch.ops.permute) == 0
    assert not hasattr(folded.get_submodule("0"), "weight")
    assert [name for name, _ in folded.named_parameters()] == ["0.bias"]  # still trainable
    x = torch.randn(5, 4)
    assert_close(folded(x), model(x))


class Steps(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("steps", torch.zeros(3))
        self.bn = nn.BatchNorm1d(3)
        self.w = nn.Parameter(torch.randn(3))

    def forward(self, x):
        self.steps.add_(1)  # a write: exp(steps) changes at every call, it is no constant
        return self.bn(x) * self.steps.exp() * self.w.exp()


def test_fold_constants_leaves_a_graph_that_writes_alone():
    torch.manual_seed(0)
    model = Steps().eval()
    folded = fold_constants(copy.deepcopy(model))  # its own buffer, written by its own runs
    assert count(folded, "call_method", "exp") == 2
    x = torch.randn(2, 3)
    for _ in range(2):
        assert_close(folded(x), model(x))


def test_fold_constants_leaves_a_training_batch_norm_graph_alone():
    class BnScale(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn, self.w = nn.BatchNorm1d(3), nn.Parameter(torch.randn(3))

        def forward(self, x):
            return self.bn(x) * self.w.exp()

    model = BnScale()  # training mode: bn updates its running statistics
    assert count(fold_constants(model), "call_method", "exp") == 1
    assert count(fold_constants(model.eval()), "call_method", "exp") == 0


def test_graph_deepcopy_shares_targets_and_copies_nodes():
    traced = torch.jit.trace(lambda x: (x + 1).sin(), torch.randn(3))
    graph = copy.deepcopy(traced.graph)
    graph.lint()
    assert str(graph) == str(traced.graph)
    assert [n.target for n in graph.find_nodes(op="call_function")] == [
        torch.ops.add,
        torch.ops.sin,
    ]
    assert not set(graph.nodes) & set(traced.graph.nodes)
    assert isinstance(copy.deepcopy(traced), GraphModule)
    fresh = Graph()
    assert str(copy.deepcopy(fresh)) == "graph():"


# ---- the printed examples in the passes' docstrings ------------------------------------------


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))

    def forward(self, x):
        return x * self.w.exp()


DOC_EXAMPLES = {  # module -> how its docstring makes the module whose code it prints
    cse_module: lambda: eliminate_common_subexpressions(
        symbolic_trace(lambda x: x.sin() + x.sin())
    ),
    const_fold_module: lambda: fold_constants(symbolic_trace(Scale())),
    fuse_module: lambda: fuse_conv_bn(
        symbolic_trace(nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU()).eval())
    ),
    dropout_module: lambda: remove_dropout(
        symbolic_trace(nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.ReLU()))
    ),
}


@pytest.mark.parametrize("module", DOC_EXAMPLES, ids=lambda m: m.__name__.rsplit(".")[-1])
def test_docstring_example_prints_this_code(module):
    doc = module.__doc__
    block = doc[doc.index("    def forward") :].split("\n\n")[0]
    expected = textwrap.dedent(block) + "\n"
    assert DOC_EXAMPLES[module]().code == expected


# ---- seed 001: fuse and remove_dropout, as written there ------------------------------------
# The seed's own functions with `import minitorch as torch`; only its type hints are modern
# (tuple, not typing.Tuple) and its pattern list is cut to the layers minitorch has.

from minitorch.fx.node import Argument, Target  # noqa: E402 - as the seed imports them


def _parent_name(target: str) -> tuple[str, str]:
    """
    Splits a qualname into parent path and last atom.
    For example, `foo.bar.baz` -> (`foo.bar`, `baz`)
    """
    *parent, name = target.rsplit(".", 1)
    return parent[0] if parent else "", name


def matches_module_pattern(pattern, node: fx.Node, modules: dict[str, Any]):
    if len(node.args) == 0:
        return False
    nodes: tuple[Any, fx.Node] = (node.args[0], node)
    for expected_type, current_node in zip(pattern, nodes):
        if not isinstance(current_node, fx.Node):
            return False
        if current_node.op != "call_module":
            return False
        if not isinstance(current_node.target, str):
            return False
        if current_node.target not in modules:
            return False
        if type(modules[current_node.target]) is not expected_type:
            return False
    return True


def replace_node_module(node: fx.Node, modules: dict[str, Any], new_module: torch.nn.Module):
    assert isinstance(node.target, str)
    parent_name, name = _parent_name(node.target)
    modules[node.target] = new_module
    setattr(modules[parent_name], name, new_module)


def fuse(model: torch.nn.Module, inplace=False) -> torch.nn.Module:
    """
    Fuses convolution/BN layers for inference purposes. Will deepcopy your
    model by default, but can modify the model inplace as well.
    """
    # The seed also lists (nn.Conv1d, nn.BatchNorm1d) and (nn.Conv3d, nn.BatchNorm3d);
    # minitorch has Conv2d only.
    patterns = [(nn.Conv2d, nn.BatchNorm2d)]
    if not inplace:
        model = copy.deepcopy(model)
    fx_model = fx.symbolic_trace(model)
    modules = dict(fx_model.named_modules())
    new_graph = copy.deepcopy(fx_model.graph)

    for pattern in patterns:
        for node in new_graph.nodes:
            if matches_module_pattern(pattern, node, modules):
                if len(node.args[0].users) > 1:
                    continue
                conv = modules[node.args[0].target]
                bn = modules[node.target]
                fused_conv = fuse_conv_bn_eval(conv, bn)
                replace_node_module(node.args[0], modules, fused_conv)
                node.replace_all_uses_with(node.args[0])
                new_graph.erase_node(node)
    return fx.GraphModule(fx_model, new_graph)


def seed_remove_dropout(model: nn.Module) -> nn.Module:  # the seed's `remove_dropout`
    """
    Removes all dropout layers from the module.
    """
    fx_model = fx.symbolic_trace(model)

    class DropoutRemover(torch.fx.Transformer):
        def call_module(
            self, target: Target, args: tuple[Argument, ...], kwargs: dict[str, Any]
        ) -> Any:
            if isinstance(self.submodules[target], nn.Dropout):
                assert len(args) == 1
                return args[0]
            else:
                return super().call_module(target, args, kwargs)

    return DropoutRemover(fx_model).transform()


def test_seed_fuse_matches_eager_and_our_pass():
    torch.manual_seed(0)
    model = with_statistics(ConvBnNet())
    weight = model.conv.weight.detach().numpy().copy()
    fused = fuse(model)
    assert module_types(fused) == [nn.Conv2d, nn.Conv2d, nn.ReLU]
    x = torch.randn(2, 3, 6, 6)
    assert_close(fused(x), model(x))
    assert fused.code == fuse_conv_bn(model).code
    assert_close(fuse_conv_bn(model)(x), fused(x))
    np.testing.assert_array_equal(model.conv.weight.detach().numpy(), weight)  # a deep copy


def test_seed_remove_dropout_matches_eager_and_our_pass():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.ReLU(), nn.Dropout(0.1))
    clean = seed_remove_dropout(model)
    assert nn.Dropout not in module_types(clean)
    assert clean.code == remove_dropout(model).code
    x = torch.randn(3, 4)
    assert_close(clean(x), model.eval()(x))


def extract_subgraph(
    orig_module: nn.Module, nodes: list[fx.Node], inputs: list[fx.Node], outputs: list[fx.Node]
):
    """
    Given lists of nodes from an existing graph that represent a subgraph, returns a submodule
    that executes that subgraph.
    """
    new_graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    for input in inputs:
        new_node = new_graph.placeholder(input.name)
        env[input] = new_node
    for node in nodes:
        new_node = new_graph.node_copy(node, lambda x: env[x])
        env[node] = new_node
    new_graph.output([env[output] for output in outputs])
    new_graph.lint()
    return fx.GraphModule(orig_module, new_graph)


def test_seed_extract_subgraph_runs_the_middle_of_a_model():
    # The seed's optimize_for_inference (MKL-DNN layouts) needs torch.utils.mkldnn, a PyTorch
    # CPU backend outside minitorch; its pure-fx helper, extract_subgraph, runs as written.
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3), nn.Sigmoid())
    gm = fx.symbolic_trace(model)
    by_name = {n.name: n for n in gm.graph.nodes}
    middle = [by_name["_1"], by_name["_2"]]  # relu, then the second linear
    sub = extract_subgraph(gm, middle, [by_name["_0"]], [by_name["_2"]])
    assert [n.op for n in sub.graph.nodes] == [
        "placeholder",
        "call_module",
        "call_module",
        "output",
    ]
    h = torch.randn(5, 8)
    (out,) = sub(h)
    assert_close(out, model[2](model[1](h)))
