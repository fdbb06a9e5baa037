"""`minitorch.fx.wrap`: a wrapped module-level function is one call_function node when traced
(its original as the target), runs as itself outside tracing, and must be wrapped at top level."""

import numpy as np
import pytest

import minitorch
from minitorch import fx
from minitorch.errors import MinitorchError


def scaled_tanh(x, scale=2.0):
    return minitorch.tanh(x) * scale


def by_name(x):
    return x.exp() + 1.0


fx.wrap(scaled_tanh)
fx.wrap("by_name")


def model(x, y):
    return scaled_tanh(x, scale=3.0) + by_name(y)


def test_wrapped_functions_are_leaves_named_by_their_originals():
    gm = fx.symbolic_trace(model)
    calls = [(n.target, n.kwargs) for n in gm.graph.nodes if n.op == "call_function"]
    assert calls[:2] == [(scaled_tanh, {"scale": 3.0}), (by_name, {})]
    x, y = minitorch.randn(3), minitorch.randn(3)
    np.testing.assert_allclose(gm(x, y).numpy(), model(x, y).numpy(), rtol=1e-6)
    assert scaled_tanh.__name__ == "scaled_tanh" and by_name(minitorch.zeros(1)).item() == 2.0


def test_wrap_outside_a_module_top_level_is_refused():
    with pytest.raises(MinitorchError, match="top level"):
        fx.wrap("by_name")
