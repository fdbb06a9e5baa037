"""Assignment 3: a partitioner, what the forward saves for the backward.

Additive: write a partitioner (`fn(joint) -> the nodes to save`; tracer/aot/partition.py,
[Note: partitioning]) and register it with `register_partitioner(name, fn)`; the grader sets
config.partitioner to it. Rebuilt: `course start partitioner DIR` hollows the "default"
partitioner, which the grader grades when no plugin is given.

Graded by what any partitioner must keep, never by what the default one does: gradients equal
eager's on the workloads and on generated programs (compiled with fullgraph=True: the checks
of partition_joint, which refuse a save computed from a tangent, a backward that cannot be
computed, a random op drawn again, are failures here, not fallbacks); random ops never drawn
again (dropout's gradients equal eager's, mask and all); and nothing saved that the backward
does not read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import minitorch
from minitorch import config
from minitorch.course.checks import WORKLOADS, fuzz_cases, randn_input, same_as_eager
from minitorch.course.grading import Assignment, Case, CaseFailed, Part, Submission

F = minitorch.nn.functional
RANDOM = {
    "dropout(x) * x": (lambda x: F.dropout(x, 0.5) * x, [randn_input(64)]),
    "dropout(sin(x)) * cos(x)": (
        lambda x: F.dropout(minitorch.sin(x), 0.3) * minitorch.cos(x),
        [randn_input(8, 16)],
    ),
    "rand_like(x) * exp(x)": (
        lambda x: minitorch.rand_like(x) * minitorch.exp(x),
        [randn_input(32)],
    ),
}


def _chosen(submission: Submission) -> str:
    """The partitioner to grade: the plugin's, or (no plugin: a rebuilt tree) "default"."""
    if not submission.plugins:
        return "default"
    names = submission.names("partitioners")
    if not names:
        raise CaseFailed(
            "your plugin registered no partitioner: call register_partitioner(name, fn) "
            "when it is imported"
        )
    return names[-1]


@contextlib.contextmanager
def _using(name: str):
    saved = config.partitioner
    config.partitioner = name
    try:
        yield
    finally:
        config.partitioner = saved


def _registered(submission: Submission) -> Iterator[Case]:
    yield Case("a partitioner to grade", lambda: _chosen(submission) and None)


def _gradients(submission: Submission) -> Iterator[Case]:
    name = _chosen(submission)
    for workload, (fn, source, makers) in WORKLOADS.items():

        def check(fn=fn, makers=makers, workload=workload) -> None:
            with _using(name):
                same_as_eager(workload, fn, makers)

        yield Case(
            f"{workload}: {source}",
            check,
            f"config.partitioner = {name!r}\nfn, _, makers = WORKLOADS[{workload!r}]\n"
            f"same_as_eager({workload!r}, fn, makers)  # minitorch.course.checks",
        )


def _random_kept(submission: Submission) -> Iterator[Case]:
    name = _chosen(submission)
    for text, (fn, makers) in RANDOM.items():

        def check(fn=fn, makers=makers, text=text) -> None:
            with _using(name):
                same_as_eager(text, fn, makers)

        yield Case(text, check)


def _saves_only_what_is_read(submission: Submission) -> Iterator[Case]:
    from tracer.aot import aot_trace
    from tracer.fx import symbolic_trace

    name = _chosen(submission)
    for workload, (fn, _, makers) in WORKLOADS.items():

        def check(fn=fn, makers=makers, workload=workload) -> None:
            with _using(name):
                graphs = aot_trace(symbolic_trace(fn), [m(0) for m in makers], log=False)
            num_saved = len(graphs.forward.graph.nodes[-1].args[0]) - graphs.spec.num_outputs
            saved = [n for n in graphs.backward.graph.nodes if n.op == "placeholder"]
            unread = [n.name for n in saved[:num_saved] if not n.users]
            if unread:
                raise CaseFailed(
                    f"{workload}: saved for the backward and never read there: "
                    f"{', '.join(unread)} (memory held from forward to backward for nothing)"
                )

        yield Case(workload, check)


def _programs(submission: Submission) -> Iterator[Case]:
    name = _chosen(submission)
    for case in fuzz_cases(10, seed=200):

        def run(case=case) -> None:
            with _using(name):
                case.run()

        yield Case(case.name, run)


ASSIGNMENT = Assignment(
    name="partitioner",
    title="A partitioner: what the forward saves for the backward",
    chapter="03-aot",
    hook="register_partitioner(name, fn); config.partitioner = name",
    starter="minitorch/course/starters/partitioner.py",
    reference="minitorch.course.reference.partitioner",
    minutes=120,
    parts=[
        Part("a partitioner to grade", 5, _registered),
        Part("gradients equal eager on the workloads", 40, _gradients),
        Part("random ops never drawn again", 15, _random_kept),
        Part("saves only what the backward reads", 20, _saves_only_what_is_read),
        Part("equal to eager: 10 generated programs", 20, _programs),
    ],
    hollows=True,
)
