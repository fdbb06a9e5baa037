"""Transposed products ([Note: transposed products] in ir/segments.py): permute(mm(a, b))
becomes mm(b^T, a^T) when nothing else reads the product, so BLAS writes row-major memory."""

from __future__ import annotations

import numpy as np

import minitorch
from ir.segments import ExternStep, split_graph, transpose_products
from minitorch import nn, ops
from minitorch.compile.inductor import compile_graph
from tracer.aot import make_fx

DTYPES = {"float32", "float64", "bool"}


def _rand(*shape, seed=0):
    return minitorch.tensor(np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32))


def _extern_calls(graph) -> list[str]:
    """The extern steps of `graph` as `target(args)` with the nodes' own names."""
    steps = split_graph(transpose_products(graph), DTYPES)
    return [f"{s.node.target.name}{tuple(s.node.args)}" for s in steps if isinstance(s, ExternStep)]


def transposed_product(a, b):
    return ((a @ b).T,)


def test_the_transpose_of_a_product_is_a_product_of_transposes():
    a, b = _rand(5, 3, seed=1), _rand(3, 4, seed=2)
    gm = make_fx(transposed_product)(a, b)
    a_node, b_node = (n for n in gm.graph.nodes if n.op == "placeholder")
    calls = _extern_calls(gm.graph)
    assert calls[:2] == [f"permute({b_node.name}, (1, 0))", f"permute({a_node.name}, (1, 0))"]
    assert len(calls) == 3 and calls[2].startswith("mm(")  # mm(b^T, a^T), no permute after
    (out,) = compile_graph(make_fx(transposed_product)(a, b))(a, b)
    expected = (a.numpy() @ b.numpy()).T
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    assert out.is_contiguous()  # written by BLAS as (4, 5) rows, not a view of (5, 4)


def product_and_transpose(a, b):
    product = a @ b
    return product, product.T


def test_a_product_read_twice_stays_a_view():
    a, b = _rand(5, 3, seed=1), _rand(3, 4, seed=2)
    compiled = compile_graph(make_fx(product_and_transpose)(a, b))
    product, transposed = compiled(a, b)
    assert not transposed.is_contiguous()  # the view eager mode makes: same memory
    assert transposed._data.base is product._data or transposed._data.base is product._data.base


def transposed_product_of_a_transpose(x, g):
    return ((x.T @ g).T,)  # a Linear layer's weight gradient: (x^T g)^T = g^T x


def test_a_transpose_of_a_transpose_is_the_node_itself():
    x, g = _rand(6, 3, seed=1), _rand(6, 4, seed=2)
    gm = make_fx(transposed_product_of_a_transpose)(x, g)
    x_node, g_node = (n for n in gm.graph.nodes if n.op == "placeholder")
    g_transposed, product = _extern_calls(gm.graph)
    assert g_transposed.startswith(f"permute({g_node.name}, (1, 0))")
    assert product.startswith("mm(") and product.endswith(f", {x_node.name})")  # x, no permute
    (out,) = compile_graph(make_fx(transposed_product_of_a_transpose)(x, g))(x, g)
    np.testing.assert_allclose(out.numpy(), g.numpy().T @ x.numpy(), rtol=1e-6)


def test_compiled_linear_weight_gradients_are_row_major_and_match_eager():
    model = nn.Sequential(nn.Linear(7, 5), nn.ReLU(), nn.Linear(5, 3))
    x, y = _rand(4, 7), minitorch.tensor(np.array([0, 2, 1, 2]))
    loss_fn = lambda x, y: nn.functional.cross_entropy(model(x), y)  # noqa: E731
    loss_fn(x, y).backward()
    expected = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    minitorch.compile(loss_fn)(x, y).backward()
    for p, grad in zip(model.parameters(), expected, strict=True):
        np.testing.assert_allclose(p.grad.numpy(), grad, rtol=1e-5, atol=1e-6)
        assert p.grad.is_contiguous()


def test_the_rewrite_makes_a_valid_new_graph_and_leaves_its_input_as_traced():
    a, b = _rand(5, 3, seed=1), _rand(3, 4, seed=2)
    gm = make_fx(transposed_product)(a, b)
    traced = str(gm.graph)
    rewritten = transpose_products(gm.graph)
    rewritten.lint()
    assert not any(
        n.target is ops.permute and n.args[0].target is ops.mm
        for n in rewritten.nodes
        if n.op == "call_function"
    )
    assert str(gm.graph) == traced
    gm.graph.lint()
    assert transpose_products(rewritten) is rewritten  # nothing left to rewrite: no copy


def product_of_a_double_transpose(x, w):
    return (x @ w.T.T,)


def test_a_product_reads_a_double_transpose_as_the_matrix_itself():
    x, w = _rand(5, 3, seed=1), _rand(3, 4, seed=2)
    gm = make_fx(product_of_a_double_transpose)(x, w)
    x_node, w_node = (n for n in gm.graph.nodes if n.op == "placeholder")
    assert _extern_calls(gm.graph) == [f"mm({x_node.name}, {w_node.name})"]
    (out,) = compile_graph(make_fx(product_of_a_double_transpose)(x, w))(x, w)
    np.testing.assert_allclose(out.numpy(), x.numpy() @ w.numpy(), rtol=1e-6)
