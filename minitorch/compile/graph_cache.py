"""The compiled-graph cache: a graph compiled whole in an earlier process, loaded as it was.

An extra ([Note: the core and its extras] in minitorch/config.py): `config.graph_cache` on,
the driver compiles each graph with `cached(compile_graph)` instead of `compile_graph`; off,
nothing is read or written here.

    compile = cached(compile_graph)             # inductor.py, compile_fx
    compiled = compile(gm, backend)             # loaded, or compiled and kept; which is:
    key = graph_cache.key(gm, backend)          # None: this graph is compiled every time
    compiled = graph_cache.load(key, gm, binding, backend)   # or None: compile, then
    graph_cache.store(key, compiled, gm, backend)

[Note: the compiled-graph cache]
The kernel cache on disk ([Note: the kernel cache on disk] in codegen/disk_cache.py) spares a
new process LLVM, but not the passes before it: splitting, lowering and scheduling each graph
AOT autograd made, and writing its wrapper, cost a training step of a small MLP ~10 ms on
every start, half of a warm start. Inductor keeps a whole compiled graph under a key made
from the graph itself (its "FX graph cache"); so do we, after AOT autograd and before
lowering (minitorch/compile/inductor.py, `compile_fx` wraps `compile_graph` in `cached`):

- The key is the graph as data: each node's op, name, target, arguments and the shape,
  strides and dtype of its value (all that lowering reads of a node, meta['val']), the
  bytes of each constant tensor; and what compiles it: the backend, every knob of
  minitorch.config (except where logs and the cache go), Python's and numpy's versions,
  and a digest of the source of all four packages (a change to any pass is a new key, as
  a change to the generator is for the kernel cache). The sizes are static: a graph
  compiled with size symbols is not kept.
- The value is JSON: the wrapper's source ([Note: the generated wrapper] in
  output_code.py), each kernel as its backend saves it (`Backend.save_kernels`: for LLVM,
  the launch's shape and the kernel cache's entry holding its machine code), how each
  kernel is launched (its buffers' names, its name), and what every other name in the
  source stands for, as data: an op by its name in the op table (not by a node: a rewrite
  builds nodes of its own, which a loaded graph never gets), a constant (the graph's
  attribute), a dtype, an input's layout, a function of ours by its module and name. A
  graph whose wrapper names anything else (a value we cannot write as data) is not kept.
- Loading makes the namespace again from that data, each kernel's launch with its own
  `call_code`, and runs the source: the same function the compile made, without a pass.
  The kernels' IR is never generated, so a loaded graph's `kernels` show no IR, and the
  stages that print it (MINITORCH_LOGS=loop_ir, kernels, ptx; the walkthrough) bypass the
  cache.
- An entry that cannot be used (truncated: the envelope's checksum, as for the kernel
  cache; written by another host; its kernels' machine code gone; a name that no longer
  resolves, or fewer names than the source was written with) is a miss: the graph is
  compiled and the entry written again. Nothing is unpickled, and a name resolves only
  inside our packages, numpy and the few standard modules the wrapper calls; but an entry's
  source is run and its kernels' machine code too, so, as for the kernel cache, the cache
  folder is trusted as code is: the checksum finds damage, not an attacker.

`disk_cache.graph_stats` counts hits, misses, stores, rejected entries, and graphs that
cannot be kept ("uncacheable").
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import json
import os
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from codegen import disk_cache
from codegen.backend import Backend
from ir.nodes import Layout
from ir.policy import fusion_policies
from minitorch import _logging, config
from minitorch.compile.shapes import SizeBinding
from minitorch.compile.wrapper import CompiledGraph
from minitorch.device import device as Device  # noqa: N812 - a class named like torch's
from minitorch.dtype import DType, get_dtype
from minitorch.ops.registry import ADDED as ADDED_OPS
from minitorch.ops.registry import OPS, OpDef
from minitorch.tensor import Tensor
from tracer.aot import fake_inputs
from tracer.aot.partition import partitioners
from tracer.fx import GraphModule
from tracer.fx.node import Node
from tracer.fx.passes.registry import graph_passes, identity

# The stages that print what a loaded graph never made (its loop IR, its kernels' IR).
_PRINTING = ("loop_ir", "kernels", "ptx")
# Where a name in an entry may resolve: our packages, numpy, and what the wrapper calls.
_MODULES = frozenset(
    {
        "minitorch",
        "tracer",
        "ir",
        "codegen",
        "numpy",
        "builtins",
        "ctypes",
        "functools",
        "math",
        "operator",
    }
)
# minitorch.config's knobs that change where things are kept or what is printed, not code.
_NOT_CODE = frozenset({"cache_dir", "disk_cache", "graph_cache", "logs", "check", "EXTRAS"})


class _Uncacheable(Exception):
    """The graph, or a name its wrapper binds, cannot be written as data."""


def cached(
    compile_graph: Callable[[GraphModule, Backend], CompiledGraph],
) -> Callable[[GraphModule, Backend], CompiledGraph]:
    """`compile_graph`, loaded from the disk if an earlier process compiled the same graph,
    else compiled and kept. `compile_graph` leaves its graph as traced (inductor.py, rewrite),
    so the key made before it is the key of what it compiled."""

    def compile_cached(gm: GraphModule, backend: Backend) -> CompiledGraph:
        entry = key(gm, backend)
        compiled = None if entry is None else load(entry, gm, backend)
        if compiled is None:
            compiled = compile_graph(gm, backend)
            if entry is not None:
                store(entry, compiled, gm, backend)
        return compiled

    return compile_cached


def key(gm: GraphModule, backend: Backend) -> str | None:
    """The entry this graph's compiled form is kept under, or None: not kept (the cache is
    off, a stage that prints IR is on, the backend keeps no kernels, or the graph holds
    something that is not data)."""
    if not (config.graph_cache and config.disk_cache):
        return None
    if type(backend).save_kernels is Backend.save_kernels:
        return None
    if any(_logging.enabled(stage) for stage in _PRINTING):
        return None
    try:
        graph = _graph_text(gm)
    except _Uncacheable:
        disk_cache.graph_stats["uncacheable"] += 1
        return None
    return disk_cache.cache_key(disk_cache.GRAPH_KIND, graph, _environment(backend))


def load(key: str, gm: GraphModule, backend: Backend) -> CompiledGraph | None:
    """The graph compiled in an earlier process under `key`, or None (then compile it)."""
    payload = disk_cache.load(key, disk_cache.GRAPH_KIND)
    if payload is None:
        return None
    try:
        entry = json.loads(payload)
        kernels = backend.load_kernels(entry["kernels"]) if entry["kernels"] else []
        if kernels is None:  # its machine code is gone, or was made for another host
            disk_cache.graph_stats["stale"] += 1
            disk_cache.graph_stats["hit"] -= 1
            return None
        namespace = {name: _value(saved, gm) for name, saved in entry["names"].items()}
        for kernel, (arrays, name) in zip(kernels, entry["launches"], strict=True):
            namespace |= kernel.call_code(arrays, name).namespace
        if sorted(namespace) != entry["bound"]:
            raise ValueError(f"names missing: {sorted(set(entry['bound']) - set(namespace))}")
        binding = SizeBinding.static(fake_inputs(gm))
        return CompiledGraph.loaded(entry["source"], namespace, kernels, binding)
    except Exception as error:  # noqa: BLE001 - whatever an entry holds, a miss at worst
        disk_cache.graph_stats["rejected"] += 1
        disk_cache.graph_stats["hit"] -= 1  # read whole, but of no use: not a hit after all
        _logging.log(
            "kernel_cache",
            "could not load a compiled graph; compiling it again",
            f"{type(error).__name__}: {error}",
        )
        return None


def store(key: str, compiled: CompiledGraph, gm: GraphModule, backend: Backend) -> None:
    """Keep `compiled` under `key`, if every name its wrapper binds can be written as data."""
    kernels = [kernel for kernel, _, _ in compiled.launches]
    saved = backend.save_kernels(kernels) if kernels else []
    launched: set[str] = set()  # the names each kernel's launch binds: made again on loading
    for kernel, arrays, name in compiled.launches:
        launched |= set(kernel.call_code(arrays, name).namespace)
    constants = {
        id(getattr(gm, node.target)): node.target
        for node in gm.graph.nodes
        if node.op == "get_attr"
    }
    try:
        if saved is None:
            raise _Uncacheable("the backend cannot keep these kernels")
        names = {
            name: _describe(value, constants)
            for name, value in compiled.namespace.items()
            if name not in launched
        }
    except _Uncacheable:
        disk_cache.graph_stats["uncacheable"] += 1
        return
    entry = {
        "source": compiled.source,
        "kernels": saved,
        "names": names,
        "launches": [[arrays, name] for _, arrays, name in compiled.launches],
        "bound": sorted(compiled.namespace),
    }
    disk_cache.store(key, json.dumps(entry).encode(), disk_cache.GRAPH_KIND)


# ---- the key ----------------------------------------------------------------------------------


def _graph_text(gm: GraphModule) -> str:
    """The graph as lowering sees it, one line per node."""
    lines = []
    for node in gm.graph.nodes:
        if node.op == "call_module":
            raise _Uncacheable("a submodule call")
        line = (
            f"{node.op} {node.name} {_target(node)} {_arg(node.args)} "
            f"{_arg(node.kwargs)} -> {_val(node.meta.get('val'))}"
        )
        if node.op == "get_attr":
            line += f" = {_constant(getattr(gm, node.target))}"
        lines.append(line)
    return "\n".join(lines)


def _target(node: Node) -> str:
    target = node.target
    if isinstance(target, str):  # a placeholder's, an attribute's, a method's name
        return repr(target)
    if isinstance(target, OpDef):
        return f"op {target.name}"
    return _qualified(target)


def _qualified(value: Any) -> str:
    """'module:qualname' of a function or class that importing finds again, as itself."""
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if not module or not qualname or "<" in qualname:  # a lambda, a local function
        raise _Uncacheable(f"{value!r} has no importable name")
    return f"{module}:{qualname}"


def _arg(value: Any) -> str:
    """An argument as text that tells apart every value lowering could tell apart."""
    if isinstance(value, Node):
        return f"%{value.name}"
    if value is None or type(value) in (bool, int, float, str):
        return repr(value)
    if type(value) in (tuple, list):
        inner = ", ".join(_arg(v) for v in value)
        return f"({inner})" if type(value) is tuple else f"[{inner}]"
    if type(value) is dict:
        return "{" + ", ".join(f"{k!r}: {_arg(v)}" for k, v in value.items()) + "}"
    if type(value) is slice:
        return f"slice({_arg(value.start)}, {_arg(value.stop)}, {_arg(value.step)})"
    if isinstance(value, DType):
        return f"dtype {value.name}"
    if isinstance(value, Device):
        return f"device {value}"
    raise _Uncacheable(f"an argument of type {type(value).__name__}")


def _val(value: Any) -> str:
    """A node's meta['val']: a tensor's dtype, shape, strides and device; or nested values."""
    if isinstance(value, Tensor):
        return f"{value.dtype.name}{tuple(value.shape)}{value.stride()} {value.device}"
    if type(value) in (tuple, list):
        return "(" + ", ".join(_val(v) for v in value) + ")"
    if value is None or type(value) in (bool, int, float):
        return repr(value)
    raise _Uncacheable(f"a value of type {type(value).__name__}")


def _constant(value: Any) -> str:
    """A constant tensor by its layout and the SHA-256 of its elements."""
    if not isinstance(value, Tensor) or not isinstance(value._data, np.ndarray):
        return _arg(value)
    data = np.ascontiguousarray(value._data)
    return f"{_val(value)} sha256 {hashlib.sha256(data.tobytes()).hexdigest()}"


def hook_identities() -> list[str]:
    """Every hook that can change what a graph compiles to, as `kind/name:digest` (the name
    and the SHA-256 of the source: the same in every process): the graph passes, the
    partitioner and fusion policy in use, the ops and lowerings plugins added, the CUDA launch
    plans (minitorch/compile/hooks.py lists the hooks)."""
    hooks = [f"pass/{p.stage}/{identity(p.name, p.fn)}" for p in graph_passes()]
    partitioner = partitioners().get(config.partitioner)
    if partitioner is not None:
        hooks.append(f"partitioner/{identity(config.partitioner, partitioner)}")
    policy = fusion_policies().get(config.fusion_policy)
    if policy is not None:
        hooks.append(f"fusion_policy/{identity(config.fusion_policy, policy)}")
    for name, op in ADDED_OPS.items():  # a plugin's op: its kernel, derivative, decomposition
        for part in ("impl", "backward", "decomposition"):
            if getattr(op, part, None) is not None:
                hooks.append(f"op/{part}/{identity(name, getattr(op, part))}")
    # NOTE: looked up, not imported: a process whose graphs all come from the disk never loads
    # the lowering or the CUDA target, and a plugin that adds to them has imported them
    lowering = sys.modules.get("ir.lowering")
    if lowering is not None:
        hooks += [f"lowering/{identity(name, fn)}" for name, fn in lowering.ADDED.items()]
    launch = sys.modules.get("codegen.cuda.launch")
    if launch is not None:
        hooks += [f"launch_plan/{plan}" for plan in launch.launch_plan_identity()]
    return hooks


def _environment(backend: Backend) -> str:
    """Everything besides the graph that the compiled form depends on."""
    knobs = {
        name: sorted(value) if isinstance(value, (set, frozenset)) else value
        for name, value in sorted(vars(config).items())
        if not name.startswith("_")
        and name not in _NOT_CODE
        and not callable(value)
        and not isinstance(value, ModuleType)
    }
    return repr(
        (
            type(backend).__module__,
            type(backend).__qualname__,
            backend.name,
            backend.device,
            sorted(backend.dtypes),
            knobs,
            hook_identities(),  # by name and source digest, not repr
            sys.version,
            np.__version__,
            _compiler_source(),
        )
    )


@functools.cache
def _compiler_source() -> str:
    """A digest of every source file of minitorch, tracer, ir and codegen."""
    # NOTE: os.walk and strings: pathlib's rglob and Path objects cost a warm start 4 ms more.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    files = []
    for package in ("minitorch", "tracer", "ir", "codegen"):
        for folder, subfolders, names in os.walk(os.path.join(root, package)):
            subfolders[:] = sorted(name for name in subfolders if name != "__pycache__")
            files += [os.path.join(folder, name) for name in sorted(names) if name.endswith(".py")]
    return disk_cache.source_digest(files)


# ---- what the wrapper's names stand for ----------------------------------------------------


def _describe(value: Any, constants: dict[int, str]) -> list:
    """`value`, a name of the wrapper's namespace, as JSON data `_value` makes it from;
    `constants` names the graph's constant tensors by their ids."""
    if id(value) in constants:
        return ["constant", constants[id(value)]]
    if isinstance(value, OpDef) and OPS.get(value.name) is value:  # an extern step's op
        return ["op", value.name]
    if _is_literal(value):  # an op's tuple of ints, say
        return ["literal", repr(value)]
    if type(value) is tuple and len(value) == 2 and isinstance(value[1], Layout):
        buffer, layout = value  # an input's expected layout (output_code.py, as_layout)
        if not all(type(n) is int for n in (*layout.size, *layout.stride, layout.offset)):
            raise _Uncacheable("a layout of symbols")
        return [
            "input",
            buffer,
            list(layout.size),
            list(layout.stride),
            layout.dtype.name,
            layout.offset,
        ]
    if type(value) in (tuple, list):  # of slices, dtypes, ...
        return [type(value).__name__, [_describe(v, constants) for v in value]]
    if type(value) is slice:
        parts = (value.start, value.stop, value.step)
        return ["slice", [_describe(v, constants) for v in parts]]
    if isinstance(value, np.dtype):
        return ["numpy_dtype", value.name]
    if isinstance(value, DType):
        return ["dtype", value.name]
    if type(value) is float:  # inf, nan: no literal
        return ["float", repr(value)]
    if isinstance(value, ModuleType):
        _allowed(value.__name__)
        return ["module", value.__name__]
    module, qualname = _qualified(value).split(":")
    _allowed(module)
    if _resolve(module, qualname) != value:
        raise _Uncacheable(f"{module}:{qualname} is not {value!r}")
    return ["object", module, qualname]


def _value(saved: list, gm: GraphModule) -> Any:
    """The object `saved` (from `_describe`) stands for, in this process."""
    kind, *data = saved
    if kind == "constant":
        return getattr(gm, data[0])
    if kind == "op":
        return OPS[data[0]]
    if kind == "literal":
        return ast.literal_eval(data[0])
    if kind == "input":
        buffer, size, stride, dtype, offset = data
        return buffer, Layout(tuple(size), tuple(stride), get_dtype(dtype), offset)
    if kind == "tuple":
        return tuple(_value(item, gm) for item in data[0])
    if kind == "list":
        return [_value(item, gm) for item in data[0]]
    if kind == "slice":
        return slice(*(_value(item, gm) for item in data[0]))
    if kind == "numpy_dtype":
        return np.dtype(data[0])
    if kind == "dtype":
        return get_dtype(data[0])
    if kind == "float":
        return float(data[0])
    if kind == "module":
        _allowed(data[0])
        return importlib.import_module(data[0])
    if kind == "object":
        _allowed(data[0])
        return _resolve(*data)
    raise ValueError(f"an entry names a {kind!r}")


def _is_literal(value: Any) -> bool:
    """Whether `repr(value)` reads back as `value` with ast.literal_eval, type and all."""
    if value is None or type(value) in (bool, int, str):
        return True
    if type(value) is float:
        return bool(np.isfinite(value))
    return type(value) in (tuple, list) and all(_is_literal(v) for v in value)


def _allowed(module: str) -> None:
    if module.partition(".")[0] not in _MODULES:
        raise _Uncacheable(f"module {module} is not one an entry may name")


def _resolve(module: str, qualname: str) -> Any:
    value = importlib.import_module(module)
    for part in qualname.split("."):
        value = getattr(value, part)
    return value
