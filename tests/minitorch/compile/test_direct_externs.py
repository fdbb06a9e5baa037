"""Extern steps that call their op's eager kernel, not the dispatcher ([Note: extern steps
without the dispatcher] in minitorch/compile/output_code.py), against the plain path."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import config
from minitorch.compile.inductor import compile_graph
from minitorch.dispatch import DispatchMode
from tracer.aot import make_fx


def products_and_views(a, b, index):
    x = (a @ b).relu()
    flat = x.reshape(-1)[:5]
    return x.transpose(0, 1) @ a, flat, (a @ b.double().float()).sum(), a[index], index.float()


def _inputs():
    rng = np.random.default_rng(0)
    a = minitorch.tensor(rng.standard_normal((4, 3)).astype(np.float32))
    b = minitorch.tensor(rng.standard_normal((3, 3)).astype(np.float32))
    return a, b, minitorch.tensor([0, 2, 3])


@pytest.mark.parametrize("direct", [True, False])
def test_extern_steps_give_eagers_values_and_dtypes_either_way(monkeypatch, direct):
    monkeypatch.setattr(config, "direct_externs", direct)
    inputs = _inputs()
    compiled = compile_graph(make_fx(products_and_views)(*inputs))
    assert ("___run_kernel(" in compiled.source) is direct
    for got, expected in zip(compiled(*inputs), products_and_views(*inputs), strict=True):
        assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


class CountingMode(DispatchMode):
    """Counts the ops that reach the dispatcher while it is active."""

    def __init__(self) -> None:
        self.ops: list[str] = []

    def run(self, op, args, kwargs, meta):
        self.ops.append(op.name)
        return op(*args, **kwargs)  # the dispatcher took this mode off while it runs


def test_a_dispatch_mode_still_sees_every_extern_op():
    inputs = _inputs()
    compiled = compile_graph(make_fx(products_and_views)(*inputs))
    assert "___run_kernel(" in compiled.source
    mode = CountingMode()
    with mode:
        compiled(*inputs)
    assert mode.ops.count("mm") == 3
