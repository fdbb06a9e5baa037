"""The CUDA backend without a GPU: PTX modules, launch arguments, and whole compiled graphs
whose launches run on the host.

`on_host(launcher)` is the CUDA backend with device "cpu": the driver gives it numpy arrays
and the generated wrapper calls its kernels' `launch` as it would on the GPU; `launcher` then
runs each launch on the host. `interpret` runs it with the reference interpreter (what the
launch must compute); `emulate` with the grid emulation (codegen/cuda/emulate.py: the same
generated kernel, every block and thread of the same grid). A graph compiled this way is held
to eager mode through every line the CUDA wrapper runs: allocation, launch arguments, the
sizes, the error report, and (emulated) the kernels themselves.
"""

from __future__ import annotations

import re
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from codegen.backend import CompiledKernel
from codegen.cuda import backend as cuda_backend
from codegen.cuda.backend import CudaBackend, CudaKernel, check_report
from codegen.registry import get_backend
from ir.interpreter import run_kernel
from minitorch import _logging
from minitorch.compile.inductor import InductorCompiler, compile_graph
from minitorch.compile.output_code import device_empty
from minitorch.errors import IndexOutOfRangeError
from tracer.aot import make_fx

Launch = tuple  # (kernel, grid, block, args), as the launcher got them


def interpret(launches: list[Launch]):
    """A launcher that records each launch and runs it with the reference interpreter."""

    def launcher(kernel: CudaKernel, grid, block, args) -> None:
        launches.append((kernel, grid, block, args))
        arrays, sizes = args[: len(kernel.buffers)], args[len(kernel.buffers) : -1]
        run_kernel(
            kernel.kernel,
            dict(zip(kernel.buffers, arrays, strict=True)),
            dict(zip(kernel.sizes, map(int, sizes), strict=True)),
        )

    return launcher


def emulate(launches: list[Launch]):
    """A launcher that records each launch and runs it through the grid emulation, checking
    that the emulation runs the grid and block the launch was given."""
    emulator = get_backend("cuda_emulator")
    emulated: dict[int, CompiledKernel] = {}

    def launcher(kernel: CudaKernel, grid, block, args) -> None:
        launches.append((kernel, grid, block, args))
        if id(kernel) not in emulated:
            emulated[id(kernel)] = emulator.compile_kernel(
                kernel.kernel, kernel.buffer_dtypes, kernel.sizes
            )
        twin = emulated[id(kernel)]
        arrays, sizes = args[: len(kernel.buffers)], args[len(kernel.buffers) : -1]
        sizes = dict(zip(kernel.sizes, map(int, sizes), strict=True))
        assert (grid, block) == (twin.plan.grid(sizes), twin.plan.block())
        twin(dict(zip(kernel.buffers, arrays, strict=True)), sizes)

    return launcher


def on_host(launcher) -> InductorCompiler:
    """minitorch.compile's backend: the CUDA one, with `launcher` and numpy arrays."""

    class OnHost(CudaBackend):
        name = "cuda_on_host"
        device = "cpu"

    return InductorCompiler(OnHost(launcher), "cuda_on_host")


def softmax(x):
    return minitorch.softmax(x, dim=-1)


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def gelu_sum(x):
    return F.gelu(x).sum(dim=0)


CASES = [
    (lambda x: x.sin() ** 2 + x.cos() ** 2, [(1000,)]),
    (softmax, [(8, 33)]),
    (layer_norm, [(6, 16), (16,), (16,)]),
    (gelu_sum, [(5, 7)]),
]


@pytest.mark.parametrize("run", [interpret, emulate])
@pytest.mark.parametrize("fn, shapes", CASES, ids=["sincos", "softmax", "layer_norm", "gelu_sum"])
def test_graphs_launched_on_the_host_match_eager(fn, shapes, run):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    eager_in = [minitorch.tensor(a, requires_grad=True) for a in arrays]
    host_in = [minitorch.tensor(a, requires_grad=True) for a in arrays]
    launches: list[Launch] = []
    out = minitorch.compile(fn, backend=on_host(run(launches)))(*host_in)
    expected = fn(*eager_in)
    np.testing.assert_allclose(
        out.detach().numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    out.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    for got, want in zip(host_in, eager_in, strict=True):
        np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-4, atol=1e-5)
    assert launches, "no kernel was launched"
    for kernel, grid, block, args in launches:  # what cupy would have been given
        assert grid == kernel.plan.grid({}) and block == kernel.plan.block()
        assert len(args) == len(kernel.buffers) + 1  # static sizes: arrays, then the report
        assert args[-1].dtype == np.int64 and args[-1].shape == (3,)


@pytest.mark.parametrize("run", [interpret, emulate])
@pytest.mark.extras("symbolic_sizes")  # one kernel for both sizes: the extra's point
def test_size_symbols_are_passed_as_int64_scalars_after_the_arrays(run):
    launches: list[Launch] = []
    compiled = minitorch.compile(softmax, backend=on_host(run(launches)), dynamic=True)
    for rows in (3, 5):
        x = minitorch.randn(rows, 10)
        np.testing.assert_allclose(compiled(x).numpy(), softmax(x).numpy(), rtol=1e-5, atol=1e-7)
    kernels = {kernel for kernel, *_ in launches}
    assert len(kernels) == 1, "one kernel, compiled once, for both sizes"
    (kernel,) = kernels
    assert kernel.sizes, "compiled with its sizes as arguments"
    for _, grid, _, args in launches:
        sizes = args[len(kernel.buffers) : -1]
        assert [type(n) for n in sizes] == [np.int64] * len(kernel.sizes)
        assert grid == kernel.plan.grid(dict(zip(kernel.sizes, map(int, sizes), strict=True)))
    assert [args[0].shape[0] for _, _, _, args in launches] == [3, 5]


def test_the_wrapper_launches_each_kernel_in_one_line():
    launches: list[Launch] = []
    with _logging.Recorder() as rec:
        minitorch.compile(softmax, backend=on_host(interpret(launches)))(minitorch.randn(4, 8))
    (kernels,) = [a.text for a in rec.artifacts if a.stage == "kernels"]
    assert re.search(r"^    kernel0\.launch\(\[arg0_1_array, buf\d+\], \[\]\)$", kernels, re.M)


def test_an_index_out_of_bounds_reported_by_a_kernel_is_raised():
    with pytest.raises(IndexOutOfRangeError, match="index 7 is out of bounds for a dim of size 4"):
        check_report(np.array([1, 7, 4], np.int64))
    check_report(np.zeros(3, np.int64))  # nothing reported: nothing raised


def test_only_kernels_with_indirect_indexing_get_a_report_of_their_own():
    launches: list[Launch] = []

    def gather(x, i):
        return x[i] * 2, x.sin()

    x, index = minitorch.randn(4), minitorch.tensor([3, 0, 2])
    compiled = minitorch.compile(gather, backend=on_host(interpret(launches)))
    for got, want in zip(compiled(x, index), gather(x, index), strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    reads = [kernel.reports_errors for kernel, *_ in launches]
    assert sorted(reads) == [False, True]
    reports = [args[-1] for *_, args in launches]
    assert reports[0] is not reports[1]

    def reports_an_error(kernel, grid, block, args):  # as a GPU kernel would
        args[-1][:] = (1, 9, 4)

    bad = minitorch.compile(gather, backend=on_host(reports_an_error))
    with pytest.raises(IndexOutOfRangeError, match="index 9 is out of bounds"):
        bad(x, index)


def test_compiling_needs_neither_cupy_nor_a_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` now raises ImportError
    with _logging.Recorder() as rec:
        compiled = minitorch.compile(layer_norm, backend=on_host(interpret([])))
        compiled(minitorch.randn(4, 8), minitorch.ones(8), minitorch.zeros(8))
    (kernels,) = [a.text for a in rec.artifacts if a.stage == "kernels"]
    assert ".target sm_80" in kernels and ".visible .entry" in kernels


def test_one_graph_is_one_ptx_module_and_each_kernel_shows_its_own_entry():
    launches: list[Launch] = []
    compiled = minitorch.compile(layer_norm, backend=on_host(interpret(launches)))
    x, w, b = (
        t.requires_grad_() for t in (minitorch.randn(4, 8), minitorch.ones(8), minitorch.zeros(8))
    )
    compiled(x, w, b)  # training: the forward is 3 kernels
    kernels = list({id(k): k for k, *_ in launches}.values())
    assert len(kernels) > 1 and len({id(k.module) for k in kernels}) == 1
    module = kernels[0].module_source
    for kernel in kernels:
        entries = re.findall(r"^\.visible \.entry (\w+)\(", kernel.source, re.M)
        assert entries == [kernel.symbol] and f".entry {kernel.symbol}(" in module
        assert kernel.source.startswith(module[: module.index(".address_size")])


def test_the_wrapper_of_a_graph_for_the_gpu_allocates_there():
    x = minitorch.randn(1000)
    gm = make_fx(lambda x: (x.sin() * 2,))(x)
    compiled = compile_graph(gm, get_backend("cuda"))  # compiled, never run: no GPU here
    assert re.search(r"^    buf\d+ = ___empty\(\(1000,\), ___float32\)$", compiled.source, re.M)
    assert compiled.run.__globals__["___empty"] is device_empty  # cupy's, on first call
    assert re.search(
        r"^    kernel0\.launch\(\[arg0_1_array, buf\d+\], \[\]\)$", compiled.source, re.M
    )


def test_the_default_launcher_loads_the_graphs_module_once_through_the_driver(monkeypatch):
    loaded, calls = [], []

    class DriverModule:  # stands in for cupy.cuda.function.Module: cuModuleLoadData
        def load(self, image: bytes) -> None:
            loaded.append(image)

        def get_function(self, name: str):
            return lambda grid, block, args: calls.append((name, grid, block, args))

    cupy = SimpleNamespace(cuda=SimpleNamespace(function=SimpleNamespace(Module=DriverModule)))
    monkeypatch.setattr(cuda_backend, "_cupy", lambda: cupy)
    gm = make_fx(lambda x: (x.sin() * 2, x.sum()))(minitorch.randn(64))
    kernels = compile_graph(gm, get_backend("cuda")).kernels
    assert len(kernels) == 2  # a sum to one value is a kernel of its own
    for _ in range(2):
        for kernel in kernels:
            kernel.launch([np.zeros(1, dtype) for dtype in kernel.dtypes], [])
    assert loaded == [kernels[0].module_source.encode()]  # one module, loaded once
    assert [name for name, *_ in calls] == [k.symbol for k in kernels] * 2
    assert all(grid == k.plan.grid({}) for (_, grid, _, _), k in zip(calls, kernels * 2))
