"""Assignment 2: a graph pass on the fx IR, common-subexpression elimination.

Write a pass that computes each repeated pure expression once (`sin(x) * sin(x)` computes sin
once), register it with `register_graph_pass(name, fn, stage="captured")`, and the compiler
runs it on every graph capture makes, before AOT autograd (whose traces hold no repeats of
their own: an op traced twice on one tensor is one node there). Capture's graphs are the
user's calls (`minitorch.sin`, `x.sum(-1)`, `F.dropout`): two calls are the same only with
the same target, arguments and keyword arguments, constants of the same type and sign, and
never when they draw random numbers. Graded by equivalence (values and gradients equal
eager's on the workloads and on generated programs, with the pass in the pipeline, compiled
with fullgraph=True so that no error hides in a fallback) and by what it claims: after it, no
two pure nodes of a captured graph compute the same thing, and random ops are never merged.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

import minitorch
from minitorch.course.checks import (
    WORKLOADS,
    fuzz_cases,
    randn_input,
    same_as_eager,
    workload_cases,
)
from minitorch.course.grading import Assignment, Case, CaseFailed, Part, Submission

# Forward graphs with repeats, and with random ops that look alike and must stay two draws.
REPEATS = {
    "sin(x) * sin(x)": lambda x: minitorch.sin(x) * minitorch.sin(x),
    "exp(x + 1) twice, nested": lambda x: minitorch.exp(x + 1) * minitorch.exp(x + 1) + x,
    "the same reduction twice": lambda x: x.sum(-1) + x.sum(-1),
    "methods: x.cos().exp() twice": lambda x: x.cos().exp() - x.cos().exp(),
}
RANDOM = "F.dropout(x, 0.5) + F.dropout(x, 0.5)"


def _ints(seed):
    return minitorch.tensor(np.arange(-3, 3))


def _signed_zeros(seed):
    return minitorch.tensor(np.array([-0.0, 0.0, 1.5], dtype=np.float32))


# Calls that look alike and are not the same: merged, they give a wrong answer.
LOOK_ALIKE = {
    "x * 1 and x * 1.0 on integers (int64, float32)": (lambda x: (x * 1, x * 1.0), [_ints]),
    "x + 0.0 and x + -0.0 (the sign of -0.0 + 0.0)": (
        lambda x: (x + 0.0, x + -0.0),
        [_signed_zeros],
    ),
    "x.sum() and x.sum(dim=0)": (lambda x: (x.sum(), x.sum(dim=0)), [randn_input(4, 3)]),
    "two rand_like(x): two draws": (
        lambda x: minitorch.rand_like(x) - minitorch.rand_like(x),
        [randn_input(16)],
    ),
}


def _registered(submission: Submission) -> Iterator[Case]:
    def check() -> None:
        if not submission.names("graph_passes"):
            raise CaseFailed(
                "your plugin registered no graph pass: call "
                "register_graph_pass(name, fn, stage='forward') when it is imported",
                "python -m minitorch.course grade graph_pass --plugin my_pass.py",
            )

    yield Case("a graph pass is registered", check)


def _captured_graph(fn, *shape):
    """The graph capture makes of `fn`, after the passes of stage "captured"."""
    from minitorch.compile.hooks import register_graph_pass, unregister_graph_pass

    seen = []
    register_graph_pass("course: what the passes left", seen.append, stage="captured")
    try:
        x = minitorch.randn(*shape, requires_grad=True)
        minitorch.compile(fn, backend="aot_eager", fullgraph=True)(x)
    finally:
        unregister_graph_pass("course: what the passes left")
    return seen[0]


def _repeats(gm) -> list[str]:
    """Nodes that call what an earlier node calls, on the same arguments."""
    seen: dict[tuple, str] = {}
    repeats = []
    for node in gm.graph.nodes:
        if node.op not in ("call_function", "call_method"):
            continue
        key = (node.op, node.target, repr(node.args), repr(sorted(node.kwargs.items())))
        if key in seen:
            repeats.append(f"{node.name} repeats {seen[key]}")
        seen.setdefault(key, node.name)
    return repeats


def _merges(submission: Submission) -> Iterator[Case]:
    for text, fn in REPEATS.items():

        def check(fn=fn, text=text) -> None:
            gm = _captured_graph(fn, 4, 8)
            repeats = _repeats(gm)
            if repeats:
                raise CaseFailed(
                    f"{text}: after your pass the captured graph still computes twice: "
                    f"{'; '.join(repeats)}\n{gm.graph}",
                    f"# f(x) = {text}\n"
                    "python -m minitorch.compile f.py --stage graph --plugin YOURS",
                )

        yield Case(f"merges: {text}", check)

    def random_kept() -> None:
        gm = _captured_graph(
            lambda x: (
                minitorch.nn.functional.dropout(x, 0.5) + minitorch.nn.functional.dropout(x, 0.5)
            ),
            64,
        )
        draws = [n for n in gm.graph.nodes if "dropout" in str(n.target)]
        if len(draws) < 2:
            raise CaseFailed(
                f"{RANDOM}: your pass merged the two random draws into {len(draws)}: two "
                f"dropouts draw two masks\n{gm.graph}"
            )

    yield Case(f"keeps two draws: {RANDOM}", random_kept)


def _look_alike(submission: Submission) -> Iterator[Case]:
    for text, (fn, makers) in LOOK_ALIKE.items():
        yield Case(text, lambda fn=fn, makers=makers, text=text: same_as_eager(text, fn, makers))


def _equal_on_workloads(submission: Submission) -> Iterator[Case]:
    yield from workload_cases("inductor", tuple(WORKLOADS))


def _equal_on_programs(submission: Submission) -> Iterator[Case]:
    yield from fuzz_cases(12, seed=100)


ASSIGNMENT = Assignment(
    name="graph_pass",
    title="A graph pass on the fx IR: common-subexpression elimination",
    chapter="02-fx",
    hook='register_graph_pass(name, fn, stage="captured")',
    starter="minitorch/course/starters/graph_pass.py",
    reference="minitorch.course.reference.graph_pass",
    minutes=90,
    parts=[
        Part("registered", 10, _registered),
        Part("does what it claims: repeats merged, draws kept", 25, _merges),
        Part("keeps apart what only looks alike", 15, _look_alike),
        Part("equal to eager: workloads, values and gradients", 25, _equal_on_workloads),
        Part("equal to eager: 12 generated programs", 25, _equal_on_programs),
    ],
)
