"""BLAS's gemm, called directly with the operands' strides: the kernel of mm and bmm.

    out = blas.matmul(a, b)        # numpy arrays: (n, k) @ (k, m), or (B, n, k) @ (B, k, m)
    blas.product_plan(a, b)        # Plan(route='gemm_batch_strided', reason='one call for...',
                                   #      a='a: row-major, ld 64', b='b: transposed, ld 64')
    blas.library()                 # the BLAS numpy links, bound, or None; blas.missing() why
    blas.main()                    # prints what was found, and the plans of some products
    python benchmarks/matmul.py --plans    # the same

[Note: calling BLAS directly]
numpy's wheels ship OpenBLAS (numpy.libs/libscipy_openblas64_-*.so on Linux, numpy/.dylibs on
macOS; numpy 1.26's is libopenblas64_p-*.so) and `np.matmul` hands float32/float64 products to
its `cblas_sgemm`/`cblas_dgemm`. We bind the same library with ctypes, as PyTorch's CPU kernels
call MKL or OpenBLAS: no new dependency, the same thread count (OPENBLAS_NUM_THREADS), the same
machine code. A matrix in either layout is read in place: row-major with gemm's "N",
column-major (a transposed view, `k.transpose(-2, -1)`) with "T", the leading dimension taken
from its stride, packed or not (a slice of columns). A copy is made only where no BLAS layout
exists: a stride 0 in a matrix dim (an expanded operand: the gradient of `out.sum()`), negative
strides, a matrix stepped in both dims. The result is a fresh row-major array that gemm writes
with beta = 0, so what `np.empty` left there is never read (NaN and inf in the operands
propagate, as in numpy's product); the kernel takes no `out`, so it never aliases an operand.

What each route is for, as measured on a 2-core Xeon with numpy 2.4's OpenBLAS 0.3.31:

- `gemm_batch_strided`: a batch of B big matrices (m*n*k > 100**3), at least as many as
  OpenBLAS has threads, is one call of OpenBLAS's `cblas_?gemm_batch_strided` (0.3.30 on), the
  batch stride as it is: 0 for a matrix the batch shares, negative for a flipped batch. OpenBLAS
  runs whole matrices on each thread, where numpy's loop runs one matrix at a time, splitting
  it across threads when it is big: as fast on idle cores ((64, 256, 64) @ (64, 64, 256)^T:
  ~12 ms either way), 1.1-1.7x faster on busy ones (one hand-off to the threads, not 64).
- numpy, folded: a batch that multiplies one shared matrix, (B, n, k) @ (k, m) expanded to a
  batch, is one product of B*n rows when a's batch folds into its rows: one gemm, not B.
- numpy: every 2-D product. np.matmul reads a row- or column-major operand in place and calls
  the same gemm we would (numpy 2 copies other layouts, as we would), for ~1 us of overhead,
  where a ctypes call with its planning costs ~5-8 us: the same work, later.
  `DIRECT_GEMM_WORK` (multiply-adds) sends 2-D products at least that big to `gemm` directly.
- numpy, for a batch of small matrices: OpenBLAS 0.3.30-0.3.31's batched gemm crashes on
  matrices of m*n*k <= 100**3 in the DYNAMIC_ARCH builds numpy ships (their small-matrix
  kernels are looked up unresolved; fixed by OpenBLAS PR 5980), and numpy loops gemm in C.
- numpy, for what gemm cannot do: no BLAS found (other numpy builds: MKL, Accelerate, a system
  BLAS; `missing()` says why), integer dtypes, an empty product (k = 0 gives zeros).

`product_plan` says which way a product goes and why, so the walkthrough and the report can
print it; `matmul` runs that same plan. Planning runs on every product, so it builds no
strings: `_route` returns a reason (a constant, for numpy's routes) or the call to make, and
`product_plan` words it.
"""

from __future__ import annotations

import ctypes
import glob
import os
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

# CBLAS's enums
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
# OpenBLAS's batched gemm takes its small-matrix kernels (and crashes: see the note) up to this
SMALL_MATRIX = 100**3
# multiply-adds from which a 2-D product calls gemm directly, not through np.matmul; None: never
# (numpy calls the same gemm for less: see the note)
DIRECT_GEMM_WORK: int | None = None
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Blas:
    """The BLAS numpy links, its gemms bound with ctypes (by numpy dtype char, 'f' and 'd')."""

    path: str  # the shared library
    config: str  # openblas_get_config(): version, int width, the CPU kernels chosen
    gemm: dict  # 'f' -> cblas_sgemm, 'd' -> cblas_dgemm
    gemm_batch_strided: dict  # the same for the batched gemm; empty where the library has none
    int64: bool  # BLAS integers are 64-bit (an ILP64 build), else 32-bit
    threads: object  # openblas_get_num_threads, or None

    def num_threads(self) -> int:
        """The threads OpenBLAS splits work across now (threadpoolctl may change it)."""
        return self.threads() if self.threads is not None else 1


@dataclass(frozen=True)
class Plan:
    """How one product runs: the route, why, and how each operand is read."""

    route: str  # "numpy", "gemm" (one call) or "gemm_batch_strided" (one call for the batch)
    reason: str
    a: str = ""  # how gemm reads a: its layout, leading dim, batch stride, or "copied"
    b: str = ""

    def __str__(self) -> str:
        reads = "; ".join(x for x in (self.a, self.b) if x)
        return f"{self.route}: {self.reason}" + (f" ({reads})" if reads else "")


# ---- finding the library ------------------------------------------------------------------

_found: tuple[Blas | None, str] | None = None  # (the library, or None and why), found once


def library() -> Blas | None:
    """The BLAS numpy itself links, bound; None where there is none we can call."""
    global _found
    if _found is None:
        _found = _find()
    return _found[0]


def missing() -> str:
    """Why `library()` is None ("" when it is not)."""
    library()
    return _found[1]


def _find() -> tuple[Blas | None, str]:
    """numpy's bundled OpenBLAS, beside the numpy package (a wheel's numpy.libs or .dylibs)."""
    numpy_dir = os.path.dirname(np.__file__)
    patterns = [
        os.path.join(numpy_dir + ".libs", "*openblas*"),
        os.path.join(numpy_dir, ".dylibs", "*openblas*"),
    ]
    paths = sorted(p for pattern in patterns for p in glob.glob(pattern))
    if not paths:
        return None, "numpy ships no OpenBLAS of its own (numpy.libs): np.matmul for every product"
    try:
        lib = ctypes.CDLL(paths[0])  # already loaded by numpy: this finds it, loads nothing new
    except OSError as e:
        return None, f"cannot load {paths[0]}: {e}"
    return _bind(lib, paths[0])


def _symbol(lib: ctypes.CDLL, name: str):
    """lib's function `name` under the names wheels give it (scipy_cblas_sgemm64_ in numpy 2's
    scipy-openblas, cblas_sgemm64_ in numpy 1.26's): (function, ints are 64-bit), or None."""
    for prefix in ("scipy_", ""):
        for suffix, int64 in (("64_", True), ("", None)):
            function = getattr(lib, prefix + name + suffix, None)
            if function is not None:
                return function, int64
    return None


def _bind(lib: ctypes.CDLL, path: str) -> tuple[Blas | None, str]:
    config_fn = _symbol(lib, "openblas_get_config")
    config = ""
    if config_fn is not None:
        config_fn[0].restype = ctypes.c_char_p
        config = config_fn[0]().decode(errors="replace")
    sgemm, dgemm = _symbol(lib, "cblas_sgemm"), _symbol(lib, "cblas_dgemm")
    if sgemm is None or dgemm is None:
        return None, f"{path} has no cblas_sgemm/cblas_dgemm"
    # the int width: 64-bit for the 64_-suffixed names, else as the build says it was made
    int64 = sgemm[1] if sgemm[1] is not None else "USE64BITINT" in config
    if sgemm[1] is None and not config:
        return None, f"{path}: cannot tell its BLAS int width (no openblas_get_config)"
    integer = ctypes.c_int64 if int64 else ctypes.c_int32
    gemm, batched = {}, {}
    for char, scalar, (function, _) in (
        ("f", ctypes.c_float, sgemm),
        ("d", ctypes.c_double, dgemm),
    ):
        gemm[char] = _declare(function, scalar, integer, batched=False)
    # the batched gemm keeps its plain name in scipy-openblas, compiled with the library's ints
    for char, scalar, name in (
        ("f", ctypes.c_float, "cblas_sgemm_batch_strided"),
        ("d", ctypes.c_double, "cblas_dgemm_batch_strided"),
    ):
        found = _symbol(lib, name)
        if found is not None and config:
            batched[char] = _declare(found[0], scalar, integer, batched=True)
    threads = _symbol(lib, "openblas_get_num_threads")
    if threads is not None:
        threads[0].restype, threads[0].argtypes = ctypes.c_int, []
    return Blas(path, config, gemm, batched, int64, threads and threads[0]), ""


def _declare(function, scalar, integer, batched: bool):
    """function, its C signature declared: cblas_?gemm, or cblas_?gemm_batch_strided (a batch
    stride after each leading dim, and the batch count last)."""
    operand = [ctypes.c_void_p, integer] + ([integer] if batched else [])
    function.restype = None
    function.argtypes = (
        [ctypes.c_int] * 3  # order, transa, transb
        + [integer] * 3  # m, n, k
        + [scalar, *operand, *operand, scalar, *operand]  # alpha, a, b, beta, c
        + ([integer] if batched else [])  # the batch count
    )
    return function


# ---- the plan -------------------------------------------------------------------------------

NO_BLAS = "no BLAS found"
NO_GEMM = "no gemm for this dtype: numpy's own loop"
EMPTY = "empty: nothing to multiply (k = 0: zeros)"
SAME_GEMM = "np.matmul calls the same gemm, reading row- and column-major operands in place"
SMALL_BATCH = (
    "a batch of small matrices (m*n*k <= 100**3): OpenBLAS's batched gemm crashes on them "
    "before PR 5980; numpy loops gemm in C"
)
FEW = "fewer matrices than OpenBLAS threads: numpy threads each gemm"
NO_BATCHED = "this BLAS has no batched gemm: numpy loops gemm in C"
TOO_BIG = "too big for this BLAS's 32-bit integers"


class _Operand(NamedTuple):
    """How gemm reads one operand."""

    array: np.ndarray  # the operand, or its row-major copy
    transposed: bool  # column-major: gemm's "T"
    ld: int  # the leading dimension, in elements
    step: int  # the batch stride, in elements (0: one matrix for the batch)
    copied: bool  # no BLAS layout: `array` is a copy


class _Call(NamedTuple):
    """A planned gemm call: one product, or a batch of them (count > 0)."""

    a: _Operand
    b: _Operand
    count: int  # matrices in the batch; 0: one gemm
    n: int  # rows of each product
    m: int
    k: int
    shape: tuple  # the result's


class _Folded(NamedTuple):
    """A batch with one shared right-hand matrix, as one product: (B*n, k) @ (k, m)."""

    a: np.ndarray  # (B*n, k), a view of a
    b: np.ndarray  # (k, m)
    shape: tuple  # the result's, (B, n, m)


def matrix_layout(rows: int, cols: int, row_stride: int, col_stride: int, size: int):
    """How gemm reads a (rows, cols) matrix of these byte strides: (transposed, leading dim in
    elements), or None where no BLAS layout exists. A dim of size 1 has any stride."""
    if cols == 1 or col_stride == size:  # row-major, rows ld elements apart
        if rows == 1:
            return False, max(1, cols)
        if row_stride % size == 0 and row_stride >= cols * size:
            return False, row_stride // size
    if rows == 1 or row_stride == size:  # column-major: a transposed view
        if cols == 1:
            return True, max(1, rows)
        if col_stride % size == 0 and col_stride >= rows * size:
            return True, col_stride // size
    return None


def _read(x: np.ndarray) -> _Operand:
    """x in place where its matrices have a BLAS layout, else a row-major copy of it."""
    *batch, rows, cols = x.shape
    *batch_strides, row_stride, col_stride = x.strides
    size = x.itemsize
    layout = matrix_layout(rows, cols, row_stride, col_stride, size) if x.flags.aligned else None
    step = batch_strides[0] if batch and batch[0] > 1 else 0  # a batch of one: any stride
    if layout is None or step % size:
        return _Operand(np.ascontiguousarray(x), False, max(1, cols), rows * cols, True)
    return _Operand(x, layout[0], layout[1], step // size, False)


def _fold(a: np.ndarray, b: np.ndarray) -> _Folded | None:
    """The batch as one product where b is one matrix for the whole batch (batch stride 0) and
    a's batch folds into its rows (row-major rows, each batch right after the one before)."""
    batch, n, k = a.shape
    if batch < 2 or b.strides[0] != 0:
        return None
    if k > 1 and a.strides[2] != a.itemsize:
        return None
    if n > 1 and a.strides[0] != n * a.strides[1]:
        return None
    rows = a.strides[0] if n == 1 else a.strides[1]  # the folded matrix's row stride
    folded = np.lib.stride_tricks.as_strided(a, (batch * n, k), (rows, a.strides[2]))
    return _Folded(folded, b[0], (batch, n, b.shape[2]))


def _route(a: np.ndarray, b: np.ndarray) -> str | _Folded | _Call:
    """The gemm call `matmul(a, b)` makes (or the folded product it hands np.matmul), or why
    it calls np.matmul as it is."""
    blas = _found[0] if _found is not None else library()
    if blas is None:
        return NO_BLAS
    if a.dtype.char not in "fd" or a.dtype != b.dtype:
        return NO_GEMM
    *batch, n, k = a.shape
    m = b.shape[-1]
    count = batch[0] if batch else 1
    if count * n * m * k == 0:
        return EMPTY
    if count > 1:
        folded = _fold(a, b)
        if folded is not None:
            return folded
        if n * m * k <= SMALL_MATRIX:
            return SMALL_BATCH
        if a.dtype.char not in blas.gemm_batch_strided:
            return NO_BATCHED
        if count < blas.num_threads():
            return FEW
    elif DIRECT_GEMM_WORK is None or n * m * k < DIRECT_GEMM_WORK:
        return SAME_GEMM
    elif batch:  # a batch of one
        a, b = a[0], b[0]
    read_a, read_b = _read(a), _read(b)
    if not blas.int64:
        # the sizes, and the offsets i * stride the batched gemm computes in BLAS ints
        steps = (abs(read_a.step), abs(read_b.step), n * m)
        if max(n, m, k, read_a.ld, read_b.ld, count * max(steps)) > _INT32_MAX:
            return TOO_BIG
    return _Call(read_a, read_b, count if count > 1 else 0, n, m, k, (*batch, n, m))


def product_plan(a: np.ndarray, b: np.ndarray) -> Plan:
    """How `matmul(a, b)` runs, and why: see [Note: calling BLAS directly]."""
    call = _route(a, b)
    if isinstance(call, _Folded):
        rows = call.a.shape[0]
        return Plan("numpy", f"the batch shares b: one product of {rows} rows, one gemm")
    if isinstance(call, str):
        if call is NO_BLAS:
            return Plan("numpy", missing())
        if call is SMALL_BATCH:
            return Plan("numpy", f"{call} (m*n*k = {a.shape[1] * a.shape[2] * b.shape[2]})")
        return Plan("numpy", call)
    read_a, read_b = _describe("a", call.a), _describe("b", call.b)
    if call.count:
        why = f"one call for a batch of {call.count}, whole matrices on each OpenBLAS thread"
        return Plan("gemm_batch_strided", why, read_a, read_b)
    return Plan("gemm", f"at least DIRECT_GEMM_WORK = {DIRECT_GEMM_WORK}", read_a, read_b)


def _describe(name: str, operand: _Operand) -> str:
    if operand.copied:
        return f"{name}: copied, row-major (no BLAS layout)"
    shape = "transposed" if operand.transposed else "row-major"
    shared = ", one matrix for the batch" if operand.step == 0 and operand.array.ndim == 3 else ""
    return f"{name}: {shape}, ld {operand.ld}{shared}"


# ---- running it -----------------------------------------------------------------------------


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for (n, k) @ (k, m) or (B, n, k) @ (B, k, m): gemm called directly where the plan
    says so, else np.matmul (on operands `gemm_ready` copied where numpy 1.26 would loop)."""
    # numpy's route, unplanned, for the commonest products, where `_route` would say so anyway:
    # mm (every Linear's), and a batch of small matrices not sharing b (a decode step's heads)
    if DIRECT_GEMM_WORK is None and (
        a.ndim == 2 or (b.strides[0] != 0 and a.shape[1] * a.shape[2] * b.shape[2] <= SMALL_MATRIX)
    ):
        return np.matmul(gemm_ready(a), gemm_ready(b))
    call = _route(a, b)
    if type(call) is str:
        return np.matmul(gemm_ready(a), gemm_ready(b))
    if type(call) is _Folded:
        return np.matmul(gemm_ready(call.a), gemm_ready(call.b)).reshape(call.shape)
    blas = _found[0]
    a, b = call.a.array, call.b.array
    dtype = a.dtype
    out = np.empty(call.shape, dtype)  # row-major: each product n*m apart, rows m apart
    flag_a = TRANS if call.a.transposed else NO_TRANS
    flag_b = TRANS if call.b.transposed else NO_TRANS
    if call.count:
        blas.gemm_batch_strided[dtype.char](
            ROW_MAJOR, flag_a, flag_b, call.n, call.m, call.k, 1.0,
            a.ctypes.data, call.a.ld, call.a.step, b.ctypes.data, call.b.ld, call.b.step,
            0.0, out.ctypes.data, call.m, call.n * call.m, call.count,
        )  # fmt: skip
    else:
        blas.gemm[dtype.char](
            ROW_MAJOR, flag_a, flag_b, call.n, call.m, call.k, 1.0,
            a.ctypes.data, call.a.ld, b.ctypes.data, call.b.ld, 0.0, out.ctypes.data, call.m,
        )  # fmt: skip
    return out


def gemm_ready(x: np.ndarray) -> np.ndarray:
    """x, or a row-major copy of it where its matrices are not laid out for BLAS's gemm
    ([Note: operands BLAS can read] in minitorch/ops/linalg.py); x has at least 2 dims."""
    if x.flags.c_contiguous:
        return x  # the common case first: this check costs a tenth of the ones below
    *_, rows, cols = x.shape
    *_, row_stride, col_stride = x.strides  # in bytes
    size = x.itemsize
    if col_stride == size and row_stride >= cols * size:
        return x  # row-major matrices (a batch dim may be stepped or broadcast)
    if row_stride == size and col_stride >= rows * size:
        return x  # column-major: a transposed view, read in place
    if rows <= 1 or cols <= 1 or x.dtype.char not in "fd":
        return x  # a vector (no gemm to miss), or no gemm for this dtype (integers, float16)
    return np.ascontiguousarray(x)


# products of benchmarks/model_steps.py's workloads: (a's shape, b's shape, b transposed)
EXAMPLES = [
    ((16, 128), (128, 384), True),  # the decode step's attention projection (x @ W^T)
    ((1024, 128), (128, 512), True),  # the GPT step's MLP, forward
    ((128, 1024), (1024, 512), False),  # and a weight's gradient (x^T @ g)
    ((64, 64, 32), (64, 32, 64), True),  # its attention scores, q @ k^T, per (batch, head)
    ((64, 256, 64), (64, 64, 256), True),  # causal attention 8x8x256x64: q @ k^T
    ((64, 256, 256), (64, 256, 64), False),  # and att @ v
    ((8, 100, 64), (1, 64, 32), False),  # a batch times one shared matrix
    ((32, 32), (32, 32), False),  # integers
]


def main() -> None:
    """Print the BLAS found and the plan of each of EXAMPLES."""
    blas = library()
    if blas is None:
        print(f"no BLAS: {missing()}")
    else:
        batched = "yes" if blas.gemm_batch_strided else "no"
        print(f"BLAS: {blas.path}\n  {blas.config}")
        print(f"  {blas.num_threads()} threads, batched gemm: {batched}, 64-bit ints: {blas.int64}")
    rng = np.random.default_rng(0)
    for shape_a, shape_b, transposed in EXAMPLES:
        dtype = np.int64 if shape_a == (32, 32) else np.float32
        a = rng.standard_normal(shape_a).astype(dtype)
        b = rng.standard_normal(shape_b[:-2] + shape_b[-2:][::-1]).astype(dtype)
        b = b.swapaxes(-1, -2) if transposed else b.reshape(shape_b)
        if shape_b[0] == 1 and shape_a[0] > 1:
            b = np.broadcast_to(b, (shape_a[0], *shape_b[1:]))
        name = f"{shape_a} @ {tuple(b.shape)}{'^T' if transposed else ''} {dtype.__name__}"
        print(f"{name}\n  {product_plan(a, b)}")
