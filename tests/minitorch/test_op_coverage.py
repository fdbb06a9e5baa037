"""Every row of the op table, end to end through `minitorch.compile` with the default backend.

Adding an op touches one place per stage (README, "Adding an op"); this test names the stage
that is missing. For each sample of each op (op_samples/, as test_op_table.py runs them):

    capture    fullgraph=True: the call is captured into one graph, or the test fails
    lowering   a row marked lowering="lowered" must not run as an extern kernel for want of a
               lowering (ir/lowering.py LOWERINGS); "extern" rows run their eager kernel
    codegen    every kernel compiles (a loop-IR op the backend lacks fails here, by name)
    values     compiled equals eager: values, dtypes and shapes
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_op_table import CASES, _draw, _map_arrays, _outputs

import minitorch
from minitorch import _logging
from minitorch.ops import OPS
from tracer.dynamo import reset

# An extern step as the loop_ir stage prints it: "extern:   pow = minitorch.ops.pow(...)  # why"
EXTERN = re.compile(r"^extern: +\w+ = minitorch\.ops\.(\w+)\(.*#\s*(.*)$", re.M)
# values differ run to run: compare shapes and dtypes
RANDOM = {"dropout", "dropout_mask", "rng_state"}

# Samples that capture cannot take whole yet, and why. Strict: each fails the test the day it
# starts to compile, so that this list only shrinks.
CAPTURE_LIMITS = {
    ("index", i): "a slice or Ellipsis argument cannot be passed to a graph op yet"
    for i in (0, 2, 4, 5, 6, 7)
} | {("index_scatter", i): "a slice argument cannot be passed to a graph op yet" for i in (0, 2, 6)}


def _cases():
    for case in CASES:
        name, index, _ = case.values
        reason = CAPTURE_LIMITS.get((name, index))
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        yield pytest.param(*case.values, id=case.id, marks=marks)


def _as_function(op, args, kwargs):
    """`op` called on the sample, as a function of its tensors alone (other arguments are
    globals of it), and those tensors: `def fn(a0, a1): return op(a0, [a1, c1], dim=k_dim)`."""
    namespace: dict = {"op": op}
    tensors: list = []

    def source(a) -> str:
        if isinstance(a, minitorch.Tensor):
            tensors.append(a)
            return f"a{len(tensors) - 1}"
        if isinstance(a, (list, tuple)) and any(isinstance(x, minitorch.Tensor) for x in a):
            items = ", ".join(source(x) for x in a)
            return f"[{items}]" if isinstance(a, list) else f"({items},)"
        namespace[f"c{len(namespace)}"] = a
        return f"c{len(namespace) - 1}"

    call = [source(a) for a in args]
    for key, value in kwargs.items():
        namespace[f"k_{key}"] = value
        call.append(f"{key}=k_{key}")
    params = ", ".join(f"a{i}" for i in range(len(tensors)))
    exec(f"def fn({params}):\n    return op({', '.join(call)})\n", namespace)  # noqa: S102
    return namespace["fn"], tensors


@pytest.mark.parametrize("name, index, sample", list(_cases()))
def test_every_op_compiles_through_every_stage(name, index, sample):
    op = OPS[name]
    args, kwargs = sample
    arrays = _draw(args, seed=index)
    tensors = _map_arrays(arrays, minitorch.tensor)
    fn, inputs = _as_function(op, tensors, kwargs)
    reset()
    with _logging.Recorder() as recorder:
        try:
            compiled = _outputs(minitorch.compile(fn, fullgraph=True)(*inputs))
        except minitorch.CompileError as e:
            pytest.fail(f"{name}: does not compile ({e})")
    eager = _outputs(fn(*inputs))

    loop_ir = "\n".join(a.text for a in recorder.artifacts if a.stage == "loop_ir")
    for op_name, reason in EXTERN.findall(loop_ir):
        if OPS[op_name].lowering == "lowered":
            assert "has no lowering" not in reason, (
                f"{op_name} is marked lowering='lowered' in the op table but ran as an extern "
                f"kernel: add its lowering to ir/lowering.py LOWERINGS ({reason})"
            )

    assert len(compiled) == len(eager), name
    for got, want in zip(compiled, eager, strict=True):
        assert (tuple(got.shape), got.dtype) == (tuple(want.shape), want.dtype), name
        if name in RANDOM:
            continue
        got, want = got.detach().numpy(), want.detach().numpy()
        if want.dtype.kind == "f":
            tol = 1e-5 if want.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)


def test_every_lowered_row_has_a_lowering_and_every_lowering_a_lowered_row():
    from ir.lowering import LOWERINGS

    for op in OPS.values():
        if op.lowering == "lowered":
            assert op in LOWERINGS, f"{op.name}: add its lowering to ir/lowering.py LOWERINGS"
    for op in LOWERINGS:
        assert op.lowering == "lowered", f"{op.name}: mark its row lowering='lowered'"
