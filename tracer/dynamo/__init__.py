"""Bytecode capture: minitorch's TorchDynamo.

`optimize(fn, backend)` returns a function that, on each call, finds a compiled version of
`fn`'s bytecode whose guards hold (or traces a new one) and runs it. The files, in the order
they act on a call:

    eval_frame.py        optimize(): bind the call into a frame view, look up the cache
    optimized_module.py  what compile(model) returns: the compiled forward, the model's attributes
    cache.py             the cache entries of each code object
    convert_frame.py     trace one frame into a cache entry, or record why it runs eagerly
    instructions.py      read and normalise the bytecode (compat.py: the version differences)
    symbolic_convert.py  the InstructionTranslator: one method per opname
    opcodes.py           its tables (BINARY_OP's operators, ...) and opcode-family factories
    container_opcodes.py tuples, lists, dicts, f-strings;  import_opcodes.py: `import` inside
    variables/           the tracked values (tensors, constants, containers, functions, ...);
                         container_calls.py and iterator_calls.py: builtins on containers
    source.py            where each value came from: L['x'], G['w'], L['x'].shape[0]
    output_graph.py      the fx graph being built; hands it to the compiler
    compiler.py          GraphCompiler: what a captured graph is handed to (EAGER: run it)
    guards.py            the guards, compiled into one function per cache entry
    epoch_guard.py       an extra: while no module changed, a guard checks one number, not the trees
    memory_overlap.py    which tensors share memory, which values are one object (for guards)
    side_effects.py      writes to the caller's lists, dicts and attributes, replayed after
    graph_break.py       an untraceable instruction: compile so far, run it, resume after it
    transformed_code.py  the code that replaces the frame: call the graph, rebuild the result
    resume_execution.py  after a graph break: real bytecode that continues the frame mid-way
    explain.py           explain(fn)(*args): one call in private caches; graphs, breaks, guards
    exc.py               Unsupported(reason)
"""

from tracer.dynamo.compiler import EAGER, CallableCompiler, GraphCompiler
from tracer.dynamo.eval_frame import (
    cache_entries,
    fallback_reasons,
    optimize,
    recompile_reasons,
    reset,
)
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.explain import ExplainOutput, explain

__all__ = [
    "EAGER",
    "CallableCompiler",
    "ExplainOutput",
    "GraphCompiler",
    "Unsupported",
    "cache_entries",
    "explain",
    "fallback_reasons",
    "optimize",
    "recompile_reasons",
    "reset",
]
