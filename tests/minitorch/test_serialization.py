"""minitorch.save / minitorch.load: round trips of tensors and state dicts, bit for bit, in the
export file format; and every damaged or foreign file refused with a SerializationError.

The envelope is read here with `struct` alone, as [Note: the file format] in
tracer/export/serialize.py documents it.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import pickle
import struct
from collections import OrderedDict

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.errors import SerializationError

PREFIX = struct.Struct("<8sIQQ32s")  # magic, version, header length, payload length, sha256


def _round_trip(obj):
    buffer = io.BytesIO()
    minitorch.save(obj, buffer)
    buffer.seek(0)
    return minitorch.load(buffer)


def test_a_state_dict_round_trips_and_loads_into_a_fresh_model(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    model(minitorch.randn(5, 3))  # running stats move
    path = tmp_path / "model.mt"
    minitorch.save(model.state_dict(), path)
    loaded = minitorch.load(path)
    assert isinstance(loaded, OrderedDict) and list(loaded) == list(model.state_dict())
    for name, value in model.state_dict().items():
        assert loaded[name].dtype is value.dtype
        np.testing.assert_array_equal(loaded[name].numpy(), value.numpy())
    fresh = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    fresh.load_state_dict(loaded)
    x = minitorch.randn(2, 3)
    np.testing.assert_array_equal(
        fresh.eval()(x).detach().numpy(), model.eval()(x).detach().numpy()
    )


@pytest.mark.parametrize(
    "dtype",
    [minitorch.float32, minitorch.float64, minitorch.int32, minitorch.int64, minitorch.bool],
    ids=str,
)
def test_every_dtype_and_shape_comes_back_bit_for_bit(dtype):
    array = np.random.default_rng(0).normal(size=(2, 3, 4)) * 100
    for shape in [(2, 3, 4), (), (0, 3)]:
        x = minitorch.tensor(array.reshape(-1)[: math.prod(shape)].reshape(shape), dtype=dtype)
        y = _round_trip(x)
        assert y.dtype is dtype and y.shape == x.shape
        np.testing.assert_array_equal(y.numpy(), x.numpy())


def test_non_contiguous_views_are_saved_as_their_values():
    x = minitorch.arange(12.0).reshape(3, 4)
    view = x.t()[1:]
    np.testing.assert_array_equal(_round_trip(view).numpy(), view.numpy())


def test_nested_containers_numbers_and_requires_grad_come_back():
    w = minitorch.ones(2, requires_grad=True)
    obj = {
        "step": 10,
        "lr": 1e-3,
        "best": float("inf"),
        "nan": float("nan"),
        "name": "gpt",
        "flag": True,
        "none": None,
        "losses": [0.5, 0.25],
        "shape": (2, 3),
        "nested": {"w": w, 1: "int key"},
        "param": nn.Parameter(minitorch.zeros(3)),
    }
    loaded = _round_trip(obj)
    assert loaded["step"] == 10 and loaded["lr"] == 1e-3 and loaded["best"] == math.inf
    assert math.isnan(loaded["nan"]) and loaded["name"] == "gpt" and loaded["flag"] is True
    assert loaded["none"] is None and loaded["losses"] == [0.5, 0.25]
    assert loaded["shape"] == (2, 3) and loaded["nested"][1] == "int key"
    assert loaded["nested"]["w"].requires_grad and loaded["nested"]["w"].is_leaf
    assert isinstance(loaded["param"], nn.Parameter) and loaded["param"].requires_grad


def test_one_tensor_saved_twice_loads_as_one_tensor():
    x = minitorch.ones(2)
    a, b = _round_trip([x, x])
    assert a is b


def test_objects_that_are_not_data_are_refused_when_saving():
    with pytest.raises(SerializationError, match="never pickles"):
        _round_trip({"model": nn.Linear(2, 2)})
    with pytest.raises(SerializationError, match=r"obj\['f'\]"):
        _round_trip({"f": lambda: 0})


def test_the_file_is_the_export_format_with_an_object_header(tmp_path):
    path = tmp_path / "x.mt"
    minitorch.save({"x": minitorch.tensor([1.0, 2.0])}, path)
    data = path.read_bytes()
    magic, version, head_len, payload_len, digest = PREFIX.unpack_from(data)
    assert magic == b"MTEXPORT" and version == 1
    assert len(data) == PREFIX.size + head_len + payload_len
    assert hashlib.sha256(data[PREFIX.size :]).digest() == digest
    header = json.loads(data[PREFIX.size : PREFIX.size + head_len])
    assert header["kind"] == "object"
    assert header["object"] == {"dict": [["x", {"tensor": 0}]]}
    assert data[PREFIX.size + head_len :] == np.array([1.0, 2.0], "<f4").tobytes()


# ---- damaged and foreign files ---------------------------------------------------------------


@pytest.fixture
def saved() -> bytes:
    buffer = io.BytesIO()
    minitorch.save({"w": minitorch.randn(4, 4), "step": 3}, buffer)
    return buffer.getvalue()


def _load_bytes(data: bytes):
    return minitorch.load(io.BytesIO(data))


@pytest.mark.parametrize("keep", [0, 4, 30, 70, -1])
def test_a_truncated_file_is_refused(saved, keep):
    with pytest.raises(SerializationError, match="truncated|not a minitorch"):
        _load_bytes(saved[:keep])


@pytest.mark.parametrize("where", [PREFIX.size + 3, -1])
def test_a_flipped_byte_fails_the_checksum(saved, where):
    data = bytearray(saved)
    data[where] ^= 0x40
    with pytest.raises(SerializationError, match="checksum mismatch"):
        _load_bytes(bytes(data))


def test_a_pickle_is_named_and_never_unpickled():
    with pytest.raises(SerializationError, match="never unpickles"):
        _load_bytes(pickle.dumps({"w": [1.0]}))


def _sealed(header: dict, payload: bytes = b"") -> bytes:
    head = json.dumps(header).encode()
    digest = hashlib.sha256(head + payload).digest()
    return PREFIX.pack(b"MTEXPORT", 1, len(head), len(payload), digest) + head + payload


@pytest.mark.parametrize(
    "header, match",
    [
        ({"kind": "object", "object": {"tensor": 0}, "tensors": []}, "no tensor #0"),
        ({"kind": "object", "object": {"set": []}, "tensors": []}, "unknown kind of object"),
        ({"kind": "object", "object": {"float": "1e400"}, "tensors": []}, "is not a float"),
        ({"kind": "object", "object": 1}, "keys kind"),
        (
            {
                "kind": "object",
                "object": None,
                "tensors": [
                    {
                        "dtype": "float8",
                        "shape": [1],
                        "offset": 0,
                        "nbytes": 2,
                        "device": "cpu",
                        "requires_grad": False,
                        "parameter": False,
                    }
                ],
            },
            "unknown dtype",
        ),
        (
            {
                "kind": "object",
                "object": None,
                "tensors": [
                    {
                        "dtype": "float32",
                        "shape": [4],
                        "offset": 0,
                        "nbytes": 16,
                        "device": "cpu",
                        "requires_grad": False,
                        "parameter": False,
                    }
                ],
            },
            "run past the payload",
        ),
        ({"kind": "graph_module", "nodes": [], "tensors": [], "training": False}, "jit.load"),
    ],
)
def test_a_well_sealed_but_wrong_header_is_refused_by_name(header, match):
    with pytest.raises(SerializationError, match=match):
        _load_bytes(_sealed(header))


def test_map_location_puts_the_tensors_on_the_cpu_and_weights_only_is_accepted():
    buffer = io.BytesIO()
    minitorch.save([minitorch.ones(2)], buffer)
    buffer.seek(0)
    (x,) = minitorch.load(buffer, map_location="cpu", weights_only=True)
    assert x.device == "cpu" and x.tolist() == [1.0, 1.0]
