"""Every hook of the compiler in one place: what a plugin (a student's assignment) calls.

    from minitorch.compile.hooks import register_graph_pass, register_partitioner

    register_backend(name, backend)             a code generator or a graph compiler
                                                (minitorch/compile/backends.py)
    register_graph_pass(name, fn, stage=...)    a pass on the captured, joint, forward or
                                                backward graphs (tracer/fx/passes/registry.py)
    register_partitioner(name, fn)              what the forward saves for the backward;
                                                config.partitioner = name (tracer/aot/partition.py)
    register_fusion_policy(name, fn)            which allowed fusions to make, given the
                                                backend's Capabilities; config.fusion_policy =
                                                name (ir/policy.py)

    register_op, register_function,             an op end to end, from a plugin ([Note:
    register_samples, register_lowering        adding an op from a plugin] in
                                                minitorch/ops/registry.py)
    register_launch_plan(name, choose, ...)     how a CUDA kernel is launched (an extra:
                                                import it from codegen/cuda/launch.py)

Each hook lives beside what it extends, and the tree's own implementations register through
it: "default" and "min_cut" are partitioners like any other, "greedy" a fusion policy. A hook
is known by its name and a digest of its source, which the compiled-graph cache keys on
(graph_cache.py, `hook_identities`), so that a changed pass is never served the graphs an
older version compiled.

`python -m minitorch.compile SCRIPT --plugin MODULE` and `python -m minitorch.course grade NAME
--plugin MODULE` import a plugin (`load_plugin`) before anything compiles.
"""

from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys

from ir.lowering import register_lowering
from ir.policy import (
    Capabilities,
    fusion_policies,
    register_fusion_policy,
    unregister_fusion_policy,
)
from minitorch import config
from minitorch.compile.backends import register_backend
from minitorch.functional.registration import register_function
from minitorch.ops.registry import register_op
from minitorch.ops.samples import register_samples
from tracer.aot.partition import Joint, partitioners, register_partitioner, unregister_partitioner
from tracer.fx.passes.registry import (
    STAGES,
    graph_passes,
    register_graph_pass,
    unregister_graph_pass,
)

__all__ = [
    "STAGES",
    "Capabilities",
    "Joint",
    "describe",
    "fusion_policies",
    "graph_passes",
    "load_plugin",
    "partitioners",
    "register_backend",
    "register_fusion_policy",
    "register_function",
    "register_graph_pass",
    "register_lowering",
    "register_op",
    "register_partitioner",
    "register_samples",
    "unregister_fusion_policy",
    "unregister_graph_pass",
    "unregister_partitioner",
]


def describe() -> str:
    """What is registered, for the walkthrough: each hook's names, the one in use marked."""
    passes = ", ".join(f"{p.name} ({p.stage})" for p in graph_passes()) or "none registered"
    chosen = {"partitioner": config.partitioner, "fusion_policy": config.fusion_policy}
    lines = [f"graph_passes: {passes}"]
    for kind, names in (("partitioner", partitioners()), ("fusion_policy", fusion_policies())):
        listed = ", ".join(f"{n} (in use)" if n == chosen[kind] else n for n in names)
        lines.append(f"{kind}: {listed}")
    return "\n".join(lines)


def load_plugin(plugin: str) -> None:
    """Import `plugin`, a module name or a .py file, for what it registers."""
    path = pathlib.Path(plugin)
    if not (plugin.endswith(".py") or path.is_file()):
        importlib.import_module(plugin)
        return
    if not path.is_file():
        raise FileNotFoundError(f"plugin {plugin!r}: no such file")
    name = f"minitorch_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
