"""A register-blocked matrix multiply, generated as LLVM IR: the lesson of how BLAS gets fast.

    c = matmul(a, b)          # (m, k) @ (k, n), float32 or float64, any sizes, == a @ b

The compiler hands `mm` to BLAS (an extern kernel, ir/segments.py); this file is what such a
library does inside, small enough to read. benchmarks/matmul.py puts its GFLOP/s beside numpy's
BLAS.

[Note: register blocking]
C = A @ B does 2·m·n·k flops on m·k + k·n + m·n numbers: each number is used many times, and a
fast matmul is one that loads each number from memory as few times as it can. The naive loop,
one dot product per element of C, loads two numbers per multiply-add; a core issues about as
many loads as FMAs per cycle, so that loop waits on its loads.

Register blocking computes a *tile* of C at once, `ROWS` rows by `VECTORS` vector registers of
columns (6 x 32 floats with AVX-512), and keeps the whole tile in registers while it walks k:

    for k in range(K):
        b0, b1 = B[k, j : j+16], B[k, j+16 : j+32]        # 2 vector loads
        for r in range(6):
            a = broadcast(A[i+r, k])                       # 1 scalar load, copied to all lanes
            acc[r][0] += a * b0;  acc[r][1] += a * b1      # 2 FMAs

8 loads feed 12 vector FMAs (384 flops), and the 12 accumulators never leave the registers
until k ends: C is stored once per tile. The register file sets the tile's size: 12
accumulators, 2 B vectors and a broadcast fit in AVX2's 16 vector registers, and 12
independent FMA chains cover an FMA's latency (4 cycles, 2 per cycle). In the IR the
accumulators are `phi` nodes of the k loop: values, not memory, which is what "kept in
registers" means to LLVM.

*Packing*: before its tiles run, a column panel of B (k rows of 32 columns, each row 4·n bytes
from the next) is copied into one contiguous block, zero-filled past column n. The tiles down
the panel then read it as a stream from cache, and only the packing and the final stores deal
with a ragged edge: the inner loop has no masks. What a real BLAS (GotoBLAS, BLIS) adds on top:
blocking k and m so that the packed panels stay in the L1 and L2 caches, packing A as well, and
a hand-scheduled inner loop; benchmarks/matmul.py shows how close this gets without them.

Edges: m, n and k need not be multiples of anything. A tile that runs past the last row reads
row m-1 again for its extra rows (real memory, wasted work) and does not store them; the last
column panel is packed and stored with a lane mask (`llvm.masked.load`/`store`), so it never
touches memory past the end of a row. Threads split the column panels, each packing into its
own buffer ([start, end) like every kernel's outer loop, codegen/llvm/parallel.py).
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np
from llvmlite import ir

from codegen.llvm.jit import JitModule, compile_ir, host_description
from codegen.llvm.loops import I64, for_range, i64
from codegen.llvm.parallel import parallel_for
from minitorch.errors import DTypeError, ShapeError

PTR = ir.PointerType()
I1, I32 = ir.IntType(1), ir.IntType(32)
_ELEMENTS = {np.dtype(np.float32): ir.FloatType(), np.dtype(np.float64): ir.DoubleType()}

ROWS = 6  # rows of C in a tile
VECTORS = 2  # vector registers across a tile's columns


def vector_bytes() -> int:
    """The width of this CPU's vector registers: 64 with AVX-512, 32 with AVX, else 16."""
    features = host_description()[2].split(",")
    if "+avx512f" in features:
        return 64
    return 32 if "+avx" in features else 16


def generate_matmul(
    element: ir.Type, width: int, rows: int = ROWS, vectors: int = VECTORS
) -> ir.Module:
    """@matmul(ptr a, ptr b, ptr c, ptr packed, i64 m, i64 n, i64 k, i64 start, i64 end):
    C = A @ B over the column panels [start, end), each `vectors` x `width` columns wide, for
    row-major A (m, k), B (k, n) and C (m, n); `packed` holds k x panel-width elements
    ([Note: register blocking])."""
    module = ir.Module(name="matmul")
    signature = ir.FunctionType(ir.VoidType(), [PTR] * 4 + [I64] * 5)
    fn = ir.Function(module, signature, "matmul")
    names = ("a", "b", "c", "packed", "m", "n", "k", "start", "end")
    for arg, name in zip(fn.args, names, strict=True):
        arg.name = name
    for pointer in fn.args[:4]:
        pointer.add_attribute("noalias")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    tile = _Tile(builder, ir.VectorType(element, width), rows, vectors, *fn.args[:7])
    with for_range(builder, fn.args[7], fn.args[8], name="p") as panel:
        j = builder.mul(panel, i64(tile.columns), name="j")  # the panel's first column
        masks = tile.column_masks(j)  # all true but in the last panel, if n is not a multiple
        tile.pack(j, masks)
        with for_range(builder, 0, tile.m, name="i", step=rows) as i:
            tile.store(tile.accumulate(tile.rows_of_a(i)), i, j, masks)
    builder.ret_void()
    return module


class _Tile:
    """Emits the loops over one column panel: tiles down the rows, each a k loop of FMAs."""

    def __init__(
        self,
        builder: ir.IRBuilder,
        vector: ir.VectorType,
        rows: int,
        vectors: int,
        a: ir.Value,
        b: ir.Value,
        c: ir.Value,
        packed: ir.Value,
        m: ir.Value,
        n: ir.Value,
        k: ir.Value,
    ):
        self.builder = builder
        self.vector, self.element, self.width = vector, vector.element, vector.count
        self.rows, self.vectors, self.columns = rows, vectors, vectors * vector.count
        self.a, self.b, self.c, self.packed, self.m, self.n, self.k = a, b, c, packed, m, n, k
        self.align = 4 if self.element == ir.FloatType() else 8  # an element's, not a vector's

    def pack(self, j: ir.Value, masks: list[ir.Value]) -> None:
        """packed[k, :] = B[k, j : j + columns], zeros past column n: the panel made one
        contiguous block, which the tiles down the column then read from cache."""
        b = self.builder
        with for_range(b, 0, self.k, name="kp") as kk:
            b_row = self.at(self.b, b.add(b.mul(kk, self.n), j), name="b_row")
            packed_row = self.at(self.packed, b.mul(kk, i64(self.columns)), name="packed_row")
            for v in range(self.vectors):
                offset = i64(v * self.width)
                zero = ir.Constant(self.vector, None)
                value = self.masked(
                    "load", [self.at(b_row, offset), self.i32(self.align), masks[v], zero]
                )
                b.store(value, self.at(packed_row, offset), align=self.align)

    def rows_of_a(self, i: ir.Value) -> list[ir.Value]:
        """Where rows i, ..., i + rows - 1 of A start; rows past m read row m-1 (not stored)."""
        b = self.builder
        last = b.sub(self.m, i64(1), name="last_row")
        starts = []
        for r in range(self.rows):
            row = b.add(i, i64(r), name=f"i+{r}")
            row = b.select(b.icmp_signed("<", row, self.m), row, last, name=f"row{r}")
            starts.append(self.at(self.a, b.mul(row, self.k), name=f"a{r}"))
        return starts

    def accumulate(self, a_rows: list[ir.Value]) -> list[list[ir.Value]]:
        """The k loop: acc[r][v] += A[i+r, k] * packed[k, v*width : (v+1)*width], the tile
        carried from one k to the next in phis (registers)."""
        b = self.builder
        zero = ir.Constant(self.vector, None)
        preheader = b.block
        body = b.append_basic_block("k.body")
        done = b.append_basic_block("k.exit")
        b.cbranch(b.icmp_signed("<", i64(0), self.k), body, done)

        b.position_at_end(body)
        kk = b.phi(I64, name="kk")
        acc = [
            [b.phi(self.vector, name=f"acc{r}{v}") for v in range(self.vectors)]
            for r in range(self.rows)
        ]
        b_row = self.at(self.packed, b.mul(kk, i64(self.columns)), name="b_row")
        b_vectors = [
            b.load(
                self.at(b_row, i64(v * self.width)), typ=self.vector, align=self.align, name=f"b{v}"
            )
            for v in range(self.vectors)
        ]
        updated = []
        for r, a_row in enumerate(a_rows):
            a_k = b.load(self.at(a_row, kk), typ=self.element, name=f"a{r}k")
            a_splat = self.splat(a_k)
            updated.append([self.fma(a_splat, b_v, acc[r][v]) for v, b_v in enumerate(b_vectors)])
        k_next = b.add(kk, i64(1), name="kk.next", flags=["nsw"])
        b.cbranch(b.icmp_signed("<", k_next, self.k), body, done)
        kk.add_incoming(i64(0), preheader)
        kk.add_incoming(k_next, body)
        for phis, news in zip(acc, updated, strict=True):
            for phi, new in zip(phis, news, strict=True):
                phi.add_incoming(zero, preheader)
                phi.add_incoming(new, body)

        b.position_at_end(done)  # k = 0 skips the loop: the tile is zeros
        result = []
        for r, news in enumerate(updated):
            row = []
            for v, new in enumerate(news):
                phi = b.phi(self.vector, name=f"tile{r}{v}")
                phi.add_incoming(zero, preheader)
                phi.add_incoming(new, body)
                row.append(phi)
            result.append(row)
        return result

    def store(
        self, acc: list[list[ir.Value]], i: ir.Value, j: ir.Value, masks: list[ir.Value]
    ) -> None:
        """C[i + r, j : j + columns] = acc[r] for the rows that exist (i + r < m), the
        columns that exist (the masks)."""
        b = self.builder
        for r, row in enumerate(acc):
            index = b.add(i, i64(r))
            with b.if_then(b.icmp_signed("<", index, self.m)):
                c_row = self.at(self.c, b.add(b.mul(index, self.n), j))
                for v, value in enumerate(row):
                    address = self.at(c_row, i64(v * self.width))
                    self.masked("store", [value, address, self.i32(self.align), masks[v]])

    def column_masks(self, j: ir.Value) -> list[ir.Value]:
        """For each vector of the panel, which of its lanes are columns < n."""
        b = self.builder
        lanes = ir.Constant(ir.VectorType(I64, self.width), list(range(self.width)))
        masks = []
        for v in range(self.vectors):
            first = b.add(j, i64(v * self.width))
            columns = b.add(self.splat(first), lanes, name=f"columns{v}")
            masks.append(b.icmp_signed("<", columns, self.splat(self.n), name=f"mask{v}"))
        return masks

    def at(self, pointer: ir.Value, index: ir.Value, name: str = "") -> ir.Value:
        """The address of element `index` counted from `pointer`."""
        return self.builder.gep(
            pointer, [index], inbounds=True, name=name, source_etype=self.element
        )

    def splat(self, value: ir.Value) -> ir.Value:
        """`value` in every lane of a vector (a broadcast)."""
        b = self.builder
        vector = ir.VectorType(value.type, self.width)
        one = b.insert_element(ir.Constant(vector, ir.Undefined), value, ir.Constant(I32, 0))
        return b.shuffle_vector(
            one,
            ir.Constant(vector, ir.Undefined),
            ir.Constant(ir.VectorType(I32, self.width), None),
        )

    def fma(self, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
        """x * y + z, lane by lane, rounded once."""
        return self.intrinsic("fma", ir.FunctionType(self.vector, [self.vector] * 3), [x, y, z])

    def masked(self, op: str, args: list[ir.Value]) -> ir.Value:
        """llvm.masked.load / llvm.masked.store of one vector."""
        mask = ir.VectorType(I1, self.width)
        if op == "load":
            signature = ir.FunctionType(self.vector, [PTR, I32, mask, self.vector])
        else:
            signature = ir.FunctionType(ir.VoidType(), [self.vector, PTR, I32, mask])
        return self.intrinsic(f"masked.{op}", signature, args, ".p0")

    def intrinsic(
        self, name: str, signature: ir.FunctionType, args: list[ir.Value], suffix: str = ""
    ) -> ir.Value:
        """Call llvm.<name>.v16f32<suffix> (named for this tile's vector type)."""
        element = "f32" if self.element == ir.FloatType() else "f64"
        full_name = f"llvm.{name}.v{self.width}{element}{suffix}"
        fn = self.builder.module.globals.get(full_name)
        if fn is None:
            fn = ir.Function(self.builder.module, signature, full_name)
        return self.builder.call(fn, args)

    @staticmethod
    def i32(value: int) -> ir.Constant:
        return ir.Constant(I32, value)


class MatmulKernel:
    """The generated matmul for one dtype, compiled for this CPU: `kernel(a, b) == a @ b`."""

    def __init__(
        self, dtype: np.dtype, rows: int = ROWS, vectors: int = VECTORS, width: int | None = None
    ) -> None:
        self.dtype = np.dtype(dtype)
        if self.dtype not in _ELEMENTS:
            raise DTypeError(f"the generated matmul takes float32 or float64, not {self.dtype}")
        width = width or vector_bytes() // self.dtype.itemsize  # lanes of one vector
        self.columns = width * vectors  # of one panel
        self.module = generate_matmul(_ELEMENTS[self.dtype], width, rows, vectors)
        self._jit: JitModule = compile_ir(str(self.module))
        self._function = self._jit.function(
            "matmul", None, *[ctypes.c_void_p] * 4, *[ctypes.c_int64] * 5
        )

    def __call__(self, a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """a @ b for 2-d arrays of this kernel's dtype, written into `out` if given."""
        if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
            raise ShapeError(f"matmul: shapes {a.shape} and {b.shape} cannot be multiplied")
        if a.dtype != self.dtype or b.dtype != self.dtype:
            raise DTypeError(f"matmul: expected {self.dtype}, got {a.dtype} and {b.dtype}")
        (m, k), n = a.shape, b.shape[1]
        a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)  # row-major, as the IR reads
        if out is None:
            out = np.empty((m, n), self.dtype)
        elif out.shape != (m, n) or out.dtype != self.dtype or not out.flags.c_contiguous:
            raise ShapeError(f"matmul: out must be a contiguous {self.dtype} array of {(m, n)}")
        pointers = a.ctypes.data, b.ctypes.data, out.ctypes.data

        def run(start: int, end: int) -> None:
            packed = np.empty(k * self.columns, self.dtype)  # each thread packs its own panels
            self._function(*pointers, packed.ctypes.data, m, n, k, start, end)

        panels = -(-n // self.columns)
        parallel_for(run, panels, work=m * n * k)
        return out


@functools.cache
def kernel_for(dtype: np.dtype) -> MatmulKernel:
    """The compiled kernel for `dtype`, once per process."""
    return MatmulKernel(dtype)


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """a @ b by the generated register-blocked kernel ([Note: register blocking])."""
    return kernel_for(np.dtype(a.dtype))(a, b, out)
