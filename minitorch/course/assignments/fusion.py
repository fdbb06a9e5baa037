"""Assignment 4: fusion, the scheduler's decision whether a buffer joins a kernel.

Rebuilt: `course start fusion DIR` hollows rule 2 of [Note: fusion] in ir/scheduler.py
(`why_not`: may this buffer's loads be served inside the kernel?), which the grader grades
when no plugin is given. Additive: a fusion policy (`register_fusion_policy(name, fn)`,
[Note: fusion policies] in ir/policy.py), given the backend's Capabilities, graded the same
way under config.fusion_policy = name.

Graded by correctness on every backend (values and gradients equal eager's on the workloads,
and generated programs), plus kernel counts on named workloads: a rule that never fuses is
correct and slow, and fails the counts; one that fuses too much gives wrong values. And a
policy keeps to the backend's max_fusion_size.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import minitorch
from minitorch import config
from minitorch.course.checks import (
    WORKLOADS,
    fuzz_cases,
    randn_input,
    same_as_eager,
    workload_cases,
)
from minitorch.course.grading import Assignment, Case, CaseFailed, Part, Submission

BACKENDS = ("llvm", "interpreter", "numpy")
EMULATED = ("softmax", "layernorm", "sincos")  # the CUDA grid emulator is slow: a few
# workload -> the most kernels its (forward, backward) may take: what fusion by the rules gives
KERNELS = {
    "sincos": (1, 1),
    "softmax": (1, 1),
    "layernorm": (1, 1),
    "gelu": (1, 1),
    "mlp": (1, 1),
    "attention": (1, 2),
}


def _chosen(submission: Submission) -> str:
    """The policy to grade: the plugin's, or (no plugin: a rebuilt tree) "greedy"."""
    if not submission.plugins:
        return "greedy"
    names = submission.names("fusion_policies")
    if not names:
        raise CaseFailed(
            "your plugin registered no fusion policy: call register_fusion_policy(name, fn) "
            "when it is imported (or grade a rebuilt tree without --plugin)"
        )
    return names[-1]


@contextlib.contextmanager
def _using(name: str):
    saved = config.fusion_policy
    config.fusion_policy = name
    try:
        yield
    finally:
        config.fusion_policy = saved


def _under(name: str, cases: Iterator[Case]) -> Iterator[Case]:
    for case in cases:

        def run(case=case) -> None:
            with _using(name):
                case.run()

        yield Case(case.name, run, case.reproducer)


def _stored_then_transposed(x):
    y = (minitorch.exp(x) * 2).contiguous()
    return y, y + y.t()


def _softmax_plus_transpose(x):
    s = minitorch.softmax(x, dim=-1)
    return s + s.t()


# Loads of a buffer the kernel computes, at another element than it stores (rule 2's case).
ACROSS = {
    "y + y.t() of a stored y": _stored_then_transposed,
    "softmax(x) + its transpose": _softmax_plus_transpose,
}


def _across(backend: str) -> Iterator[Case]:
    for text, fn in ACROSS.items():
        yield Case(
            f"{text} ({backend})",
            lambda fn=fn, text=text: same_as_eager(text, fn, [randn_input(6, 6)], backend),
        )


def _correct(submission: Submission) -> Iterator[Case]:
    name = _chosen(submission)
    for backend in BACKENDS:
        yield from _under(name, _across(backend))
        yield from _under(name, workload_cases(backend))
    yield from _under(name, workload_cases("cuda_emulator", EMULATED))


def _programs(submission: Submission) -> Iterator[Case]:
    yield from _under(_chosen(submission), fuzz_cases(10, seed=300))


def kernel_counts(fn, makers, capabilities=None) -> list[list]:
    """The fused kernels of each graph (forward, backward) of `fn`, for the LLVM backend."""
    from codegen.registry import get_backend
    from ir.lowering import lower_graph
    from ir.scheduler import schedule
    from ir.segments import ExternStep, split_graph
    from tracer.aot import aot_trace
    from tracer.fx import symbolic_trace

    backend = get_backend("llvm")
    capabilities = capabilities or backend.capabilities()
    graphs = aot_trace(symbolic_trace(fn), [m(0) for m in makers], log=False)
    kernels = []
    for gm in graphs.all():
        steps = split_graph(gm.graph, backend.dtypes)
        programs = [lower_graph(s.graph) for s in steps if not isinstance(s, ExternStep)]
        kernels.append([k for p in programs for k in schedule(p, capabilities=capabilities)])
    return kernels


def _counts(submission: Submission) -> Iterator[Case]:
    name = _chosen(submission)
    for workload, most in KERNELS.items():

        def check(workload=workload, most=most) -> None:
            fn, _, makers = WORKLOADS[workload]
            with _using(name):
                got = tuple(len(k) for k in kernel_counts(fn, makers))
            if any(g > m for g, m in zip(got, most, strict=True)):
                raise CaseFailed(
                    f"{workload}: (forward, backward) take {got} kernels; fusing what the "
                    f"rules of [Note: fusion] allow takes at most {most}",
                    f"fn, _, makers = WORKLOADS[{workload!r}]  # minitorch.course.checks\n"
                    "kernel_counts(fn, makers)  # minitorch.course.assignments.fusion",
                )

        yield Case(f"{workload}: at most {most} kernels", check)


def _max_size(submission: Submission) -> Iterator[Case]:
    from ir.policy import Capabilities

    name = _chosen(submission)
    for workload in ("layernorm", "softmax", "gelu"):

        def check(workload=workload) -> None:
            fn, _, makers = WORKLOADS[workload]
            small = Capabilities("llvm", "cpu", True, max_fusion_size=2)
            with _using(name):
                sizes = [len(k.nodes) for g in kernel_counts(fn, makers, small) for k in g]
            if max(sizes) > 2:
                raise CaseFailed(
                    f"{workload}: a kernel of {max(sizes)} buffers for a backend whose "
                    "capabilities say max_fusion_size=2"
                )

        yield Case(f"{workload}: max_fusion_size=2 kept", check)


ASSIGNMENT = Assignment(
    name="fusion",
    title="Fusion: may this buffer join the kernel? (rule 2 of the scheduler)",
    chapter="05-loop-ir",
    hook="rebuild why_not's rule 2 in ir/scheduler.py, or register_fusion_policy(name, fn)",
    starter="minitorch/course/starters/fusion.py",
    reference="",
    minutes=120,
    parts=[
        Part("equal to eager on every backend", 40, _correct),
        Part("equal to eager: 10 generated programs", 15, _programs),
        Part("kernel counts on named workloads", 35, _counts),
        Part("keeps the backend's max_fusion_size", 10, _max_size),
    ],
    hollows=True,
)
