"""Assignment 1, `op`: an op end to end, softplus, added from a plugin through each stage's hook.

    python -m minitorch.course grade op --plugin my_softplus.py

The student adds `softplus(x, beta=1, threshold=20)` as PyTorch defines it:
log(1 + e^(beta x)) / beta, and x itself where beta x > threshold. The grader judges what any
correct op must have, not how the reference wrote it:

    the checklist    every place of the README's "Adding an op": the row, declared a primitive
                     (with why) or a composite; `minitorch.softplus`, `Tensor.softplus`,
                     `nn.functional.softplus` (PyTorch has it); samples that pass; a lowering
    values           against PyTorch's definition on float32 and float64, extremes included
                     (±inf, NaN, -0.0, subnormal results, both sides of the threshold)
    gradients        against central finite differences, and finite where the true one is
    compiled         `softplus(x) * 2 + 1` under `fullgraph=True` is ONE fused kernel, and
                     compiled equals eager: values, every public name, gradients

[Note: grading compiled code afresh]
Each compiled case starts from a reset capture cache and with the compiled-graph cache off:
that cache's key digests minitorch's own source, not a plugin's, so a second solution graded on
the same machine could otherwise be handed the kernels compiled for the first.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator

import numpy as np

from minitorch.course.grading import REGISTRIES, Assignment, Case, CaseFailed, Part, Submission

NAME = "softplus"
# (beta, threshold): PyTorch's defaults, then others whose threshold / beta is exact
SETTINGS = [(1.0, 20.0), (2.0, 10.0), (0.5, 20.0), (1.0, 1.0)]


def _ops() -> list[str]:
    from minitorch.ops import OPS

    return list(OPS)


REGISTRIES["ops"] = _ops


# ---- PyTorch's definition, and the inputs it is checked on -----------------------------------


def expected(x: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    """torch.nn.functional.softplus: beta x compared in x's dtype, the rest in float64."""
    kind = x.dtype.type
    with np.errstate(all="ignore"):  # beta x may overflow to inf, as it does in PyTorch
        above = (x * kind(beta)) > kind(threshold)
        wide = x.astype(np.float64)
        soft = np.logaddexp(0.0, wide * beta) / beta
    return np.where(above, wide, soft).astype(x.dtype)


def extremes(dtype: str, beta: float, threshold: float) -> np.ndarray:
    """Special values, both sides of the threshold, and ordinary ones."""
    edge = threshold / beta
    big = 3e38 if dtype == "float32" else 1e300
    special = [-np.inf, -big, -1e4, -800, -100, -88.7, -50, -20, -1, -1e-3, -1e-30, -0.0, 0.0]
    special += [1e-30, 1e-3, 1, 50, 88.7, 100, 800, 1e4, big, np.inf, np.nan]
    near = np.array([edge, edge * 0.999, edge * 1.001], dtype=dtype)
    near = np.concatenate([near, np.nextafter(near[:1], np.inf), np.nextafter(near[:1], -np.inf)])
    ordinary = np.random.default_rng(0).normal(0, 10, 40)
    grid = np.linspace(-30, 30, 61)
    return np.concatenate(
        [np.array(special, dtype), near, ordinary.astype(dtype), grid.astype(dtype)]
    )


def _tolerance(dtype) -> dict:
    if np.dtype(dtype) == np.float32:
        return {"rtol": 1e-5, "atol": 1e-30}
    return {"rtol": 1e-12, "atol": 1e-300}


def _same(got, want: np.ndarray, what: str, reproducer: str | Callable[[int], str]) -> None:
    """`got` (a tensor) has want's shape, dtype and values (NaN where want has NaN); the
    reproducer may be made from the index of the first element that differs."""
    got_array = got.detach().numpy()
    if got_array.shape != want.shape or got_array.dtype != want.dtype:
        raise CaseFailed(
            f"{what}: got {got_array.dtype}{list(got_array.shape)}, "
            f"PyTorch gives {want.dtype}{list(want.shape)}",
            reproducer,
        )
    close = np.isclose(got_array, want, equal_nan=True, **_tolerance(want.dtype))
    if not close.all():
        k = int(np.argmin(close.reshape(-1)))
        raise CaseFailed(
            f"{what}: {int((~close).sum())} of {close.size} values differ; first at element "
            f"{k}: got {got_array.reshape(-1)[k].item()!r}, expected "
            f"{want.reshape(-1)[k].item()!r}",
            reproducer(k) if callable(reproducer) else reproducer,
        )


def _reproducer(submission: Submission, *lines: str) -> str:
    head = ["import numpy as np", "import minitorch"]
    head += ["from minitorch.compile.hooks import load_plugin"]
    head += [f"load_plugin({p!r})" for p in submission.plugins]
    return "\n".join(head + list(lines))


def _array_source(x: np.ndarray) -> str:
    values = ", ".join(repr(float(v)) for v in x.reshape(-1))
    return f"np.array([{values}], dtype=np.{x.dtype})"


def _row():
    """The op's row, or the case fails saying how to add it."""
    from minitorch.ops import OPS

    if NAME not in OPS:
        raise CaseFailed(
            f"minitorch.ops has no row {NAME!r}: add it with "
            "minitorch.ops.registry.register_op(OpDef(...)) (see the starter, "
            "minitorch/course/starters/op.py)"
        )
    return OPS[NAME]


def _public(where: str):
    """minitorch.softplus, nn.functional.softplus, or the Tensor method, or a CaseFailed."""
    import minitorch

    owner = {
        "minitorch": minitorch,
        "nn.functional": minitorch.nn.functional,
        "Tensor": minitorch.Tensor,
    }[where]
    fn = getattr(owner, NAME, None)
    if fn is None:
        raise CaseFailed(
            f"{where}.{NAME} does not exist: register_function(softplus, "
            "tensor_method=True, nn_functional=True) in minitorch/functional/registration.py "
            "makes minitorch.softplus, Tensor.softplus and nn.functional.softplus"
        )
    return fn


# ---- part 1: the checklist -------------------------------------------------------------------


def checklist_cases(submission: Submission) -> Iterator[Case]:
    yield Case("the row: minitorch.ops.softplus, a pointwise op", _check_row)
    yield Case("declared a primitive (with why) or a composite", _check_declared)
    for where in ("minitorch", "Tensor", "nn.functional"):
        yield Case(f"{where}.softplus gives the op's values", lambda w=where: _check_public(w))
    yield Case("samples: registered, and each passes", lambda: _check_samples(submission))
    yield Case("a lowering: lowered rows are in ir.lowering.LOWERINGS", _check_lowering)


def _check_row() -> None:
    import minitorch

    op = _row()
    if getattr(minitorch.ops, NAME, None) is not op:
        raise CaseFailed("minitorch.ops.softplus is not the row: register it with register_op")
    if op.kind not in ("pointwise", "composite"):
        raise CaseFailed(f"softplus is elementwise: its kind is 'pointwise', not {op.kind!r}")


def _check_declared() -> None:
    from minitorch.ops.registry import WHY_PRIMITIVE

    op = _row()
    why = WHY_PRIMITIVE.get(NAME, "")
    if op.is_primitive and (not why or "TODO" in why):
        raise CaseFailed(
            "softplus is a primitive (it has an eager kernel) but does not say why it is "
            "not a composite: register_op(row, why=...) (docs/primitives.md's line)"
        )


def _check_public(where: str) -> None:
    import minitorch
    from minitorch.overrides import _COVERED

    fn = _public(where)
    x = minitorch.tensor(np.linspace(-3, 30, 12, dtype=np.float32))
    if where == "Tensor":
        got = x.softplus(beta=2.0, threshold=10.0)
    else:
        if where == "minitorch" and fn not in _COVERED:
            raise CaseFailed("minitorch.softplus is not overridable: use register_function")
        got = fn(x, beta=2.0, threshold=10.0)
    _same(got, expected(x.numpy(), 2.0, 10.0), f"{where}.softplus(x, beta=2.0, threshold=10.0)", "")
    if where != "Tensor":
        _same(fn(x), expected(x.numpy()), f"{where}.softplus(x) with PyTorch's defaults", "")


def _check_samples(submission: Submission) -> None:
    import minitorch
    from minitorch.ops.samples import SAMPLES

    if NAME not in SAMPLES:
        raise CaseFailed(
            "no samples for softplus: minitorch.ops.samples.register_samples('softplus', "
            "[((x,), kwargs), ...], reference=numpy_softplus)"
        )
    spec = SAMPLES[NAME]
    for k, (args, kwargs) in enumerate(spec.samples):
        where = f"sample {k} ({kwargs or 'defaults'})"
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        if not arrays:
            raise CaseFailed(f"{where}: has no array (a tensor argument)")
        tensors = [minitorch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        got = minitorch.ops.softplus(*tensors, **kwargs)
        want = np.asarray(spec.reference(*[_wide(a) for a in args], **kwargs))
        _same(got, want.astype(arrays[0].dtype), f"{where}: against your reference", "")
        _same(got, expected(arrays[0], **kwargs), f"{where}: against PyTorch's definition", "")


def _wide(a):
    return a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a


def _check_lowering() -> None:
    from ir.lowering import LOWERINGS

    op = _row()
    if op.lowering == "lowered" and op not in LOWERINGS:
        raise CaseFailed(
            "softplus is marked lowering='lowered' but has no lowering: "
            "ir.lowering.register_lowering(minitorch.ops.softplus, lower_softplus)"
        )
    if op.lowering == "extern":
        raise CaseFailed(
            "softplus is marked lowering='extern': the compiler runs its numpy kernel between "
            "kernels instead of fusing it; give it a loop-IR lowering (lowering='lowered')"
        )


# ---- part 2: values --------------------------------------------------------------------------


def value_cases(submission: Submission) -> Iterator[Case]:
    for dtype in ("float32", "float64"):
        for beta, threshold in SETTINGS:
            yield Case(
                f"{dtype}, beta={beta}, threshold={threshold}: extremes and ordinary values",
                lambda d=dtype, b=beta, t=threshold: _check_values(submission, d, b, t),
            )
    yield Case("shapes: 0-d, 2-d, non-contiguous, empty", lambda: _check_shapes(submission))


def _check_values(submission: Submission, dtype: str, beta: float, threshold: float) -> None:
    import minitorch

    x = extremes(dtype, beta, threshold)
    fn = _public("minitorch")
    with np.errstate(all="ignore"):
        got = fn(minitorch.tensor(x), beta=beta, threshold=threshold)
    want = expected(x, beta, threshold)
    _same(
        got,
        want,
        f"softplus of {dtype} x, beta={beta}, threshold={threshold}",
        lambda k: _reproducer(
            submission,
            f"x = minitorch.tensor({_array_source(x[k : k + 1])})",
            f"print(minitorch.softplus(x, beta={beta}, threshold={threshold}))"
            f"  # PyTorch: {want[k].item()!r}",
        ),
    )


def _check_shapes(submission: Submission) -> None:
    import minitorch

    fn = _public("minitorch")
    grid = np.linspace(-5, 25, 24, dtype=np.float32).reshape(4, 6)
    for what, x in [
        ("0-d", minitorch.tensor(np.float32(1.5))),
        ("2-d", minitorch.tensor(grid)),
        ("transposed", minitorch.tensor(grid).t()),
        ("empty", minitorch.tensor(np.zeros((0, 3), np.float32))),
    ]:
        _same(fn(x), expected(np.array(x.numpy())), f"softplus of a {what} x", "")


# ---- part 3: gradients -----------------------------------------------------------------------


def gradient_cases(submission: Submission) -> Iterator[Case]:
    for beta, threshold in SETTINGS:
        yield Case(
            f"float64, beta={beta}, threshold={threshold}: against finite differences",
            lambda b=beta, t=threshold: _check_gradient(submission, "float64", b, t),
        )
    yield Case(
        "float32 at |x| up to 1000: finite, against finite differences",
        lambda: _check_gradient(submission, "float32", 1.0, 20.0),
    )


def _gradient_inputs(dtype: str, beta: float, threshold: float) -> np.ndarray:
    x = np.concatenate([np.linspace(-12, 12, 25), np.random.default_rng(1).normal(0, 8, 20)])
    x = np.concatenate([x, [-800, -100, -50, 30, 50, 89, 100, 800, 1000]])
    x = x[np.abs(x * beta - threshold) > 1e-3]  # finite differences need no step in reach
    return x.astype(dtype)


def _check_gradient(submission: Submission, dtype: str, beta: float, threshold: float) -> None:
    import minitorch

    fn = _public("minitorch")
    x = _gradient_inputs(dtype, beta, threshold)
    weights = np.random.default_rng(2).uniform(0.5, 1.5, x.shape)
    leaf = minitorch.tensor(x, requires_grad=True)
    (
        fn(leaf, beta=beta, threshold=threshold) * minitorch.tensor(weights.astype(dtype))
    ).sum().backward()
    if leaf.grad is None:
        raise CaseFailed("softplus(x).sum().backward() gave x no gradient: the row needs backward=")
    got = leaf.grad.numpy()
    wide, h = x.astype(np.float64), 1e-6
    step = np.maximum(np.abs(wide), 1.0) * h
    with np.errstate(all="ignore"):
        slope = expected(wide + step, beta, threshold) - expected(wide - step, beta, threshold)
    want = weights * slope / (2 * step)
    close = np.isclose(got, want, rtol=1e-5, atol=1e-7)
    if not close.all():
        k = int(np.argmin(close))
        hint = ""
        if not np.isfinite(got[k]):
            hint = (
                " (a derivative written through e^(beta x) overflows: softplus' derivative is "
                "sigmoid(beta x), and 1 above the threshold)"
            )
        raise CaseFailed(
            f"the gradient of softplus({dtype} x, beta={beta}, threshold={threshold}) at "
            f"x={x[k].item()!r} is {(got[k] / weights[k]).item()!r}; finite differences give "
            f"{(want[k] / weights[k]).item()!r}{hint}",
            _reproducer(
                submission,
                f"x = minitorch.tensor({_array_source(x[k : k + 1])}, requires_grad=True)",
                f"minitorch.softplus(x, beta={beta}, threshold={threshold}).sum().backward()",
                f"print(x.grad)  # finite differences: {(want[k] / weights[k]).item()!r}",
            ),
        )


# ---- part 4: compiled ------------------------------------------------------------------------


@contextlib.contextmanager
def _fresh() -> Iterator[None]:
    """[Note: grading compiled code afresh]"""
    from minitorch import config
    from tracer.dynamo import reset

    reset()
    saved = config.graph_cache
    config.graph_cache = False
    try:
        yield
    finally:
        config.graph_cache = saved
        reset()


def compiled_cases(submission: Submission) -> Iterator[Case]:
    yield Case("softplus(x) * 2 + 1 is one fused kernel", lambda: _check_fused(submission))
    for dtype in ("float32", "float64"):
        for beta, threshold in SETTINGS[:2]:
            yield Case(
                f"compiled equals eager: {dtype}, beta={beta}, threshold={threshold}",
                lambda d=dtype, b=beta, t=threshold: _check_compiled(submission, d, b, t),
            )
    yield Case("compiled x.softplus() and F.softplus equal eager", _check_compiled_names)
    yield Case("compiled gradients equal eager", lambda: _check_compiled_gradient(submission))


def _softplus_times_two_plus_one(x):
    import minitorch

    return minitorch.softplus(x) * 2 + 1


def _compiled_reproducer(submission: Submission, call: str, x: np.ndarray):
    """A reproducer for the first element on which compiled and eager differ."""
    return lambda k: _reproducer(
        submission,
        f"fn = lambda x: {call} * 2 + 1",
        f"x = minitorch.tensor({_array_source(x[k : k + 1])})",
        "print(minitorch.compile(fn, fullgraph=True)(x), fn(x))",
        "# MINITORCH_LOGS=loop_ir prints the loop IR of the kernels",
    )


def _check_fused(submission: Submission) -> None:
    import minitorch
    from minitorch import _logging

    _public("minitorch")
    x = extremes("float32", 1.0, 20.0)
    reproducer = _compiled_reproducer(submission, "minitorch.softplus(x)", x)
    with _fresh(), _logging.Recorder() as recorder, np.errstate(all="ignore"):
        got = minitorch.compile(_softplus_times_two_plus_one, fullgraph=True)(minitorch.tensor(x))
        want = _softplus_times_two_plus_one(minitorch.tensor(x)).numpy()
    loop_ir = "\n".join(a.text for a in recorder.artifacts if a.stage == "loop_ir")
    kernels = re.findall(r"^kernel\d+:", loop_ir, re.M)
    externs = re.findall(r"^extern:.*$", loop_ir, re.M)
    if externs or len(kernels) != 1:
        raise CaseFailed(
            f"softplus(x) * 2 + 1 compiled to {len(kernels)} kernel(s) and {len(externs)} "
            f"extern call(s), not one fused kernel: {'; '.join(externs) or loop_ir[:300]}",
            reproducer(0),
        )
    _same(got, want, "compiled softplus(x) * 2 + 1 against eager", reproducer)


def _check_compiled(submission: Submission, dtype: str, beta: float, threshold: float) -> None:
    import minitorch

    def fn(x):
        return minitorch.softplus(x, beta=beta, threshold=threshold) * 2 + 1

    x = extremes(dtype, beta, threshold)
    with _fresh(), np.errstate(all="ignore"):
        got = minitorch.compile(fn, fullgraph=True)(minitorch.tensor(x))
        want = fn(minitorch.tensor(x)).numpy()
    call = f"minitorch.softplus(x, beta={beta}, threshold={threshold})"
    _same(
        got,
        want,
        f"compiled {call} * 2 + 1 on {dtype} against eager",
        _compiled_reproducer(submission, call, x),
    )


def _check_compiled_names() -> None:
    import minitorch

    _public("Tensor")
    _public("nn.functional")

    def fn(x):
        return x.softplus(beta=2.0, threshold=10.0) + minitorch.nn.functional.softplus(x).sin()

    x = minitorch.tensor(np.linspace(-20, 20, 41, dtype=np.float32))
    with _fresh():
        got = minitorch.compile(fn, fullgraph=True)(x)
    _same(got, fn(x).numpy(), "compiled x.softplus(...) + F.softplus(x).sin() against eager", "")


def _check_compiled_gradient(submission: Submission) -> None:
    import minitorch

    def fn(x, w):
        return (minitorch.softplus(x @ w, beta=2.0, threshold=10.0) * 3).sum()

    rng = np.random.default_rng(3)
    x = rng.normal(0, 4, (6, 5)).astype(np.float32)
    w = rng.normal(0, 2, (5, 4)).astype(np.float32)
    grads = []
    for run in (fn, minitorch.compile(fn, fullgraph=True)):
        leaves = [minitorch.tensor(a, requires_grad=True) for a in (x, w)]
        with _fresh():
            run(*leaves).backward()
        grads.append([leaf.grad for leaf in leaves])
    for name, eager, compiled in zip("xw", *grads, strict=True):
        if compiled is None:
            raise CaseFailed(f"the compiled function gave {name} no gradient")
        _same(compiled, eager.numpy(), f"the compiled gradient of {name} against eager's", "")


ASSIGNMENT = Assignment(
    name="op",
    title="An op end to end",
    chapter="01-eager",
    hook="register_op, register_function, register_samples, register_lowering",
    starter="minitorch/course/starters/op.py",
    reference="minitorch.course.reference.op",
    minutes=60,
    parts=[
        Part("the checklist: row, names, samples, lowering", 30, checklist_cases),
        Part("values against PyTorch's definition", 25, value_cases),
        Part("gradients against finite differences", 20, gradient_cases),
        Part("compiled: one fused kernel, equal to eager", 25, compiled_cases),
    ],
)
