"""Saving a program to one file, and loading it back without running anything from the file.

    >>> export.save(program, "model.mtx")            # or traced.save("traced_model.pt")
    >>> export.load("model.mtx").module()(x)         # or minitorch.jit.load(...)(x)

[Note: the file format]
One file, version 1, all integers little-endian:

    offset    size  field
    0         8     magic b"MTEXPORT"
    8         4     format version (uint32): 1
    12        8     H, the header's length in bytes (uint64)
    20        8     P, the payload's length in bytes (uint64)
    28        32    SHA-256 of the header bytes followed by the payload bytes
    60        H     header: UTF-8 JSON (below)
    60 + H    P     payload: the tensors' raw little-endian bytes, in header order, back to back

The header is one JSON object:

    {"kind": "graph_module" | "exported_program",
     "training": false,
     "nodes": [{"name": "mm", "op": "call_function", "target": "minitorch.ops.mm",
                "args": [{"node": "x"}, {"node": "permute"}], "kwargs": {}}, ...],
     "tensors": [{"name": "linear.weight", "kind": "parameter", "requires_grad": true,
                  "dtype": "float32", "shape": [5, 10], "offset": 0, "nbytes": 200}, ...],
     "signature": {"inputs": [{"kind": "user_input", "name": "x", "target": null,
                               "dtype": "float32", "shape": [1, 10]}, ...],
                   "outputs": [{"kind": "user_output", "name": "add", "dtype": "float32",
                                "shape": [1, 5]}],
                   "out_spec": "*"}}      (exported_program only)

Nodes and their arguments are written as graph_json.py describes ([Note: nothing is imported
by name]); tensor kinds are "parameter", "buffer" or "constant"; dtypes are float32, float64,
int32, int64 and bool (one byte, 0 or 1).

Loading checks, in order, and stops at the first failure with a SerializationError naming the
file: the magic (a pickle or a torch.save zip is named as such: we never unpickle, since
unpickling runs code chosen by the file), the version, the lengths against the file's size
(truncated or trailing bytes), the checksum, the header's JSON and every field of it, every
call target against the allowlist, every argument's type, and each tensor's bytes (its size
from dtype and shape, its place right after the one before). No code from the file runs: the
only code is the `forward` that GraphModule generates from the checked graph, as for any trace.
The envelope (prefix, checksum, JSON) and the tensors' bytes are minitorch/serialization.py's,
which `minitorch.save` writes too, with a header of kind "object".
"""

from __future__ import annotations

import os
from typing import Any

from minitorch.nn.parameter import Parameter
from minitorch.serialization import (
    expect,
    open_envelope,
    read_dtype,
    read_shape,
    read_tensor,
    seal,
    tensor_bytes,
)
from minitorch.tensor import Tensor
from tracer.export.graph_json import (
    SerializationError,
    check_attr_name,
    graph_from_json,
    graph_to_json,
)
from tracer.export.program import (
    ExportedProgram,
    GraphSignature,
    InputSpec,
    OutputSpec,
    assemble,
    set_input_meta,
    tensor_kinds,
)
from tracer.fx import GraphModule

_KINDS = ("parameter", "buffer", "constant")


def save(obj: GraphModule | ExportedProgram, f: str | os.PathLike) -> None:
    """Write `obj` to the file `f` in the format of [Note: the file format]."""
    data = to_bytes(obj)
    with open(f, "wb") as out:
        out.write(data)


def load(f: str | os.PathLike) -> GraphModule | ExportedProgram:
    """Read a file that `save` wrote; SerializationError if it is anything else."""
    with open(f, "rb") as src:
        data = src.read()
    return from_bytes(data, os.fspath(f))


def to_bytes(obj: GraphModule | ExportedProgram) -> bytes:
    """The bytes of the saved file."""
    program = obj if isinstance(obj, ExportedProgram) else None
    gm = program.graph_module if program else obj
    if not isinstance(gm, GraphModule):
        raise SerializationError(
            f"save: expected a GraphModule or an ExportedProgram, got {type(obj).__name__}"
        )
    entries, chunks, offset = [], [], 0
    for name, (kind, tensor) in tensor_kinds(gm).items():
        if not isinstance(tensor, Tensor):
            raise SerializationError(
                f"cannot save get_attr '{name}': it reads a {type(tensor).__name__}, not a tensor"
            )
        raw = tensor_bytes(tensor)
        entries.append(
            {
                "name": name,
                "kind": kind,
                "requires_grad": tensor.requires_grad,
                "dtype": tensor.dtype.name,
                "shape": list(tensor.shape),
                "offset": offset,
                "nbytes": len(raw),
            }
        )
        chunks.append(raw)
        offset += len(raw)
    header: dict[str, Any] = {
        "kind": "exported_program" if program else "graph_module",
        "training": gm.training,
        "nodes": graph_to_json(gm.graph),
        "tensors": entries,
    }
    if program:
        header["signature"] = _signature_to_json(program.graph_signature)
    return seal(header, b"".join(chunks))


def from_bytes(data: bytes, source: str = "<bytes>") -> GraphModule | ExportedProgram:
    """Check and rebuild what `to_bytes` wrote; every failure names `source`."""
    try:
        header, payload = open_envelope(data)
        return _rebuild(header, payload)
    except SerializationError as e:
        raise SerializationError(f"cannot load {source!r}: {e}") from None
    except Exception as e:  # noqa: BLE001 - a checked header that still fails to build
        raise SerializationError(
            f"cannot load {source!r}: the graph does not rebuild ({type(e).__name__}: {e})"
        ) from None


# ---- the header: tensors, graph, signature --------------------------------------------------


def _rebuild(header: dict, payload: bytes) -> GraphModule | ExportedProgram:
    kind = header.get("kind")
    keys = {"kind", "training", "nodes", "tensors"} | (
        {"signature"} if kind == "exported_program" else set()
    )
    expect(kind in ("graph_module", "exported_program"), f"unknown kind {kind!r:.60}")
    expect(set(header) == keys, f"the header's keys must be {sorted(keys)}")
    expect(isinstance(header["training"], bool), "'training' must be true or false")
    tensors = _tensors(header["tensors"], payload)
    graph = graph_from_json(header["nodes"], set(tensors))
    if kind == "graph_module":
        return assemble(graph, tensors, header["training"])
    signature = _signature_from_json(header["signature"], tensors)
    set_input_meta(graph, [s for s in signature.input_specs if s.kind == "user_input"])
    expect(
        len(graph.find_nodes(op="placeholder"))
        == sum(s.kind == "user_input" for s in signature.input_specs),
        "the signature's user inputs do not match the graph's placeholders",
    )
    return ExportedProgram(assemble(graph, tensors, header["training"]), signature)


def _tensors(entries: Any, payload: bytes) -> dict[str, tuple[str, Tensor]]:
    expect(isinstance(entries, list), "'tensors' must be a list")
    out: dict[str, tuple[str, Tensor]] = {}
    offset = 0
    for i, entry in enumerate(entries):
        expect(
            isinstance(entry, dict)
            and set(entry)
            == {"name", "kind", "requires_grad", "dtype", "shape", "offset", "nbytes"},
            f"tensor #{i} must be an object with keys name, kind, requires_grad, dtype, "
            "shape, offset, nbytes",
        )
        name = entry["name"]
        check_attr_name(name)
        expect(name not in out, f"two tensors are named {name!r}")
        expect(
            entry["kind"] in _KINDS and isinstance(entry["requires_grad"], bool),
            f"tensor '{name}': kind must be one of {', '.join(_KINDS)} and requires_grad a bool",
        )
        dtype, shape = read_dtype(entry["dtype"], name), read_shape(entry["shape"], name)
        tensor = read_tensor(payload, offset, entry, dtype, shape, f"tensor '{name}'")
        if entry["kind"] == "parameter":
            tensor = Parameter(tensor, requires_grad=entry["requires_grad"])
        out[name] = (entry["kind"], tensor)
        offset += entry["nbytes"]
    expect(
        offset == len(payload), f"the tensors cover {offset} bytes of a {len(payload)}-byte payload"
    )
    return out


def _signature_to_json(sig: GraphSignature) -> dict:
    inputs = [
        {
            "kind": s.kind,
            "name": s.name,
            "target": s.target,
            "dtype": s.dtype.name,
            "shape": list(s.shape),
        }
        for s in sig.input_specs
    ]
    outputs = [
        {
            "kind": s.kind,
            "name": s.name,
            "dtype": s.dtype.name if s.dtype else None,
            "shape": list(s.shape) if s.shape is not None else None,
        }
        for s in sig.output_specs
    ]
    return {"inputs": inputs, "outputs": outputs, "out_spec": sig.out_spec}


def _signature_from_json(sig: Any, tensors: dict[str, tuple[str, Tensor]]) -> GraphSignature:
    expect(
        isinstance(sig, dict)
        and set(sig) == {"inputs", "outputs", "out_spec"}
        and isinstance(sig["inputs"], list)
        and isinstance(sig["outputs"], list)
        and isinstance(sig["out_spec"], str),
        "'signature' must hold lists 'inputs' and 'outputs', and a string 'out_spec'",
    )
    inputs = []
    for i, s in enumerate(sig["inputs"]):
        expect(
            isinstance(s, dict)
            and set(s) == {"kind", "name", "target", "dtype", "shape"}
            and isinstance(s["name"], str),
            f"input spec #{i} must have kind, name, target, dtype, shape",
        )
        if s["kind"] == "user_input":
            expect(s["target"] is None, f"input spec '{s['name']}': a user input has no target")
        else:
            expect(
                isinstance(s["target"], str)
                and s["target"] in tensors
                and tensors[s["target"]][0] == s["kind"],
                f"input spec '{s['name']}': {s['kind']!r:.30} {s['target']!r:.60} is not "
                "one of the file's tensors",
            )
        inputs.append(
            InputSpec(
                s["kind"],
                s["name"],
                s["target"],
                read_shape(s["shape"], s["name"]),
                read_dtype(s["dtype"], s["name"]),
            )
        )
    outputs = []
    for i, s in enumerate(sig["outputs"]):
        expect(
            isinstance(s, dict) and set(s) == {"kind", "name", "dtype", "shape"},
            f"output spec #{i} must have kind, name, dtype, shape",
        )
        if s["kind"] == "constant":
            outputs.append(OutputSpec("constant", None, None, None))
            continue
        expect(
            s["kind"] == "user_output" and isinstance(s["name"], str),
            f"output spec #{i}: kind must be user_output or constant",
        )
        outputs.append(
            OutputSpec(
                "user_output",
                s["name"],
                read_shape(s["shape"], s["name"]),
                read_dtype(s["dtype"], s["name"]),
            )
        )
    return GraphSignature(tuple(inputs), tuple(outputs), sig["out_spec"])
