"""export.export / save / load and jit save / load: round trips held bitwise to eager minitorch,
and every damaged, edited or foreign file refused with an error that names it.

The file format is read here with `struct` and `json` alone, as [Note: the file format] in
tracer/export/serialize.py documents it, so the tests pin the documented layout.
"""

from __future__ import annotations

import hashlib
import json
import operator
import pickle
import struct
import zipfile

import numpy as np
import pytest

import minitorch as torch
from minitorch import nn
from minitorch.dtype import float32
from minitorch.errors import DataDependentError, DTypeError, MinitorchError, ShapeError
from minitorch.ops.registry import OpDef, TensorMeta
from tracer.export import ExportedProgram, SerializationError
from tracer.fx import Graph, GraphModule

PREFIX = struct.Struct("<8sIQQ32s")  # magic, version, header length, payload length, sha256


def same_bits(a, b) -> None:
    a, b = a.detach().numpy(), b.detach().numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


def split(data: bytes) -> tuple[dict, bytes]:
    magic, version, head_len, payload_len, digest = PREFIX.unpack_from(data)
    assert (magic, version) == (b"MTEXPORT", 1)
    body = data[PREFIX.size :]
    assert len(body) == head_len + payload_len and hashlib.sha256(body).digest() == digest
    return json.loads(body[:head_len]), body[head_len:]


def join(header: dict, payload: bytes) -> bytes:
    """A well-formed envelope around any header: edits that the checksum cannot catch."""
    head = json.dumps(header).encode()
    digest = hashlib.sha256(head + payload).digest()
    return PREFIX.pack(b"MTEXPORT", 1, len(head), len(payload), digest) + head + payload


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def conv_bn_relu() -> nn.Module:
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2)
    )
    with torch.no_grad():  # statistics that are not the defaults
        model[1].running_mean.copy_(torch.randn(4))
        model[1].running_var.copy_(torch.rand(4) + 0.5)
    return model.eval()


@pytest.fixture
def saved_mlp(tmp_path):
    model = MLP().eval()
    path = tmp_path / "mlp.mtx"
    torch.export.save(torch.export.export(model, (torch.randn(2, 6),)), path)
    return path


# ---- seed 004: torch.jit.trace, save, load ---------------------------------------------------


class MyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(10, 5)

    def forward(self, x):
        return self.linear(x)


def test_seed_004_jit_save_and_load(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    model = MyModel()
    model.eval()
    example_input = torch.randn(1, 10)
    traced_model = torch.jit.trace(model, example_input)
    traced_model.save("traced_model.pt")
    loaded_traced_model = torch.jit.load("traced_model.pt")
    output = loaded_traced_model(example_input)
    print(output)
    assert capsys.readouterr().out.startswith("tensor([[")
    same_bits(output, model(example_input))
    assert loaded_traced_model.code == traced_model.code
    assert not loaded_traced_model.training
    for name, p in loaded_traced_model.named_parameters():
        assert isinstance(p, nn.Parameter) and p.requires_grad
        same_bits(p, dict(model.named_parameters())[name])


def test_seed_004_compiled_model_traced_saved_and_loaded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = MyModel()
    model.eval()
    compiled_model = torch.compile(model)
    example_input = torch.randn(1, 10)
    compiled_model(example_input)
    traced_model = torch.jit.trace(compiled_model, example_input)
    traced_model.save("dynamo_traced_model.pt")
    loaded_traced_model = torch.jit.load("dynamo_traced_model.pt")
    same_bits(loaded_traced_model(example_input), model(example_input))


def printed_program_in_the_docstring() -> str:
    """The text under `>>> print(program)` in tracer/export/program.py's docstring."""
    import textwrap

    import tracer.export.program as module

    after = module.__doc__.split(">>> print(program)\n", 1)[1]
    return textwrap.dedent(after.split(">>>", 1)[0]).rstrip()


def test_printed_program_matches_the_docstring(tmp_path):
    program = torch.export.export(nn.Linear(10, 5).eval(), (torch.randn(1, 10),))
    printed = printed_program_in_the_docstring()
    assert printed.startswith("ExportedProgram:") and "Graph signature:" in printed
    assert str(program) == printed
    torch.export.save(program, tmp_path / "linear.mtx")
    assert str(torch.export.load(tmp_path / "linear.mtx")) == printed


# ---- round trips, bitwise ------------------------------------------------------------------


def test_export_mlp_round_trip(tmp_path):
    model = MLP().eval()
    x = torch.randn(2, 6)
    program = torch.export.export(model, (x,))
    assert isinstance(program, ExportedProgram)
    assert isinstance(program.graph_module, GraphModule)
    specs = program.graph_signature.input_specs
    assert [(s.kind, s.target, s.shape) for s in specs] == [
        ("user_input", None, (2, 6)),
        ("parameter", "fc1.weight", (8, 6)),
        ("parameter", "fc1.bias", (8,)),
        ("parameter", "fc2.weight", (3, 8)),
        ("parameter", "fc2.bias", (3,)),
    ]
    (out,) = program.graph_signature.output_specs
    assert (out.kind, out.shape, out.dtype) == ("user_output", (2, 3), float32)
    path = tmp_path / "mlp.mtx"
    torch.export.save(program, path)
    loaded = torch.export.load(path)
    assert str(loaded) == str(program)
    assert loaded.graph_signature == program.graph_signature
    x2 = torch.randn(2, 6)
    same_bits(loaded.module()(x2), model(x2))
    same_bits(program.module()(x2), model(x2))
    assert sorted(loaded.state_dict) == sorted(model.state_dict())


def test_conv_bn_relu_round_trip_keeps_buffers(tmp_path):
    model = conv_bn_relu()
    x = torch.randn(2, 3, 8, 8)
    program = torch.export.export(model, (x,))
    kinds = {s.target: s.kind for s in program.graph_signature.input_specs if s.target}
    assert kinds["1.running_mean"] == "buffer" and kinds["0.weight"] == "parameter"
    path = tmp_path / "cbr.mtx"
    torch.export.save(program, path)
    module = torch.export.load(path).module()
    assert sorted(dict(module.named_buffers())) == ["1.running_mean", "1.running_var"]
    assert sorted(dict(module.named_parameters())) == ["0.bias", "0.weight", "1.bias", "1.weight"]
    x2 = torch.randn(2, 3, 8, 8)
    same_bits(module(x2), model(x2))  # MaxPool2d's fill=-inf argument survives the JSON
    traced = torch.jit.trace(model, x)
    traced.save(tmp_path / "cbr.pt")
    same_bits(torch.jit.load(tmp_path / "cbr.pt")(x2), model(x2))


class ManyOutputs(nn.Module):
    def forward(self, x):
        values, indices = x.topk(2, dim=-1)
        biggest = x.max(dim=0)  # a namedtuple: saved as a plain tuple
        return values, {"idx": [indices], "row": x[0, 1:, None]}, biggest, x.to(torch.float64)


def test_multi_output_structure_round_trip(tmp_path):
    model = ManyOutputs()
    x = torch.randn(3, 5)
    program = torch.export.export(model, (x,))
    assert program.graph_signature.out_spec == "(*, {idx: [*], row: *}, (*, *), *)"
    assert [s.dtype.name for s in program.graph_signature.output_specs] == [
        "float32",
        "int64",
        "float32",
        "float32",
        "int64",
        "float64",
    ]
    torch.export.save(program, tmp_path / "many.mtx")
    got = torch.export.load(tmp_path / "many.mtx").module()(x2 := torch.randn(3, 5))
    want = model(x2)
    same_bits(got[0], want[0])
    same_bits(got[1]["idx"][0], want[1]["idx"][0])
    same_bits(got[1]["row"], want[1]["row"])
    same_bits(got[2][0], want[2].values)
    same_bits(got[2][1], want[2].indices)
    same_bits(got[3], want[3])


def test_getitem_and_constants_round_trip(tmp_path):
    graph = Graph()
    x = graph.placeholder("x")
    first = graph.call_function(operator.getitem, (x, (slice(None, None, None), Ellipsis, 0)))
    mask = graph.get_attr("mask")
    graph.output((graph.call_function(torch.ops.where, (mask, first, -1.5)), 7))
    gm = GraphModule({"mask": torch.tensor([True, False, True])}, graph)
    gm.save(tmp_path / "g.pt")
    loaded = torch.jit.load(tmp_path / "g.pt")
    x = torch.randn(3, 2)
    got, seven = loaded(x)
    same_bits(got, gm(x)[0])
    assert seven == 7 and loaded.mask.dtype is torch.bool


def test_traced_function_with_a_frozen_constant(tmp_path):
    noise = np.random.default_rng(0).standard_normal(4).astype(np.float32)
    traced = torch.jit.trace(lambda x: x * torch.from_numpy(noise.copy()), torch.randn(4))
    traced.save(tmp_path / "f.pt")
    loaded = torch.jit.load(tmp_path / "f.pt")
    x = torch.randn(4)
    same_bits(loaded(x), traced(x))
    assert "_tensor_constant0" in dict(vars(loaded)) and not list(loaded.parameters())


# ---- what export refuses --------------------------------------------------------------------


class Branchy(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # a choice made from the data
            return x + 1
        return x - 1


def test_export_refuses_data_dependent_control_flow():
    with pytest.raises(DataDependentError, match=r"Python bool.*test_export.py:\d+.*where"):
        torch.export.export(Branchy(), (torch.randn(3),))
    # and the trace's patches are gone again: conversions work without warnings
    assert bool(torch.ones(1).sum() > 0)


def test_export_of_batchnorm_in_training_mode_says_eval():
    with pytest.raises(torch.CompileError, match=r"in place.*call \.eval\(\) before export"):
        torch.export.export(nn.BatchNorm1d(3), (torch.randn(4, 3),))


def test_exported_module_checks_inputs():
    module = torch.export.export(MLP().eval(), (torch.randn(2, 6),)).module()
    with pytest.raises(ShapeError, match=r"shape \(5, 6\).*exported for \(2, 6\).*test_export"):
        module(torch.randn(5, 6))
    with pytest.raises(DTypeError, match="float64"):
        module(torch.randn(2, 6, dtype=torch.float64))
    with pytest.raises(MinitorchError, match="expected 1 positional"):
        module(torch.randn(2, 6), torch.randn(2, 6))


def test_program_is_not_called_directly_and_inputs_must_be_tensors():
    program = torch.export.export(MLP().eval(), (torch.randn(2, 6),))
    with pytest.raises(MinitorchError, match=r"program.module\(\)"):
        program(torch.randn(2, 6))
    with pytest.raises(MinitorchError, match="example input 1 is a int"):
        torch.export.export(MLP(), (torch.randn(2, 6), 3))
    with pytest.raises(MinitorchError, match="expected an nn.Module"):
        torch.export.export(lambda x: x, (torch.randn(2),))


def test_save_refuses_graphs_a_file_cannot_name(tmp_path):
    pair = OpDef(
        "pair",
        "pointwise",
        meta=lambda x: (TensorMeta(x.shape, float32),) * 2,
        impl=lambda xp, a: (a + 1, a * 2),
    )
    traced = torch.jit.trace(lambda x: pair(x)[1], torch.randn(3))
    with pytest.raises(SerializationError, match="minitorch.ops.pair is not in the op table"):
        traced.save(tmp_path / "pair.pt")
    symbolic = torch.fx.symbolic_trace(MLP())  # call_module nodes: layers, not ops
    with pytest.raises(SerializationError, match="call_module nodes are not saved"):
        symbolic.save(tmp_path / "mlp.pt")
    with pytest.raises(SerializationError, match="expected an ExportedProgram"):
        torch.export.save(torch.jit.trace(MLP(), torch.randn(1, 6)), tmp_path / "x.mtx")


def test_load_kinds_are_kept_apart(tmp_path, saved_mlp):
    torch.jit.trace(MLP(), torch.randn(1, 6)).save(tmp_path / "t.pt")
    with pytest.raises(SerializationError, match="t.pt.*use|t.pt.*minitorch.jit.load"):
        torch.export.load(tmp_path / "t.pt")
    x = torch.randn(2, 6)
    module = torch.jit.load(saved_mlp)  # an exported program loads as its module
    same_bits(module(x), torch.export.load(saved_mlp).module()(x))


# ---- damaged and hostile files --------------------------------------------------------------


def refused(path, data: bytes, match: str) -> None:
    path.write_bytes(data)
    with pytest.raises(SerializationError, match=match) as info:
        torch.export.load(path)
    assert str(path) in str(info.value)  # every error names the file


@pytest.mark.parametrize("keep", [0, 3, 20, 59, 61, 200, -4, -1])
def test_truncated_files_are_refused(saved_mlp, keep):
    data = saved_mlp.read_bytes()
    cut = data[:keep] if keep >= 0 else data[: len(data) + keep]
    refused(saved_mlp, cut, "truncated|not a minitorch")


def test_trailing_bytes_are_refused(saved_mlp):
    refused(saved_mlp, saved_mlp.read_bytes() + b"\0", "longer than its header says")


@pytest.mark.parametrize("where", ["header", "payload"])
def test_a_flipped_byte_fails_the_checksum(saved_mlp, where):
    data = bytearray(saved_mlp.read_bytes())
    _, payload = split(bytes(data))
    at = PREFIX.size + 5 if where == "header" else len(data) - len(payload) + 7
    data[at] ^= 0x01
    refused(saved_mlp, bytes(data), "checksum mismatch")


ran: list[str] = []


def _side_effect(message: str) -> str:
    ran.append(message)
    return message


class Payload:
    def __reduce__(self):
        return (_side_effect, ("unpickled",))


def test_a_pickle_is_refused_without_running_it(tmp_path):
    refused(tmp_path / "model.pt", pickle.dumps(Payload()), "a pickle")
    assert ran == []


def test_a_torch_style_zip_is_refused(tmp_path):
    with zipfile.ZipFile(tmp_path / "model.pt", "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps([1, 2]))
    refused(tmp_path / "model.pt", (tmp_path / "model.pt").read_bytes(), "zip archive")


def test_garbage_and_wrong_version_are_refused(tmp_path, saved_mlp):
    refused(tmp_path / "g.bin", b"\x00\x01garbage" * 10, "not a minitorch saved program")
    data = bytearray(saved_mlp.read_bytes())
    data[8] = 2
    refused(saved_mlp, bytes(data), "version 2 is not supported")


def edit(original: bytes, change) -> bytes:
    header, payload = split(original)
    payload = change(header, payload) or payload
    return join(header, payload)


@pytest.mark.parametrize(
    "target", ["os.system", "builtins.eval", "minitorch.ops.__class__", "subprocess.run", 42]
)
def test_a_forbidden_target_is_refused(saved_mlp, monkeypatch, target):
    import os

    monkeypatch.setattr(os, "system", lambda *a: pytest.fail("os.system ran"))

    def change(header, payload):
        node = next(n for n in header["nodes"] if n["op"] == "call_function")
        node["target"] = target

    refused(saved_mlp, edit(saved_mlp.read_bytes(), change), "is not allowed")


def test_wrong_tensor_sizes_are_refused(saved_mlp):
    def wrong_shape(header, payload):
        header["tensors"][0]["shape"] = [8, 7]

    def wrong_nbytes(header, payload):
        header["tensors"][0]["nbytes"] += 4

    def short_payload(header, payload):
        return payload[:-4]

    original = saved_mlp.read_bytes()
    refused(saved_mlp, edit(original, wrong_shape), r"float32\[8, 7\] is 224 bytes")
    refused(saved_mlp, edit(original, wrong_nbytes), "header says 196")
    refused(saved_mlp, edit(original, short_payload), "run past the payload")


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda h: h["nodes"][2]["kwargs"].update({"x=__import__('os')": 1}), "not an identifier"),
        (lambda h: h["nodes"][1].update(name="a b"), "not an identifier"),
        (lambda h: h["nodes"][2].update(args=[{"node": "fc2_bias"}, 1]), "not an earlier node"),
        (lambda h: h["nodes"][2].update(args=[{"eval": "1"}]), "unknown argument"),
        (lambda h: h["nodes"][1].update(target="__class__"), "not one of the file's tensors"),
        (lambda h: h["nodes"][0].update(op="call_module"), "op 'call_module' is not one of"),
        (lambda h: h["tensors"][0].update(name="__dict__"), "not a dotted path"),
        (lambda h: h["tensors"][0].update(dtype="float8"), "unknown dtype"),
        (lambda h: h.update(kind="something"), "unknown kind"),
        (lambda h: h["nodes"].pop(), "no output node"),
        (lambda h: h["signature"]["inputs"].pop(0), "do not match the graph's placeholders"),
    ],
)
def test_edited_headers_are_refused(saved_mlp, change, match):
    def change_header(header, payload):
        change(header)

    refused(saved_mlp, edit(saved_mlp.read_bytes(), change_header), match)


def test_an_invalid_json_header_is_refused(saved_mlp):
    header, payload = split(saved_mlp.read_bytes())
    head = json.dumps(header).replace('"training": false', '"training": NaN').encode()
    digest = hashlib.sha256(head + payload).digest()
    data = PREFIX.pack(b"MTEXPORT", 1, len(head), len(payload), digest) + head + payload
    refused(saved_mlp, data, "not valid JSON")
