"""pytorch/examples' fx programs (replace_op, invert, custom_tracer, primitive_library,
inline_function, module_tracer, proxy_based_graph_creation, subgraph_rewriter_basic_use) and
the torch.fx documentation's examples (the add-to-mul transform, an Interpreter and a
Transformer that swap neg and sigmoid, ShapeProp, graph surgery).

Changed: invert maps exp and log only (there is no arcsin); primitive_library's half is double.
"""

# ruff: noqa: E501, B007, UP031 - the original's line lengths, loops and formats
import operator

import minitorch as torch
import minitorch.fx
from minitorch import fx
from minitorch.fx import Graph, GraphModule, Interpreter, Tracer, Transformer, symbolic_trace


def replace_op():
    class M(torch.nn.Module):
        def forward(self, x, y):
            return x + y, torch.add(x, y), x.add(y)

    traced = symbolic_trace(M())
    patterns = set([operator.add, torch.add, "add"])
    for n in traced.graph.nodes:
        if any(n.target == pattern for pattern in patterns):
            with traced.graph.inserting_after(n):
                new_node = traced.graph.call_function(torch.mul, n.args, n.kwargs)
                n.replace_all_uses_with(new_node)
            traced.graph.erase_node(n)
    traced.recompile()
    x, y = torch.randn(3), torch.randn(3)
    out = traced(x, y)
    assert all(torch.allclose(o, x * y) for o in out)
    print(traced.code)


def transform_add_to_mul():
    def transform(m, tracer_class: type = fx.Tracer):
        graph: fx.Graph = tracer_class().trace(m)
        for node in graph.nodes:
            if node.op == "call_function":
                if node.target == torch.add:
                    node.target = torch.mul
        graph.lint()
        return fx.GraphModule(m, graph)

    class M(torch.nn.Module):
        def forward(self, x, y):
            return torch.add(x, y)

    m = transform(M())
    x, y = torch.randn(4), torch.randn(4)
    torch.testing.assert_close(m(x, y), x * y)


def proxy_based_graph_creation():
    graph = torch.fx.Graph()
    tracer = torch.fx.proxy.GraphAppendingTracer(graph)
    raw1 = graph.placeholder("x")
    raw2 = graph.placeholder("y")
    y = torch.fx.Proxy(raw1, tracer)
    z = torch.fx.Proxy(raw2, tracer)
    a = torch.cat([y, z])
    b = torch.tanh(a)
    c = torch.neg(b)
    z = torch.add(b, c)
    graph.output(c.node)
    mod = torch.fx.GraphModule(torch.nn.Module(), graph)
    p, q = torch.randn(2), torch.randn(3)
    torch.testing.assert_close(mod(p, q), -torch.tanh(torch.cat([p, q])))


def invert():
    invert_mapping = {}

    def add_inverse(a, b):
        invert_mapping[a] = b
        invert_mapping[b] = a

    inverses = [(torch.exp, torch.log)]
    for a, b in inverses:
        add_inverse(a, b)

    def invert_(model):
        fx_model = fx.symbolic_trace(model)
        new_graph = fx.Graph()
        env = {}
        for node in reversed(fx_model.graph.nodes):
            if node.op == "call_function":
                new_node = new_graph.call_function(invert_mapping[node.target], (env[node.name],))
                env[node.args[0].name] = new_node
            elif node.op == "output":
                new_node = new_graph.placeholder(node.name)
                env[node.args[0].name] = new_node
            elif node.op == "placeholder":
                new_graph.output(env[node.name])
            else:
                raise RuntimeError("Not implemented")
        new_graph.lint()
        return fx.GraphModule(fx_model, new_graph)

    def g(x):
        return torch.exp(torch.exp(x))

    res = invert_(g)
    print(res.code)
    x = torch.arange(5) + 2.0  # log(log(1)) is log(0)
    torch.testing.assert_close(g(res(x)), x)


def custom_tracer():
    class M1(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.relu = torch.nn.ReLU()

        def forward(self, x):
            return self.relu(x)

    default_traced: GraphModule = symbolic_trace(M1())
    assert [n.op for n in default_traced.graph.nodes] == ["placeholder", "call_module", "output"]

    class LowerReluTracer(torch.fx.Tracer):
        def is_leaf_module(self, m: torch.nn.Module, qualname: str):
            if isinstance(m, torch.nn.ReLU):
                return False
            return super().is_leaf_module(m, qualname)

    lower_relu_tracer = LowerReluTracer()
    lower_relu_graph = lower_relu_tracer.trace(M1())
    assert "call_module" not in [n.op for n in lower_relu_graph.nodes]

    class M2(torch.nn.Module):
        def forward(self, a, b):
            return a + b

    class TaggingTracer(Tracer):
        def create_node(self, kind: str, target, args, kwargs, name=None, type_expr=None):
            n = super().create_node(kind, target, args, kwargs, name)
            n.tag = "foo"
            return n

    custom_traced_graph: Graph = TaggingTracer().trace(M2())

    def assert_all_nodes_have_tags(g: Graph) -> bool:
        for n in g.nodes:
            if not hasattr(n, "tag") or not n.tag == "foo":
                return False
        return True

    assert assert_all_nodes_have_tags(custom_traced_graph)


def sigmoid_lowp(x):
    x = x.float()
    x = x.sigmoid()
    return x.double()


torch.fx.wrap("sigmoid_lowp")


def add_lowp(a, b):
    a, b = a.float(), b.float()
    c = a + b
    return c.double()


torch.fx.wrap(add_lowp)


def primitive_library():
    class Foo(torch.nn.Module):
        def forward(self, x, y):
            x = sigmoid_lowp(x)
            y = sigmoid_lowp(y)
            return add_lowp(x, y)

    traced = torch.fx.symbolic_trace(Foo())
    targets = [n.target for n in traced.graph.nodes if n.op == "call_function"]
    assert targets == [sigmoid_lowp, sigmoid_lowp, add_lowp], targets

    def inline_lowp_func(n: torch.fx.Node):
        if n.op == "call_function" and n.target.__module__ == inline_lowp_func.__module__:
            tracer = torch.fx.proxy.GraphAppendingTracer(n.graph)
            with n.graph.inserting_before(n):
                proxy_args = torch.fx.node.map_arg(n.args, lambda x: torch.fx.Proxy(x, tracer))
                proxy_kwargs = torch.fx.node.map_arg(n.kwargs, lambda x: torch.fx.Proxy(x, tracer))
                output_proxy = n.target(*proxy_args, **proxy_kwargs)
                n.replace_all_uses_with(output_proxy.node)
                n.graph.erase_node(n)

    for node in list(traced.graph.nodes):
        if node.op == "call_function" and node.target is sigmoid_lowp:
            inline_lowp_func(node)
    traced.recompile()
    print(traced.code)
    x, y = torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float64)
    torch.testing.assert_close(traced(x, y), Foo()(x, y))


def inline_function():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.relu = torch.nn.ReLU()

        def forward(self, x):
            return self.relu(x) + 1.0

    m = symbolic_trace(M())
    tracer = torch.fx.proxy.GraphAppendingTracer(m.graph)
    for node in m.graph.nodes:
        if node.op == "call_module" and type(m.get_submodule(node.target)) is torch.nn.ReLU:
            with m.graph.inserting_before(node):
                proxy_args = torch.fx.node.map_arg(node.args, lambda n: torch.fx.Proxy(n, tracer))
                proxy_kwargs = torch.fx.node.map_arg(
                    node.kwargs, lambda n: torch.fx.Proxy(n, tracer)
                )
                output_proxy = m.get_submodule(node.target).forward(*proxy_args, **proxy_kwargs)
                node.replace_all_uses_with(output_proxy.node)
                m.graph.erase_node(node)
    m.recompile()
    assert "call_module" not in [n.op for n in m.graph.nodes]
    x = torch.randn(5)
    torch.testing.assert_close(m(x), torch.relu(x) + 1.0)


def module_tracer():
    from tests.models.programs import resnet as R

    class ModulePathTracer(torch.fx.Tracer):
        current_module_qualified_name: str = ""
        node_to_originating_module: dict[torch.fx.Node, str] = {}

        def call_module(self, m: torch.nn.Module, forward, args, kwargs):
            old_qualname = self.current_module_qualified_name
            try:
                self.current_module_qualified_name = self.path_of_module(m)
                return super().call_module(m, forward, args, kwargs)
            finally:
                self.current_module_qualified_name = old_qualname

        def create_proxy(self, kind: str, target, args, kwargs, name=None, type_expr=None):
            proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
            self.node_to_originating_module[proxy.node] = self.current_module_qualified_name
            return proxy

    rn18 = R.tiny_resnet()
    tracer = ModulePathTracer()
    traced_rn18 = tracer.trace(rn18)
    for node in traced_rn18.nodes:
        module_qualname = tracer.node_to_originating_module.get(node)
        print("Node", node, "is from module", module_qualname)


def neg_sigm_interpreter():
    class NegSigmSwapInterpreter(Interpreter):
        def call_function(self, target, args, kwargs):
            if target == torch.sigmoid:
                return torch.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                call_self, *args_tail = args
                return call_self.sigmoid(*args_tail, **kwargs)
            return super().call_method(target, args, kwargs)

    def fn(x):
        return torch.sigmoid(x).neg()

    gm = torch.fx.symbolic_trace(fn)
    input = torch.randn(3, 4)
    result = NegSigmSwapInterpreter(gm).run(input)
    torch.testing.assert_close(result, torch.neg(input).sigmoid())


def neg_sigm_transformer():
    class NegSigmSwapXformer(Transformer):
        def call_function(self, target, args, kwargs):
            if target == torch.sigmoid:
                return torch.neg(*args, **kwargs)
            return super().call_function(target, args, kwargs)

        def call_method(self, target, args, kwargs):
            if target == "neg":
                call_self, *args_tail = args
                return call_self.sigmoid(*args_tail, **kwargs)
            return super().call_method(target, args, kwargs)

    def fn(x):
        return torch.sigmoid(x).neg()

    gm = torch.fx.symbolic_trace(fn)
    transformed: torch.nn.Module = NegSigmSwapXformer(gm).transform()
    input = torch.randn(3, 4)
    torch.testing.assert_close(transformed(input), torch.neg(input).sigmoid())


def shape_prop():
    from minitorch.fx.passes.shape_prop import ShapeProp

    class TwoLayerNet(torch.nn.Module):
        def __init__(self, D_in, H, D_out):
            super().__init__()
            self.linear1 = torch.nn.Linear(D_in, H)
            self.linear2 = torch.nn.Linear(H, D_out)

        def forward(self, x):
            h_relu = self.linear1(x).clamp(min=0)
            y_pred = self.linear2(h_relu)
            return y_pred

    D_in, H, D_out = 1000, 100, 10
    model = TwoLayerNet(D_in, H, D_out)
    gm = torch.fx.symbolic_trace(model)
    sample_input = torch.randn(50, D_in)
    ShapeProp(gm).propagate(sample_input)
    for node in gm.graph.nodes:
        print(node.name, node.meta["tensor_meta"].dtype, node.meta["tensor_meta"].shape)
    assert gm.graph.find_nodes(op="output")[0].meta["tensor_meta"].shape == torch.Size([50, 10])


def subgraph_rewriter():
    from minitorch.fx import subgraph_rewriter

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, x, w1, w2):
            val1 = torch.neg(w1)
            m1 = torch.cat([val1, w2]).sum()
            val2 = torch.neg(w1)
            m2 = torch.cat([val2, w2]).sum()
            return x + torch.max(m1) + torch.max(m2)

    traced = symbolic_trace(M())

    def pattern(a1, a2):
        val1 = torch.neg(a1)
        return torch.cat([val1, a2]).sum()

    def replacement(w1, w2):
        return torch.stack([w1, w2])

    subgraph_rewriter.replace_pattern(traced, pattern, replacement)
    traced.graph.lint()
    print(traced.code)
    x, w1, w2 = torch.randn(2), torch.randn(2), torch.randn(2)
    want = x + torch.max(torch.stack([w1, w2])) * 2
    torch.testing.assert_close(traced(x, w1, w2), want)


def graph_manipulation():
    """The fx docs: print_tabular, inserting nodes, dead code, gm.code, retracing."""

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.param = torch.nn.Parameter(torch.rand(3, 4))
            self.linear = torch.nn.Linear(4, 5)

        def forward(self, x):
            return self.linear(x + self.param).clamp(min=0.0, max=1.0)

    gm = symbolic_trace(M())
    print(gm.graph)
    gm.graph.print_tabular()
    for node in gm.graph.nodes:
        if node.op == "call_method" and node.target == "clamp":
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(torch.relu, args=(node,))
                node.replace_all_uses_with(new)
                new.args = (node,)
    unused = gm.graph.call_function(torch.exp, (next(iter(gm.graph.nodes)),))
    gm.graph.eliminate_dead_code()
    assert unused not in list(gm.graph.nodes)
    gm.recompile()
    print(gm.code)
    x = torch.randn(3, 4)
    plain = M()
    plain.load_state_dict(gm.state_dict())
    torch.testing.assert_close(gm(x), torch.relu(plain(x)))
    gm2 = symbolic_trace(gm)  # retrace a GraphModule
    torch.testing.assert_close(gm2(x), gm(x))


ALL = [
    replace_op,
    transform_add_to_mul,
    proxy_based_graph_creation,
    invert,
    custom_tracer,
    primitive_library,
    inline_function,
    module_tracer,
    neg_sigm_interpreter,
    neg_sigm_transformer,
    shape_prop,
    subgraph_rewriter,
    graph_manipulation,
]
