"""The generated attention kernel, compiled and called: blocks, threads, the extern step.

    out = kernel_for(np.dtype("float32"), 64)(q, k, v, seen, 0.125)   # numpy arrays
    fused_attention(q, k, v, hidden, 0.125)   # tensors: the LLVM backend's ops.fused_attention

attention.py generates the IR ([Note: online softmax]); this file makes what it reads: the
mask as one (t, padded) matrix of 0/1 bytes, the state of every (query block, key block) pair
([Note: skipped blocks]), a scratch buffer per thread, and splits the query blocks of every
head across the thread pool (codegen/llvm/parallel.py).
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np
from llvmlite import ir

from codegen.llvm.attention import ARGUMENTS, KEY_VECTORS, ROWS, SIZES, generate_attention
from codegen.llvm.jit import JitModule, compile_ir
from codegen.llvm.matmul import vector_bytes
from codegen.llvm.parallel import parallel_for
from minitorch import ops
from minitorch.errors import DTypeError, ShapeError
from minitorch.tensor import Tensor

_ELEMENTS = {np.dtype(np.float32): ir.FloatType(), np.dtype(np.float64): ir.DoubleType()}


def block_states(mask: np.ndarray, rows: int, keys: int) -> np.ndarray:
    """For each (query block, key block) of a (t, padded) 0/1 mask: 0 every entry hidden, 1
    some, 2 none ([Note: skipped blocks]). Rows past t count as row t-1 (the kernel computes
    them so)."""
    t, padded = mask.shape
    query_blocks = -(-t // rows)
    full = np.concatenate([mask, np.repeat(mask[-1:], query_blocks * rows - t, axis=0)])
    seen = full.reshape(query_blocks, rows, padded // keys, keys).astype(bool)
    anything, everything = seen.any(axis=(1, 3)), seen.all(axis=(1, 3))
    return np.where(everything, 2, np.where(anything, 1, 0)).astype(np.int8)


class AttentionKernel:
    """The generated attention for one dtype and head dim, compiled for this CPU."""

    def __init__(
        self, dtype: np.dtype, head_dim: int, safe: bool = False, width: int | None = None
    ) -> None:
        self.dtype = np.dtype(dtype)
        if self.dtype not in _ELEMENTS:
            raise DTypeError(f"the generated attention takes float32 or float64, not {self.dtype}")
        self.width = width or vector_bytes() // self.dtype.itemsize  # lanes of one vector
        self.head_dim, self.keys = head_dim, KEY_VECTORS * self.width
        self.module = generate_attention(_ELEMENTS[self.dtype], self.width, head_dim, safe)
        self._jit: JitModule = compile_ir(str(self.module))
        scale = ctypes.c_float if self.dtype == np.float32 else ctypes.c_double
        self._function = self._jit.function(
            "attention",
            None,
            *[ctypes.c_void_p] * len(ARGUMENTS),
            *[ctypes.c_int64] * len(SIZES),
            scale,
            ctypes.c_int64,
            ctypes.c_int64,
        )

    def __call__(
        self, q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None, scale: float
    ) -> np.ndarray | None:
        """softmax(where(mask, q @ kᵀ * scale, -inf)) @ v for (B, H, T, D) q and (B, H, S, D)
        k, v of this kernel's dtype and D; mask (T, S) of bools, or None for no mask. v must
        be finite where a block is skipped: None, else ([Note: skipped blocks])."""
        batch, heads, t, d = q.shape
        s = k.shape[2]
        if k.shape != (batch, heads, s, d) or v.shape != k.shape or d != self.head_dim:
            raise ShapeError(f"attention: q {q.shape}, k {k.shape}, v {v.shape}")
        if v.strides[3] != v.itemsize:
            v = np.ascontiguousarray(v)  # rows of v are read a vector at a time
        padded = -(-s // self.keys) * self.keys
        visible = np.zeros((t, padded), np.uint8)
        visible[:, :s] = 1 if mask is None else mask
        blocks = block_states(visible, ROWS, self.keys)
        if (blocks == 0).any() and not np.isfinite(v.sum()):
            return None  # a skipped 0 * inf would be NaN op by op ([Note: skipped blocks])
        out = np.empty((batch, heads, t, d), self.dtype)
        item = self.dtype.itemsize
        strides = [n // item for x in (q, k) for n in x.strides] + [
            n // item for n in v.strides[:3]
        ]
        pointers = [x.ctypes.data for x in (q, k, v, visible, blocks, out)]
        scratch_size = d * padded + ROWS * (-(-d // self.width) * self.width + self.keys)

        def run(start: int, end: int) -> None:
            scratch = np.zeros(scratch_size, self.dtype)  # each thread its own kᵀ, o and p
            self._function(*pointers, scratch.ctypes.data, t, s, heads, *strides, scale, start, end)

        query_blocks = -(-t // ROWS)
        parallel_for(run, batch * heads * query_blocks, work=batch * heads * t * s * d)
        return out


@functools.lru_cache(maxsize=32)
def kernel_for(dtype: np.dtype, head_dim: int, safe: bool = False) -> AttentionKernel:
    """The compiled kernel for `dtype`, `head_dim` and `safe`, once per process."""
    return AttentionKernel(dtype, head_dim, safe)


def fused_attention(
    q: Tensor, k: Tensor, v: Tensor, hidden: Tensor | None, scale: float, safe: bool = False
) -> Tensor:
    """`ops.fused_attention` by the generated kernel, as the LLVM backend's extern step runs it
    (minitorch/ops/attention.py says what it computes); what the kernel does not take (other
    dtypes or devices, a mask that differs across batch or head, a v that is not finite where
    blocks are skipped: [Note: skipped blocks]) runs the op's eager kernel."""
    arrays = [x._data for x in (q, k, v)]
    mask = None if hidden is None else hidden._data
    if _takes(arrays, mask):
        t, s = arrays[0].shape[2], arrays[1].shape[2]
        if mask is not None:
            mask = ~np.broadcast_to(mask.reshape(mask.shape[-2:]), (t, s))  # (t, s): seen
        kernel = kernel_for(arrays[0].dtype, arrays[0].shape[3], safe)
        out = kernel(*arrays, mask, scale)
        if out is not None:
            return Tensor._from_array(out)
    return ops.fused_attention(q, k, v, hidden, scale, safe)


def _takes(arrays: list, mask: np.ndarray | None) -> bool:
    """Whether the kernel takes these q, k, v (numpy, one float dtype, 4-d, no size 0, one
    head dim) and
    mask (bool, the same for every batch and head)."""
    if not all(type(x) is np.ndarray and x.ndim == 4 and x.size for x in arrays):
        return False
    if arrays[2].shape[3] != arrays[0].shape[3]:
        return False  # one head dim for q, k and v
    if not (arrays[0].dtype in _ELEMENTS and arrays[0].dtype == arrays[1].dtype == arrays[2].dtype):
        return False
    if mask is None:
        return True
    return (
        type(mask) is np.ndarray and mask.dtype == np.bool_ and all(n == 1 for n in mask.shape[:-2])
    )
