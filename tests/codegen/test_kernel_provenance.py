"""A kernel's source is split by the buffers it computes ([Note: provenance] in
tracer/fx/provenance.py): before each buffer's code, a comment line
`<; or #> bufN: from <fx nodes> (<file:line, ...>)` that a report can cut the source at."""

import dataclasses
import inspect
import re

import minitorch as torch
from codegen.llvm.backend import LLVMBackend, describe
from codegen.numpy_source import NumpySourceBackend
from ir.lowering import lower_graph
from ir.scheduler import schedule
from tracer.aot import aot_trace

COMMENT = re.compile(r"^\s*(;|#) (buf\d+): from ([\w, ]+?)(?: \((.*)\))?$")


def f(x):
    a = torch.sin(x) ** 2
    b = torch.cos(x) ** 2
    return a + b


def line_of(text: str) -> int:
    lines, first = inspect.getsourcelines(f)
    return first + next(k for k, line in enumerate(lines) if text in line)


def kernels_of(graph_module):
    program = lower_graph(graph_module.graph)
    return program, schedule(program)


def traced(x):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(aot_trace(gm, example_inputs, log=False))
        return gm.forward

    torch.compile(f, backend=backend)(x)
    return graphs[0]


def comments(source: str) -> list[tuple[str, str, tuple[str, ...], str]]:
    """(comment char, buffer, fx nodes, locations) of each provenance line of `source`."""
    found = []
    for line in source.splitlines():
        match = COMMENT.match(line)
        if match:
            char, name, origins, where = match.groups()
            found.append((char, name, tuple(origins.split(", ")), where or ""))
    return found


def test_the_llvm_source_has_a_comment_before_each_buffers_code():
    aot = traced(torch.rand(64, requires_grad=True))
    program, (kernel,) = kernels_of(aot.forward)
    source = LLVMBackend().compile_kernel(kernel, program.dtypes()).source
    found = comments(source)
    assert {(name, origins) for _, name, origins, _ in found} == {
        (b.name, b.origins) for b in kernel.nodes
    }
    assert all(char == ";" for char, *_ in found)
    sin, cos, add = line_of("torch.sin"), line_of("torch.cos"), line_of("a + b")
    out = next(where for _, _, origins, where in found if "add" in origins)
    assert out == f"test_kernel_provenance.py:{sin}, test_kernel_provenance.py:{cos}, " + (
        f"test_kernel_provenance.py:{add}"
    )
    # each comment comes before its buffer's code: the store of a written buffer follows it
    lines = source.splitlines()
    for _, name, _, _ in found:
        if name in kernel.writes:
            at = next(
                k for k, line in enumerate(lines) if COMMENT.match(line) and name + ":" in line
            )
            assert any("store float" in line and f'%"&{name}[' in line for line in lines[at:])


def test_the_numpy_source_has_a_comment_before_each_buffers_code():
    aot = traced(torch.rand(64, requires_grad=True))
    for gm in (aot.forward, aot.backward):
        program, kernels = kernels_of(gm)
        for kernel in kernels:
            source = NumpySourceBackend().compile_kernel(kernel, program.dtypes()).source
            found = comments(source)
            assert [name for _, name, _, _ in found] == [b.name for b in kernel.nodes]
            assert all(char == "#" for char, *_ in found)
            assert all(where for *_, where in found)  # every buffer has its lines


def test_provenance_stays_out_of_the_kernel_caches_key():
    aot = traced(torch.rand(64, requires_grad=True))
    program, (kernel,) = kernels_of(aot.forward)
    nowhere = dataclasses.replace(
        kernel,
        loops=tuple(
            dataclasses.replace(
                loop,
                nodes=tuple(dataclasses.replace(b, origins=(), locations=()) for b in loop.nodes),
            )
            for loop in kernel.loops
        ),
    )
    dtypes = program.dtypes()
    assert describe(kernel, dtypes, ()) == describe(nowhere, dtypes, ())
    assert all(b.provenance == "" for b in nowhere.nodes)
