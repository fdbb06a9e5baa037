"""The CUDA backend called as the Backend protocol says, with numpy arrays: each copied to the
GPU in its own layout and the written ones copied back ([Note: launching on the GPU]).

Without a GPU, `FakeCupy` plays the few cupy calls the backend makes, on host memory: a copy
to "the device" is a copy of the bytes, a device array a numpy view of them, and a launch the
grid emulation of the same kernel on those views. Inputs in every layout (negative strides,
an offset into a bigger array, broadcast, empty) go through the copies.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from codegen.cuda import backend as cuda_backend
from codegen.cuda.backend import CudaBackend, CudaKernel
from codegen.registry import get_backend
from ir.nodes import Pointwise
from ir.ops_handler import ops
from minitorch.dtype import from_numpy_dtype
from tests.conformance import kernels as conformance


class Pointer:
    """cupy's MemoryPointer: device bytes, and an offset into them."""

    def __init__(self, memory: np.ndarray, offset: int = 0) -> None:
        self.memory, self.offset = memory, offset

    def __add__(self, bytes_: int) -> Pointer:
        return Pointer(self.memory, self.offset + bytes_)


class DeviceBytes:
    """A 1-d uint8 cupy array: its own copy of the bytes, `data` and `get(out=)`."""

    def __init__(self, host: np.ndarray) -> None:
        self.memory = host.copy()

    @property
    def data(self) -> Pointer:
        return Pointer(self.memory)

    def get(self, out: np.ndarray) -> None:
        out[...] = self.memory


class FakeCupy:
    """What codegen/cuda/backend.py calls of cupy, on host memory; `kernels` maps a PTX entry's
    name to the compiled kernel, which a launch runs through the grid emulation."""

    def __init__(self) -> None:
        self.kernels: dict[str, CudaKernel] = {}
        self.launched: list[str] = []
        fake = self

        class Module:  # cupy.cuda.function.Module
            def load(self, image: bytes) -> None:
                assert image.decode() in {k.module_source for k in fake.kernels.values()}

            def get_function(self, name: str):
                return lambda grid, block, args: fake.launch(name, grid, block, args)

        self.cuda = SimpleNamespace(function=SimpleNamespace(Module=Module))

    def asarray(self, host: np.ndarray) -> DeviceBytes:
        return DeviceBytes(host)

    def ndarray(self, shape, dtype, memptr: Pointer, strides) -> np.ndarray:
        return np.ndarray(shape, dtype, memptr.memory, memptr.offset, strides)

    def empty(self, shape, dtype) -> np.ndarray:
        return np.empty(shape, dtype)

    def launch(self, name: str, grid, block, args) -> None:
        kernel = self.kernels[name]
        self.launched.append(name)
        twin = get_backend("cuda_emulator").compile_kernel(
            kernel.kernel, kernel.buffer_dtypes, kernel.sizes
        )
        arrays, sizes = args[: len(kernel.buffers)], args[len(kernel.buffers) : -1]
        sizes = dict(zip(kernel.sizes, map(int, sizes), strict=True))
        assert (grid, block) == (twin.plan.grid(sizes), twin.plan.block())
        twin(dict(zip(kernel.buffers, arrays, strict=True)), sizes)


class Recording(CudaBackend):
    """The CUDA backend, telling `cupy` the kernels it compiles (by their PTX names)."""

    def __init__(self, cupy: FakeCupy) -> None:
        super().__init__()
        self.cupy = cupy

    def compile_kernels(self, kernels, sizes=()):
        compiled = super().compile_kernels(kernels, sizes)
        self.cupy.kernels |= {kernel.symbol: kernel for kernel in compiled}
        return compiled


def _base(dtype: str, *shape: int) -> np.ndarray:
    values = conformance.random_values(np.dtype(dtype), int(np.prod(shape)), seed=5)
    return values.reshape(shape)


# name -> (the array the kernel is given, the logical tensor, the offset of its element 0)
LAYOUTS = {
    "contiguous": lambda d: (_base(d, 3, 5), _base(d, 3, 5), 0),
    "transposed": lambda d: (_base(d, 4, 6).T, _base(d, 4, 6).T, 0),
    "reversed_stepped": lambda d: (_base(d, 9, 8)[::-2, 1::3],) * 2 + (0,),
    "broadcast": lambda d: (np.broadcast_to(_base(d, 1, 7), (4, 7)),) * 2 + (0,),
    "offset_reversed": lambda d: (_base(d, 10), _base(d, 10)[8:0:-1], 8),
    "empty": lambda d: (np.zeros((0, 3), d), np.zeros((0, 3), d), 0),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_host_arrays_in_every_layout_go_to_the_gpu_and_back(monkeypatch, layout, dtype):
    cupy = FakeCupy()
    monkeypatch.setattr(cuda_backend, "_cupy", lambda: cupy)
    array, view, offset = LAYOUTS[layout](dtype)
    x = conformance.input_buffer("x", view, offset)
    twice = Pointwise(
        from_numpy_dtype(view.dtype),
        view.shape,
        lambda i: ops.add(conformance.load(x, i), conformance.load(x, i)),
    )
    program = conformance.program_of([x], [conformance.computed("buf0", twice)])
    expected = conformance.run_reference(program, {"x": array})
    conformance.assert_agrees(expected, {"buf0": view + view})  # the reference is numpy's
    got = conformance.run_backend(Recording(cupy), program, {"x": array}, expected)
    conformance.assert_agrees(got, expected)
    assert cupy.launched == ["kernel0"]
