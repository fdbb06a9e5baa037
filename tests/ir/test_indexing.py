"""Index expressions: simplification, printing, and evaluation against plain Python ints."""

from operator import add, floordiv, mod, mul, sub

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ir.indexing import (
    Add,
    Const,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    Var,
    as_expr,
    index_vars,
    is_size_symbol,
    size_symbols,
)

i0, i1, i2 = index_vars("i", 3)


def test_index_vars():
    assert index_vars("r", 2) == (Var("r0"), Var("r1"))
    assert index_vars("i", 0) == ()


def test_size_symbols_are_s_and_digits_only():
    assert size_symbols(2) == (Var("s0"), Var("s1"))
    assert all(is_size_symbol(name) for name in ("s0", "s1", "s12"))
    for name in ("scale", "s_buf", "s", "s1a", "S0", "i0", "r0", "buf0", "s\u00b2"):
        assert not is_size_symbol(name), name


@pytest.mark.parametrize(
    "expr, text",
    [
        (i0 * 1, "i0"),
        (i0 + 0, "i0"),
        (0 + i0, "i0"),
        (i0 * 0, "0"),
        (i0 + 4 * i1, "i0 + 4*i1"),
        (i1 * 4 + i0, "4*i1 + i0"),
        ((i0 // 3) % 5, "(i0//3) % 5"),
        (i0 - i1, "i0 - i1"),
        (i0 - 2 * i1 - 3, "i0 - 2*i1 - 3"),
        (-i0, "-i0"),
        (3 - i0, "-i0 + 3"),
        (2 * (i0 + 1), "2*i0 + 2"),
        (i0 + i0 + 2 * i0, "4*i0"),
        (i0 + 1 + 2, "i0 + 3"),
        (i0 - i0, "0"),
        (i0 * i1 * 2, "2*i0*i1"),
        (4 * (i0 // 3), "4*(i0//3)"),
        (i0 // 1, "i0"),
        (i0 % 1, "0"),
        (as_expr(7) // 2, "3"),
        (as_expr(-7) % 3, "2"),
        ((4 * i0 + i1) // 4, "i0 + i1//4"),
        ((4 * i0 + i1) % 4, "i1 % 4"),
        ((6 * i0 + 3 * i1 + i2) // 3, "2*i0 + i1 + i2//3"),
        ((8 * i0) // 4, "2*i0"),
        ((i0 + i1) // 2, "(i0 + i1)//2"),
        (i0 // i1, "i0//i1"),
        ((i0 // 3) // 4, "i0//12"),
        ((i0 // -3) // 4, "(i0//(-3))//4"),
        (12 * (i0 // 3) + 4 * (i0 % 3) + i1, "4*i0 + i1"),
        (i0 % 4 + 4 * ((i0 // 4) % 3) + 12 * (i0 // 12), "i0"),
        (2 * ((i0 + 1) % 5) + 10 * ((i0 + 1) // 5), "2*i0 + 2"),
        (i0 % 3 + 2 * (i0 // 3), "i0 % 3 + 2*(i0//3)"),
    ],
)
def test_simplifies_and_prints(expr, text):
    assert str(expr) == text


def test_structure():
    # Add/Mul are flattened, with the constant last.
    assert i0 + 4 * i1 + 3 == Add((i0, Mul((i1, Const(4))), Const(3)))
    assert (i0 * i1) * 3 == Mul((i0, i1, Const(3)))
    assert (i0 + i1) + (i2 + 1) == Add((i0, i1, i2, Const(1)))
    assert isinstance((i0 + i1) // 2, FloorDiv)
    assert isinstance((i0 + i1) % 2, Mod)
    # Equal addresses built differently compare (and hash) equal: the scheduler relies on it.
    assert 4 * i0 + i1 == i0 * 4 + i1 * 1 + 0
    assert hash(4 * i0 + i1) == hash(i0 * 4 + i1)


def test_evaluate_ints_and_arrays():
    e = (i0 + 4 * i1) % 5 - i0 // 2
    assert e.evaluate({"i0": 3, "i1": 2}) == (3 + 8) % 5 - 1
    a, b = np.arange(6).reshape(6, 1), np.arange(4).reshape(1, 4)
    np.testing.assert_array_equal(e.evaluate({"i0": a, "i1": b}), (a + 4 * b) % 5 - a // 2)
    assert Const(7).evaluate({}) == 7


def test_free_vars():
    assert (i0 + 4 * i1).free_vars() == {"i0", "i1"}
    assert ((i2 // 3) % i0).free_vars() == {"i0", "i2"}
    assert Const(3).free_vars() == set()


def test_rejects_non_integers():
    with pytest.raises(TypeError):
        i0 + 1.5
    with pytest.raises(TypeError):
        i0 * True
    with pytest.raises(TypeError):
        np.arange(3) + i0  # numpy must not build an object array of Exprs


def test_accepts_numpy_integers():
    assert i0 + np.int64(2) == i0 + 2


# ---- property: simplification never changes the value -------------------------------------

NAMES = ("i0", "i1", "r0")
_leaf = st.one_of(st.integers(-20, 20).map(Const), st.sampled_from(NAMES).map(Var))


def _combine(children):
    nonzero = st.integers(1, 7) | st.integers(-7, -1)
    return st.one_of(
        st.tuples(children, children).map(lambda p: ("+", p[0], p[1])),
        st.tuples(children, children).map(lambda p: ("-", p[0], p[1])),
        st.tuples(children, children).map(lambda p: ("*", p[0], p[1])),
        st.tuples(children, nonzero).map(lambda p: ("//", p[0], p[1])),
        st.tuples(children, nonzero).map(lambda p: ("%", p[0], p[1])),
    )


trees = st.recursive(_leaf, _combine, max_leaves=12)
OPERATORS = {"+": add, "-": sub, "*": mul, "//": floordiv, "%": mod}


def _build(tree):
    """The tree built with Expr operators (which simplify as they go)."""
    if not isinstance(tree, tuple):
        return tree
    op, a, b = tree
    a, b = _build(a), (b if isinstance(b, int) else _build(b))
    return OPERATORS[op](a, b)


def _direct(tree, env):
    """The tree's value computed with plain Python ints, no simplification."""
    if isinstance(tree, Const):
        return tree.value
    if isinstance(tree, Var):
        return env[tree.name]
    op, a, b = tree
    a, b = _direct(a, env), (b if isinstance(b, int) else _direct(b, env))
    return OPERATORS[op](a, b)


@given(trees, st.tuples(*[st.integers(-30, 30)] * 3))
def test_simplification_keeps_the_value(tree, values):
    env = dict(zip(NAMES, values, strict=True))
    expr = _build(tree)
    assert isinstance(expr, Expr)
    assert expr.evaluate(env) == _direct(tree, env)
    assert eval(str(expr), {}, dict(env)) == _direct(tree, env)  # str is valid Python


@given(
    st.lists(st.tuples(st.integers(1, 4), st.integers(-6, 6)), min_size=1, max_size=3),
    st.integers(0, 9),
)
def test_layout_offsets_remembered_or_computed_agree_with_ints(dims, offset):
    """Layout.indexer remembers offsets of Expr indices ([Note: memoized offsets] in
    ir/nodes.py); the result, asked twice, and the offset of an int index (computed each
    time) are each element's offset by the layout's definition."""
    from itertools import product

    from ir.nodes import Layout
    from minitorch import float32

    size, stride = (tuple(d) for d in zip(*dims, strict=True))
    layout = Layout(size, stride, float32, offset)
    index = index_vars("i", len(size))
    expr = layout.indexer()(index)
    assert layout.indexer()(list(index)) == expr
    for element in product(*map(range, size)):
        expected = offset + sum(k * s for k, s in zip(element, stride, strict=True))
        assert expr.evaluate({str(v): k for v, k in zip(index, element, strict=True)}) == expected
        assert layout.indexer()(element) == Const(expected)
