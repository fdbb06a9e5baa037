"""Property test: random graphs of every lowered op, fused and unfused, against numpy."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_testing import GraphBuilder, check

INPUT_SHAPES = [(2, 3), (3,), (2, 1), (), (4, 2, 3), (1, 3)]


def _factorizations(n: int) -> list[tuple[int, ...]]:
    shapes = [(n,), (1, n)]
    shapes += [(a, n // a) for a in range(2, n) if n % a == 0]
    return shapes


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_random_graph(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    g = GraphBuilder()
    nodes = []
    for k in range(data.draw(st.integers(1, 3))):
        shape = data.draw(st.sampled_from(INPUT_SHAPES))
        array = rng.uniform(-1, 1, shape).astype(np.float32)
        if array.ndim == 2 and data.draw(st.booleans()):
            array = np.ascontiguousarray(array.T).T  # same values, transposed strides
        nodes.append(g.placeholder(f"arg{k}_1", array))

    for _ in range(data.draw(st.integers(1, 8))):
        x = data.draw(st.sampled_from(nodes))
        shape = g.value[x].shape
        kind = data.draw(st.sampled_from(["unary", "binary", "scalar", "sum", "reshape", "expand"]))
        if kind == "unary":
            nodes.append(g.call(data.draw(st.sampled_from(["sin", "cos", "neg"])), x))
        elif kind == "binary":
            y = data.draw(st.sampled_from(nodes))
            try:
                np.broadcast_shapes(shape, g.value[y].shape)
            except ValueError:
                continue
            nodes.append(g.call(data.draw(st.sampled_from(["add", "sub", "mul"])), x, y))
        elif kind == "scalar":
            op = data.draw(st.sampled_from(["add", "mul", "div", "pow"]))
            nodes.append(g.call(op, x, 2) if op == "pow" else g.call(op, x, 1.5))
        elif kind == "sum":
            dims = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True)) if shape else []
            keepdim = data.draw(st.booleans())
            nodes.append(g.call("sum", x, dim=tuple(dims) or None, keepdim=keepdim))
        elif kind == "reshape":
            target = data.draw(st.sampled_from(_factorizations(int(np.prod(shape)))))
            nodes.append(g.call("reshape", x, target))
        else:
            nodes.append(g.call("expand", x, (2, *shape)))

    computed = [n for n in nodes if n.op == "call_function"]
    outputs = data.draw(st.lists(st.sampled_from(nodes), min_size=0, max_size=2))
    g.output(*(computed[-1:] + outputs or nodes[:1]))
    check(g, rtol=1e-4, atol=1e-5)
