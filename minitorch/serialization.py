"""`minitorch.save` and `minitorch.load`: tensors and state dicts in a file, with no pickle.

    >>> minitorch.save(model.state_dict(), "model.mt")
    >>> model.load_state_dict(minitorch.load("model.mt"))
    >>> minitorch.save({"step": 10, "losses": [0.5, 0.25], "w": w}, buf)   # or a file object

PyTorch's `torch.save` pickles, and unpickling runs whatever code the file names, so loading a
downloaded checkpoint can run anything. minitorch writes the file format of its exported
programs instead ([Note: the file format] in tracer/export/serialize.py): this module owns that
format's envelope, which both use. What can be saved is data only: tensors (and Parameters),
numbers, strings, None, and lists, tuples and dicts of them, nested; anything else is refused
when saving, and loading builds only those; a whole nn.Module too, with the way to save it
instead ([Note: saving a whole module]). The same tensor saved twice loads as one tensor;
views of one memory load as separate tensors, each with its own copy.

[Note: the envelope]
A file is a prefix (magic b"MTEXPORT", version, lengths, SHA-256), a UTF-8 JSON header with a
"kind", and a payload of the tensors' raw little-endian bytes, back to back: the layout
[Note: the file format] in tracer/export/serialize.py draws. Exported programs and traced
modules are two kinds of header; the code that writes and checks the envelope is here, in the
eager core, so that `minitorch.save` needs nothing of the compiler.

For `minitorch.save` the header is {"kind": "object", "object": TREE, "tensors": [ENTRY...]},
where a TREE is a JSON number, string, true/false or null, or one of {"tensor": i},
{"float": "nan" | "inf" | "-inf"}, {"list": [TREE...]}, {"tuple": [TREE...]},
{"dict": [[TREE, TREE]...]} and {"ordered_dict": [[TREE, TREE]...]}; an ENTRY is
{"dtype", "shape", "offset", "nbytes", "device", "requires_grad", "parameter"}.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import struct
from collections import OrderedDict
from typing import Any

import numpy as np

from minitorch.device import device as Device
from minitorch.device import move, to_host
from minitorch.dtype import ALL_DTYPES, DType, bfloat16
from minitorch.errors import SerializationError
from minitorch.tensor import Tensor

MAGIC = b"MTEXPORT"
VERSION = 1
_PREFIX = struct.Struct("<8sIQQ32s")  # magic, version, H, P, sha256
_DTYPES = {d.name: d for d in ALL_DTYPES}
_ENTRY_KEYS = {"dtype", "shape", "offset", "nbytes", "device", "requires_grad", "parameter"}


# ---- save and load -----------------------------------------------------------------------


def save(obj: Any, f: str | os.PathLike | io.IOBase) -> None:
    """Write `obj` (tensors, numbers, strings, None, nested lists/tuples/dicts) to `f`, a path
    or a binary file object."""
    tensors: list[Tensor] = []
    tree = _to_tree(obj, tensors, {}, "obj")
    entries, payload = [], []
    offset = 0
    for t in tensors:
        raw = tensor_bytes(t)
        entries.append(
            {
                "dtype": t.dtype.name,
                "shape": list(t.shape),
                "offset": offset,
                "nbytes": len(raw),
                "device": t.device.type,
                "requires_grad": t.requires_grad,
                "parameter": _is_parameter(t),
            }
        )
        payload.append(raw)
        offset += len(raw)
    data = seal({"kind": "object", "object": tree, "tensors": entries}, b"".join(payload))
    if hasattr(f, "write"):
        f.write(data)
    else:
        with open(f, "wb") as out:
            out.write(data)


def load(
    f: str | os.PathLike | io.IOBase,
    map_location: str | Device | None = None,
    *,
    weights_only: bool | None = None,
) -> Any:
    """Read what `save` wrote; a SerializationError for any other or damaged file.

    `map_location` ("cpu", "cuda") puts every tensor there; else each goes back to the device
    it was saved from. `weights_only` is accepted for PyTorch's sake: nothing else is loadable.
    """
    if hasattr(f, "read"):
        data, source = f.read(), getattr(f, "name", "<file object>")
    else:
        with open(f, "rb") as src:
            data, source = src.read(), os.fspath(f)
    try:
        header, payload = open_envelope(data)
        kind = header.get("kind")
        if kind in ("graph_module", "exported_program"):
            loader = "minitorch.jit.load" if kind == "graph_module" else "minitorch.export.load"
            raise SerializationError(f"it holds a saved program ({kind}): load it with {loader}")
        expect(
            kind == "object" and set(header) == {"kind", "object", "tensors"},
            "the header must be an object with keys kind ('object'), object and tensors",
        )
        tensors = _read_tensors(header["tensors"], payload, map_location)
        return _from_tree(header["object"], tensors)
    except SerializationError as e:
        raise SerializationError(f"load(): cannot load {source!r}: {e}") from None


def _is_parameter(t: Tensor) -> bool:
    from minitorch.nn.parameter import Parameter

    return isinstance(t, Parameter)


# [Note: saving a whole module]
# torch.save(model) pickles the module: its class is written as an import path, and loading
# imports it and rebuilds the object attribute by attribute, which runs whatever code the file
# names. minitorch never unpickles, and a module cannot be rebuilt without that: its
# constructor's arguments are not recorded anywhere, and its forward is code, not data. So a
# whole module is refused, by name, with the way that works in PyTorch too: save its state dict
# and load it into a model the program builds itself.
_WHOLE_MODULE = (
    "save(): cannot save {where}, a whole nn.Module ({cls}): PyTorch pickles modules, and "
    "minitorch never pickles (loading a pickle runs code from the file). Save its weights "
    "instead: minitorch.save(model.state_dict(), path), then build the model in code and call "
    "model.load_state_dict(minitorch.load(path)); for a compiled program, see "
    "minitorch.export.save"
)


def _is_module(obj: Any) -> bool:
    from minitorch.nn.module import Module

    return isinstance(obj, Module)


# ---- the object tree -------------------------------------------------------------------------


def _to_tree(obj: Any, tensors: list[Tensor], seen: dict[int, int], where: str) -> Any:
    """`obj` as JSON, its tensors appended to `tensors` (a tensor seen before is reused)."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj) if math.isfinite(obj) else {"float": repr(float(obj))}
    if isinstance(obj, Tensor):
        if id(obj) not in seen:
            seen[id(obj)] = len(tensors)
            tensors.append(obj)
        return {"tensor": seen[id(obj)]}
    if isinstance(obj, (list, tuple)):
        kind = "list" if isinstance(obj, list) else "tuple"
        return {kind: [_to_tree(x, tensors, seen, f"{where}[{i}]") for i, x in enumerate(obj)]}
    if isinstance(obj, dict):
        kind = "ordered_dict" if isinstance(obj, OrderedDict) else "dict"
        return {
            kind: [
                [
                    _to_tree(k, tensors, seen, f"{where} key {k!r}"),
                    _to_tree(v, tensors, seen, f"{where}[{k!r}]"),
                ]
                for k, v in obj.items()
            ]
        }
    if _is_module(obj):
        raise SerializationError(_WHOLE_MODULE.format(where=where, cls=type(obj).__name__))
    raise SerializationError(
        f"save(): cannot save {where}, a {type(obj).__name__}: minitorch saves tensors, numbers, "
        "strings, None, and lists, tuples and dicts of them (it never pickles)"
    )


def _from_tree(tree: Any, tensors: list[Tensor]) -> Any:
    if tree is None or isinstance(tree, (bool, int, float, str)):
        return tree
    expect(isinstance(tree, dict) and len(tree) == 1, f"unknown object {str(tree):.60}")
    ((kind, value),) = tree.items()
    if kind == "tensor":
        expect(type(value) is int and 0 <= value < len(tensors), f"no tensor #{value!r:.30}")
        return tensors[value]
    if kind == "float":
        expect(value in ("nan", "inf", "-inf"), f"{value!r:.30} is not a float")
        return float(value)
    expect(isinstance(value, list), f"{kind!r:.30} must hold a list")
    if kind in ("list", "tuple"):
        items = [_from_tree(x, tensors) for x in value]
        return items if kind == "list" else tuple(items)
    expect(kind in ("dict", "ordered_dict"), f"unknown kind of object {kind!r:.30}")
    expect(all(isinstance(p, list) and len(p) == 2 for p in value), "a dict holds [key, value]")
    pairs = [(_from_tree(k, tensors), _from_tree(v, tensors)) for k, v in value]
    expect(
        all(isinstance(k, (bool, int, float, str, tuple)) or k is None for k, _ in pairs),
        "a dict key must be a number, a string, None or a tuple",
    )
    return dict(pairs) if kind == "dict" else OrderedDict(pairs)


def _read_tensors(entries: Any, payload: bytes, map_location) -> list[Tensor]:
    from minitorch.nn.parameter import Parameter

    expect(isinstance(entries, list), "'tensors' must be a list")
    out, offset = [], 0
    for i, entry in enumerate(entries):
        where = f"tensor #{i}"
        expect(
            isinstance(entry, dict) and set(entry) == _ENTRY_KEYS,
            f"{where} must be an object with keys {', '.join(sorted(_ENTRY_KEYS))}",
        )
        expect(
            all(isinstance(entry[k], bool) for k in ("requires_grad", "parameter")),
            f"{where}: requires_grad and parameter must be true or false",
        )
        expect(entry["device"] in ("cpu", "cuda"), f"{where}: unknown device")
        dtype, shape = read_dtype(entry["dtype"], where), read_shape(entry["shape"], where)
        tensor = read_tensor(payload, offset, entry, dtype, shape, where)
        target = Device(map_location or entry["device"])
        if target.type != "cpu":
            tensor = Tensor._from_array(move(tensor._data, target))
        if entry["parameter"]:
            tensor = Parameter(tensor, requires_grad=entry["requires_grad"])
        elif entry["requires_grad"]:
            tensor.requires_grad_(True)
        out.append(tensor)
        offset += entry["nbytes"]
    expect(
        offset == len(payload), f"the tensors cover {offset} bytes of a {len(payload)}-byte payload"
    )
    return out


# ---- the envelope, shared with exported programs ([Note: the envelope]) ----------------------


def seal(header: dict, payload: bytes) -> bytes:
    """The file's bytes: prefix, JSON header, payload."""
    head = json.dumps(header, allow_nan=False, separators=(",", ":")).encode("utf-8")
    digest = hashlib.sha256(head + payload).digest()
    return _PREFIX.pack(MAGIC, VERSION, len(head), len(payload), digest) + head + payload


def open_envelope(data: bytes) -> tuple[dict, bytes]:
    """The header and payload of a file's bytes, after checking the magic, the version, the
    lengths, the checksum and the JSON, in that order."""
    if data and len(data) < len(MAGIC) and MAGIC.startswith(data):
        raise SerializationError(f"the file is truncated: {len(data)} bytes, inside the magic")
    if data[: len(MAGIC)] != MAGIC:
        raise SerializationError(
            f"not a minitorch saved program or object: it starts with "
            f"{data[:8]!r}, not {MAGIC!r}{_what_it_is(data)}"
        )
    if len(data) < _PREFIX.size:
        raise SerializationError(
            f"the file is truncated: {len(data)} bytes, shorter than the {_PREFIX.size}-byte prefix"
        )
    _, version, head_len, payload_len, digest = _PREFIX.unpack_from(data)
    if version != VERSION:
        raise SerializationError(
            f"format version {version} is not supported (this minitorch reads version {VERSION})"
        )
    expected = _PREFIX.size + head_len + payload_len
    if len(data) != expected:
        what = "truncated" if len(data) < expected else "longer than its header says"
        raise SerializationError(f"the file is {what}: {len(data)} bytes, expected {expected}")
    body = data[_PREFIX.size :]
    if hashlib.sha256(body).digest() != digest:
        raise SerializationError(
            "checksum mismatch: the file is corrupted (its bytes changed after it was saved)"
        )
    try:
        header = json.loads(
            body[:head_len].decode("utf-8"),
            parse_constant=_no_constant,
            object_pairs_hook=_unique_keys,
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SerializationError(f"the header is not valid JSON ({e})") from None
    if not isinstance(header, dict):
        raise SerializationError("the header must be a JSON object")
    return header, body[head_len:]


def _what_it_is(data: bytes) -> str:
    if data[:1] == b"\x80":
        return " (a pickle: minitorch never unpickles, since unpickling runs code from the file)"
    if data[:4] == b"PK\x03\x04":
        return " (a zip archive, as torch.save writes: not readable here)"
    return ""


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"duplicate keys in {keys}")
    return dict(pairs)


def tensor_bytes(tensor: Tensor) -> bytes:
    """A tensor's elements, row-major and little-endian (bool: one byte, 0 or 1; bfloat16: the
    top two bytes of its float32 values, which are all it has, as PyTorch stores it)."""
    array = to_host(tensor.detach()._data)
    if tensor.dtype is bfloat16:
        bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32) >> 16
        return bits.astype("<u2").tobytes()
    return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()


def read_tensor(
    payload: bytes, offset: int, entry: dict, dtype: DType, shape: tuple[int, ...], where: str
) -> Tensor:
    """The tensor whose bytes `entry` says start at `offset`, after checking that they do,
    that their count fits dtype and shape, and that they lie inside the payload."""
    nbytes = math.prod(shape) * dtype.itemsize
    expect(
        entry["nbytes"] == nbytes and type(entry["nbytes"]) is int,
        f"{where}: {dtype.name}{list(shape)} is {nbytes} bytes, but the header says "
        f"{entry['nbytes']!r:.30}",
    )
    expect(
        entry["offset"] == offset and type(entry["offset"]) is int,
        f"{where}: its bytes must start at {offset}, right after the tensor before it, not "
        f"at {entry['offset']!r:.30}",
    )
    expect(
        offset + nbytes <= len(payload),
        f"{where}: bytes {offset}..{offset + nbytes} run past the payload's {len(payload)} bytes",
    )
    raw = payload[offset : offset + nbytes]
    if dtype.name == "bool":
        expect(set(raw) <= {0, 1}, f"{where}: a bool byte is neither 0 nor 1")
    if dtype is bfloat16:  # two bytes each: the top of a float32 (tensor_bytes)
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        array = bits.view(np.float32).astype(dtype.np)
    else:
        array = np.frombuffer(raw, dtype=dtype.np.newbyteorder("<")).astype(dtype.np)
    return Tensor._from_array(array.reshape(shape))


def read_dtype(name: Any, where: str) -> DType:
    expect(isinstance(name, str) and name in _DTYPES, f"'{where}': unknown dtype {name!r:.30}")
    return _DTYPES[name]


def read_shape(shape: Any, where: str) -> tuple[int, ...]:
    expect(
        isinstance(shape, list)
        and len(shape) <= 64
        and all(type(d) is int and d >= 0 for d in shape),
        f"'{where}': shape {shape!r:.60} is not a list of sizes",
    )
    return tuple(shape)


def expect(ok: bool, message: str) -> None:
    if not ok:
        raise SerializationError(message)
