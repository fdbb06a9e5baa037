"""The compiled-graph cache ([Note: the compiled-graph cache] in minitorch/compile/graph_cache.py):
a graph compiled in one process is loaded whole in the next and computes eager's values and
gradients; a damaged, stale or foreign entry is never used but compiled again; a graph that
differs in anything lowering reads is a different entry; the stages that print IR bypass it."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import minitorch
from codegen import disk_cache
from codegen.llvm import jit as jit_module
from codegen.registry import default_backend
from minitorch import _logging, config
from minitorch.compile import graph_cache
from tracer.fx import Graph, GraphModule

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.extras("graph_cache", "disk_cache")  # the extra these tests are about


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    """An empty cache folder; nothing compiled in this process survives into the next compile."""
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    disk_cache.reset()
    _forget()
    yield tmp_path / "cache"
    disk_cache.reset()
    _forget()


def _forget() -> None:
    """As a new process: no captured frames, no modules in memory (the disk keeps them)."""
    minitorch._dynamo.reset()
    jit_module.clear_cache()


def mlp_step(x, y, w1, b1, w2, b2):
    hidden = minitorch.nn.functional.relu(x @ w1.t() + b1)
    return minitorch.nn.functional.cross_entropy(hidden @ w2.t() + b2, y)


def softmax_and_layernorm(x):
    return x.softmax(-1) + minitorch.nn.functional.layer_norm(x, (x.shape[-1],)) * 2


def views_and_constants(x):
    mask = minitorch.tensor([1.0, 0.0, 2.0, -1.0])
    return (x * mask).t(), x[:, 1:3].exp(), x.sum(0) > 0


def transposed_product(a, b):
    """A rewrite (mm(b^T, a^T)) builds a new graph, keyed as traced; eager's layout is asked."""
    return (a @ b).t() + 1, (a.t() @ a).t()


def _inputs(rng):
    return {
        "mlp_step": [
            rng.standard_normal((6, 12)).astype(np.float32),
            rng.integers(0, 4, 6),
            rng.standard_normal((8, 12)).astype(np.float32),
            rng.standard_normal(8).astype(np.float32),
            rng.standard_normal((4, 8)).astype(np.float32),
            rng.standard_normal(4).astype(np.float32),
        ],
        "softmax_and_layernorm": [rng.standard_normal((5, 7)).astype(np.float32)],
        "views_and_constants": [rng.standard_normal((3, 4)).astype(np.float32)],
        "transposed_product": [
            rng.standard_normal((3, 5)).astype(np.float32),
            rng.standard_normal((5, 2)).astype(np.float32),
        ],
    }


FUNCTIONS = {
    f.__name__: f
    for f in (mlp_step, softmax_and_layernorm, views_and_constants, transposed_product)
}


def _run(fn, arrays, compiled: bool):
    """fn's outputs (as arrays), and the gradients of its float inputs when its output is a
    scalar loss."""
    tensors = [
        minitorch.tensor(a, requires_grad=(a.dtype == np.float32 and fn is mlp_step))
        for a in arrays
    ]
    out = (minitorch.compile(fn) if compiled else fn)(*tensors)
    outs = out if isinstance(out, tuple) else (out,)
    result = [(o.detach().numpy().copy(), o.dtype, o.stride()) for o in outs]
    if fn is mlp_step:
        out.backward()
        result += [(t.grad.numpy().copy(), t.dtype, t.stride()) for t in tensors if t.requires_grad]
    return result


def _same(ours, theirs):
    assert len(ours) == len(theirs)
    for (a, dtype_a, stride_a), (b, dtype_b, stride_b) in zip(ours, theirs, strict=True):
        assert dtype_a == dtype_b and stride_a == stride_b
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_graph_loaded_from_the_disk_computes_what_it_computed_when_compiled(name):
    fn, arrays = FUNCTIONS[name], _inputs(np.random.default_rng(0))[name]
    eager = _run(fn, arrays, compiled=False)
    first = _run(fn, arrays, compiled=True)
    assert disk_cache.graph_stats["store"] >= 1 and not disk_cache.graph_stats["hit"]
    _forget()
    loaded = _run(fn, arrays, compiled=True)
    assert disk_cache.graph_stats["hit"] == disk_cache.graph_stats["store"]
    _same(first, eager)
    _same(loaded, eager)
    for ours, theirs in zip(loaded, first, strict=True):  # the same kernels: the same bits
        np.testing.assert_array_equal(ours[0], theirs[0])


def _only_graph_entry(folder: Path) -> Path:
    """The one compiled-graph entry in the cache (an inference graph was compiled)."""
    entries = [
        p
        for p in folder.rglob("*")
        if p.is_file() and disk_cache.GRAPH_KIND.encode() in p.read_bytes()[:400]
    ]
    assert len(entries) == 1, entries
    return entries[0]


@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_a_damaged_entry_is_never_loaded_but_compiled_and_written_again(cache, damage):
    arrays = _inputs(np.random.default_rng(1))["softmax_and_layernorm"]
    expected = _run(softmax_and_layernorm, arrays, compiled=True)
    entry = _only_graph_entry(cache)
    data = entry.read_bytes()
    if damage == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    else:
        entry.write_bytes(data[:-10] + bytes([data[-10] ^ 1]) + data[-9:])
    _forget()
    disk_cache.reset()
    _same(_run(softmax_and_layernorm, arrays, compiled=True), expected)
    assert disk_cache.graph_stats["rejected"] == 1 and disk_cache.graph_stats["store"] == 1
    _forget()
    disk_cache.reset()
    _same(_run(softmax_and_layernorm, arrays, compiled=True), expected)
    assert disk_cache.graph_stats["hit"] == 1


def test_an_entry_whose_machine_code_is_gone_is_compiled_again(cache):
    arrays = _inputs(np.random.default_rng(2))["softmax_and_layernorm"]
    expected = _run(softmax_and_layernorm, arrays, compiled=True)
    graph_entry = _only_graph_entry(cache)
    for path in cache.rglob("*"):  # every other entry: the kernels' object code among them
        if path.is_file() and path != graph_entry:
            path.unlink()
    _forget()
    disk_cache.reset()
    _same(_run(softmax_and_layernorm, arrays, compiled=True), expected)
    assert disk_cache.graph_stats["stale"] == 1 and disk_cache.graph_stats["store"] == 1
    assert disk_cache.graph_stats["hit"] == 0


def test_an_entry_naming_what_no_longer_resolves_is_compiled_again(cache, monkeypatch):
    arrays = _inputs(np.random.default_rng(3))["softmax_and_layernorm"]
    expected = _run(softmax_and_layernorm, arrays, compiled=True)
    entry = _only_graph_entry(cache)
    key = entry.name
    payload = json.loads(disk_cache.load(key, disk_cache.GRAPH_KIND))
    name = next(iter(payload["names"]))
    for wrong in (
        ["object", "os", "system"],
        ["object", "minitorch", "no_such_thing"],
        ["a kind no one wrote"],
        None,
    ):
        names = dict(payload["names"], **{name: wrong})
        if wrong is None:  # a name the source needs, missing
            del names[name]
        disk_cache.store(
            key, json.dumps(dict(payload, names=names)).encode(), disk_cache.GRAPH_KIND
        )
        _forget()
        disk_cache.reset()
        _same(_run(softmax_and_layernorm, arrays, compiled=True), expected)
        assert disk_cache.graph_stats["rejected"] == 1, wrong
        assert disk_cache.graph_stats["hit"] == 0, wrong


def _graph(constant: np.ndarray, shape=(4,)) -> GraphModule:
    """x * c: a placeholder, a constant tensor, one op, as AOT autograd makes them."""
    from minitorch import ops
    from minitorch.fake import make_fake
    from minitorch.ops.registry import TensorMeta

    root = minitorch.nn.Module()
    root.c = minitorch.tensor(constant)
    graph = Graph()
    x = graph.placeholder("x")
    x.meta["val"] = make_fake(TensorMeta(shape, minitorch.float32))
    c = graph.get_attr("c")
    c.meta["val"] = make_fake(TensorMeta(constant.shape, minitorch.float32))
    out = graph.call_function(ops.mul, (x, c))
    out.meta["val"] = make_fake(TensorMeta(shape, minitorch.float32))
    graph.output((out,))
    return GraphModule(root, graph)


def test_the_key_holds_the_constants_bytes_the_shapes_and_the_knobs(monkeypatch):
    backend = default_backend("cpu")
    c = np.arange(4, dtype=np.float32)
    key = graph_cache.key(_graph(c), backend)
    assert key == graph_cache.key(_graph(c.copy()), backend)
    assert key != graph_cache.key(_graph(c + 1), backend)
    assert key != graph_cache.key(_graph(c, shape=(3, 4)), backend)
    monkeypatch.setattr(config, "parallel_threshold", config.parallel_threshold + 1)
    assert key != graph_cache.key(_graph(c), backend)


def test_a_stage_that_prints_ir_bypasses_the_cache():
    graph = _graph(np.ones(4, np.float32))
    backend = default_backend("cpu")
    assert graph_cache.key(graph, backend) is not None
    with _logging.Recorder():  # the walkthrough's: every stage
        assert graph_cache.key(graph, backend) is None


def test_a_new_process_loads_a_training_step_whole(tmp_path):
    """The warm start it is for: the second process lowers nothing and compiles nothing."""
    script = textwrap.dedent("""
        import sys, numpy as np, minitorch
        from codegen import disk_cache
        from minitorch.compile import inductor
        sys.path.insert(0, sys.argv[1])
        from test_graph_cache import _inputs, _run, mlp_step
        lowered = []
        lower = inductor.lower
        inductor.lower = lambda *args: lowered.append(args) or lower(*args)
        result = _run(mlp_step, _inputs(np.random.default_rng(4))["mlp_step"], compiled=True)
        print(dict(disk_cache.graph_stats), len(lowered),
              any(m in sys.modules for m in ("ir.lowering", "ir.scheduler", "ir.symbolic")))
        np.save(sys.argv[2], np.concatenate([r[0].ravel() for r in result]))
    """)
    env = {
        "MINITORCH_CACHE_DIR": str(tmp_path / "cache"),
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
    }
    runs = []
    for k in range(2):
        out = subprocess.run(
            [sys.executable, "-c", script, str(Path(__file__).parent), str(tmp_path / f"{k}.npy")],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(out.stdout.strip())
    assert runs[0] == "{'miss': 2, 'store': 2} 2 True"
    # forward and backward loaded, neither lowered, and the lowering not even imported
    assert runs[1] == "{'hit': 2} 0 False"
    np.testing.assert_array_equal(np.load(tmp_path / "0.npy"), np.load(tmp_path / "1.npy"))


def test_a_backward_without_some_tangents_is_the_same_graph_loaded_or_compiled():
    """Lowering leaves the graph it is given as traced (a rewrite builds new nodes), so the
    backward pruned of a missing tangent is keyed the same in every process."""
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((3, 4), np.float32), rng.standard_normal((5, 4), np.float32)

    def two_outputs(x, w):
        y = x @ w.t()
        return y.exp(), y.sum()

    grads = []
    for _ in range(3):
        _forget()
        disk_cache.reset()
        xs, ws = minitorch.tensor(x, requires_grad=True), minitorch.tensor(w, requires_grad=True)
        _, total = minitorch.compile(two_outputs)(xs, ws)
        total.backward()  # the first output's tangent is missing
        grads.append((xs.grad.numpy().copy(), ws.grad.numpy().copy()))
    assert dict(disk_cache.graph_stats) == {"hit": 3}  # forward, backward, pruned backward
    for ours in grads[1:]:
        np.testing.assert_array_equal(ours[0], grads[0][0])
        np.testing.assert_array_equal(ours[1], grads[0][1])


def test_a_loaded_kernel_says_why_it_has_no_ir_and_compile_graph_is_not_cached(monkeypatch):
    from minitorch.compile import graph_cache, inductor
    from minitorch.errors import CompileError

    arrays = _inputs(np.random.default_rng(6))["softmax_and_layernorm"]
    _run(softmax_and_layernorm, arrays, compiled=True)
    _forget()
    made = []  # (the graph, what the cache loaded for it)
    load = graph_cache.load
    monkeypatch.setattr(
        graph_cache,
        "load",
        lambda key, gm, *args: made.append((gm, load(key, gm, *args))) or made[-1][1],
    )
    _run(softmax_and_layernorm, arrays, compiled=True)
    ((gm, loaded),) = made
    assert disk_cache.graph_stats["hit"] == 1 and loaded.kernels and not loaded.steps
    with pytest.raises(CompileError, match="loaded with its whole graph"):
        _ = loaded.kernels[0].source
    fresh = inductor.compile_graph(gm)  # the public function compiles: steps and IR to read
    assert fresh.steps and "define" in fresh.kernels[0].source
    assert disk_cache.graph_stats["hit"] == 1
