"""Attention as one generated kernel: softmax(q kᵀ · scale, masked) v with an online softmax.

    o = kernel_for(dtype, D, safe)(q, k, v, mask, scale)       # attention_kernel.py
    # q (B, H, T, D), k and v (B, H, S, D), mask (T, S) or None; o (B, H, T, D) ==
    # softmax(where(mask, (q @ kᵀ) * scale, -inf), dim=-1) @ v
    # safe: 0, not NaN, for a row whose every key is hidden (scaled_dot_product_attention)

The sibling of matmul.py (read its [Note: register blocking] first): the two products of
attention are register-blocked tiles like its, and the softmax between them never leaves the
cache. tracer/fx/passes/fuse_attention.py finds the pattern in a graph and puts one
`ops.fused_attention` in its place; the LLVM backend runs it with this kernel
(attention_kernel.py compiles it and calls it).

[Note: online softmax]
Computed op by op, attention writes the (T, S) matrix of scores for every batch and head,
reads it back to find each row's max, again for exp and the sum, again to divide, and once
more for the product with v: five passes over T·S numbers per head, which do not fit in cache.
The online softmax (Milakov and Gimelshein 2018; flash attention, Dao et al. 2022) makes one
pass. For a block of R query rows it walks the keys in blocks of C, keeping per row a running
max m, a running sum l and an unnormalized output o (R x D):

    s = q_block @ kt[:, j:j+C] * scale                 # (R, C), in registers
    s = where(mask[i:i+R, j:j+C], s, -inf)
    m_new = max(m, rowmax(s))
    alpha = exp(m - m_new)                             # how much the old terms shrink
    p = exp(s - m_new)
    l = l * alpha + rowsum(p);   o = o * alpha + p @ v[j:j+C]
    m = m_new
    ...                                                # after the last block:  o / l

When the max grows, everything summed so far was relative to the old max, and multiplying by
exp(m_old - m_new) re-bases it: the result is softmax(s) @ v up to rounding. While a row has
seen only hidden keys, m is -inf and `s - m` would be NaN; there we subtract 0 instead (p and
alpha are then 0, as they should). A row whose every key is hidden ends with o = 0 and l = 0,
so 0 / 0 = NaN, which is what the op-by-op softmax gives for a row of -inf; a kernel generated
`safe` writes 0 there instead, as F.scaled_dot_product_attention's safe softmax does (l is 0
for such a row alone: any other row has a term exp(0) = 1, or is NaN).

[Note: skipped blocks]
The mask is data, not a promise of causality: before the kernel runs, `block_states`
(attention_kernel.py) looks at each (query block, key block) pair once (O(T·S), numpy) and
marks it 0 (every entry hidden: skipped), 1 (some hidden: the mask is read), or 2 (none hidden:
the mask is not read). A causal mask hides the blocks above the diagonal, half of them: that is
causal attention's 2x, for any mask that hides whole blocks. Skipping is exact (a hidden key's
p is exactly 0), except for one thing: the op-by-op product computes 0 * v there, which is NaN
where v is inf or NaN.
So when v holds a non-finite number, the extern step computes the op-by-op math instead.

Layout: kᵀ is what the first product reads a vector at a time (C keys of one head-dim column),
so each thread copies kᵀ of the head it works on into its own scratch, padded with zeros to a
whole number of key blocks, once per head (`pack`). q is read a number at a time, by its
strides (nanoGPT's q is a transposed view); v a vector at a time, along its contiguous last
dim. The kernel is generated for one head dim D (a constant: the loops over D unroll).
"""

from __future__ import annotations

import itertools

from llvmlite import ir

from codegen.llvm.loops import I64, for_range, i64
from codegen.llvm.mathlib import PRECISIONS, Emitter, math_function

PTR = ir.PointerType()
I1, I8, I32 = ir.IntType(1), ir.IntType(8), ir.IntType(32)

ROWS = 8  # query rows in a block
KEY_VECTORS = 2  # vectors of keys in a key block: C = KEY_VECTORS x lanes
OUT_VECTORS = 2  # vectors of the head dim one pass of p @ v keeps in registers
# q, k, v, mask, blocks, out, scratch; t, s, heads; q's, k's strides (b, h, t, d), v's (b, h, t)
ARGUMENTS = ("q", "k", "v", "mask", "blocks", "out", "scratch")
SIZES = ("t", "s", "heads", "qb", "qh", "qt", "qd", "kb", "kh", "kt", "kd", "vb", "vh", "vt")


def generate_attention(
    element: ir.Type, width: int, head_dim: int, safe: bool = False
) -> ir.Module:
    """@attention(ptr q, k, v, mask, blocks, out, scratch, i64 sizes..., scale, i64 start, end):
    out[bh, i, :] = softmax_j(q[bh, i] . k[bh, j] * scale, masked) @ v[bh] for every query block
    `it` in [start, end) (bh = it / query blocks), [Note: online softmax]."""
    module = ir.Module(name="attention")
    arguments = [PTR] * len(ARGUMENTS) + [I64] * len(SIZES) + [element, I64, I64]
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), arguments), "attention")
    names = (*ARGUMENTS, *SIZES, "scale", "start", "end")
    for arg, name in zip(fn.args, names, strict=True):
        arg.name = name
    for pointer in fn.args[: len(ARGUMENTS)]:
        pointer.add_attribute("noalias")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    args = dict(zip(names, fn.args, strict=True))
    _Attention(builder, ir.VectorType(element, width), head_dim, args, safe).emit()
    builder.ret_void()
    return module


class _Attention:
    """Emits the kernel's loops: query blocks, key blocks, the two tiles between them."""

    def __init__(
        self, builder: ir.IRBuilder, vector: ir.VectorType, head_dim: int, args: dict, safe: bool
    ):
        self.b, self.args, self.safe = builder, args, safe
        self.vector, self.element, self.width = vector, vector.element, vector.count
        self.d = head_dim
        self.dv = -(-head_dim // self.width)  # vectors of one row of o (the last one masked)
        self.c = KEY_VECTORS * self.width  # keys in a key block
        self.align = 4 if self.element == ir.FloatType() else 8
        precision = PRECISIONS["float" if self.element == ir.FloatType() else "double"]
        self.scalar_math = Emitter(builder, precision)
        # locals the optimizer keeps in registers (SROA): tiles, and each row's m, l, alpha
        self.tile = [
            [self.local(vector, f"s{r}{v}") for v in range(KEY_VECTORS)] for r in range(ROWS)
        ]
        self.out_tile = [
            [self.local(vector, f"o{r}{u}") for u in range(OUT_VECTORS)] for r in range(ROWS)
        ]
        self.m = [self.local(self.element, f"m{r}") for r in range(ROWS)]
        self.l = [self.local(vector, f"l{r}") for r in range(ROWS)]
        self.alpha = [self.local(self.element, f"alpha{r}") for r in range(ROWS)]

    def emit(self) -> None:
        b, a = self.b, self.args
        self.key_blocks = b.sdiv(b.add(a["s"], i64(self.c - 1)), i64(self.c), name="key_blocks")
        self.query_blocks = b.sdiv(b.add(a["t"], i64(ROWS - 1)), i64(ROWS), name="query_blocks")
        self.padded = b.mul(self.key_blocks, i64(self.c), name="padded")  # keys, kt's rows
        self.kt = a["scratch"]  # (d, padded)
        self.o = self.at(self.kt, b.mul(self.padded, i64(self.d)), name="o_block")  # (ROWS, dv*w)
        self.p = self.at(self.o, i64(ROWS * self.dv * self.width), name="p_block")  # (ROWS, c)
        with for_range(b, a["start"], a["end"], name="it") as it:
            bh = b.sdiv(it, self.query_blocks, name="bh")
            qb = b.srem(it, self.query_blocks, name="qblock")
            batch, head = b.sdiv(bh, a["heads"]), b.srem(bh, a["heads"])
            first = b.or_(b.icmp_signed("==", it, a["start"]), b.icmp_signed("==", qb, i64(0)))
            with b.if_then(first):  # a new head: its kᵀ into this thread's scratch
                self.pack(self.base("k", batch, head))
            q = self.base("q", batch, head)
            v = self.base("v", batch, head)
            out = self.at(a["out"], b.mul(bh, b.mul(a["t"], i64(self.d))), name="out_head")
            i0 = b.mul(qb, i64(ROWS), name="i0")
            rows = self.clamped_rows(i0, a["t"])
            self.start_rows()
            with for_range(b, 0, self.key_blocks, name="kblock") as kb:
                state = self.load(a["blocks"], b.add(b.mul(qb, self.key_blocks), kb), I8)
                with b.if_then(b.icmp_signed("!=", state, ir.Constant(I8, 0))):
                    j0 = b.mul(kb, i64(self.c), name="j0")
                    self.scores(q, rows, j0)
                    with b.if_then(b.icmp_signed("==", state, ir.Constant(I8, 1))):
                        self.apply_mask(rows, j0)
                    self.softmax_step()
                    self.accumulate(v, j0)
            self.finish(out, i0)

    # ---- the steps ----------------------------------------------------------------------------

    def pack(self, k: ir.Value) -> None:
        """kt[dd, j] = k[j, dd] for the s keys of one head (the padding stays zero)."""
        b, a = self.b, self.args
        with for_range(b, 0, a["s"], name="pj") as j:
            row = self.at(k, b.mul(j, a["kt"]))
            for dd in range(self.d):
                value = self.load(row, b.mul(i64(dd), a["kd"]))
                b.store(value, self.at(self.kt, b.add(b.mul(i64(dd), self.padded), j)))

    def clamped_rows(self, i0: ir.Value, t: ir.Value) -> list[ir.Value]:
        """Rows i0 .. i0+ROWS-1, those past t read as row t-1 (computed, never stored)."""
        b = self.b
        last = b.sub(t, i64(1))
        rows = []
        for r in range(ROWS):
            row = b.add(i0, i64(r))
            rows.append(b.select(b.icmp_signed("<", row, t), row, last, name=f"row{r}"))
        return rows

    def start_rows(self) -> None:
        """m = -inf, l = 0, o = 0 for a new block of query rows."""
        b = self.b
        for r in range(ROWS):
            b.store(ir.Constant(self.element, float("-inf")), self.m[r])
            b.store(ir.Constant(self.vector, None), self.l[r])
            for u in range(self.dv):
                zero = ir.Constant(self.vector, None)
                b.store(zero, self.o_at(r, u), align=self.align)

    def scores(self, q: ir.Value, rows: list[ir.Value], j0: ir.Value) -> None:
        """tile[r][v] = scale * sum_dd q[row r, dd] * kt[dd, j0 + v*w : ...]: matmul's tile."""
        b, a = self.b, self.args
        q_rows = [self.at(q, b.mul(row, a["qt"]), name=f"q{r}") for r, row in enumerate(rows)]
        zero = ir.Constant(self.vector, None)
        for row in self.tile:
            for acc in row:
                b.store(zero, acc)
        with for_range(b, 0, self.d, name="dd") as dd:
            kt_row = self.at(self.kt, b.add(b.mul(dd, self.padded), j0))
            keys = [
                self.load_vector(self.at(kt_row, i64(v * self.width))) for v in range(KEY_VECTORS)
            ]
            for r, q_row in enumerate(q_rows):
                q_value = self.splat(self.load(q_row, b.mul(dd, a["qd"])))
                for v, key in enumerate(keys):
                    acc = self.tile[r][v]
                    b.store(self.fma(q_value, key, b.load(acc)), acc)
        scale = self.splat(a["scale"])
        for row in self.tile:
            for acc in row:
                b.store(b.fmul(b.load(acc), scale), acc)

    def apply_mask(self, rows: list[ir.Value], j0: ir.Value) -> None:
        """tile = where(mask[row, j0 : j0 + c], tile, -inf) (mask's rows are `padded` wide)."""
        b = self.b
        minus_inf = ir.Constant(self.vector, [float("-inf")] * self.width)
        bytes_ = ir.VectorType(I8, self.width)
        for r, row in enumerate(rows):
            mask_row = b.gep(
                self.args["mask"], [b.add(b.mul(row, self.padded), j0)], source_etype=I8
            )
            for v in range(KEY_VECTORS):
                address = b.gep(mask_row, [i64(v * self.width)], source_etype=I8)
                seen = b.icmp_unsigned(
                    "!=", b.load(address, typ=bytes_, align=1), ir.Constant(bytes_, None)
                )
                acc = self.tile[r][v]
                b.store(b.select(seen, b.load(acc), minus_inf), acc)

    def softmax_step(self) -> None:
        """Per row: the new max, alpha = exp(m - m_new), p = exp(s - m_new) into the p block,
        l = l * alpha + p ([Note: online softmax]). exp is mathlib's: a scalar function that
        the loop vectorizer widens, in one loop over the block (ROWS x c, a constant)."""
        b, sm = self.b, self.scalar_math
        exp = math_function(b.module, "exp", self.element)
        for r in range(ROWS):
            scores = [b.load(acc) for acc in self.tile[r]]
            widest = scores[0]
            for other in scores[1:]:
                widest = self.call("llvm.maxnum", self.vector, [widest, other])
            old = b.load(self.m[r])
            new = self.call("llvm.maxnum", self.element, [old, self.reduce("fmax", [widest])])
            base = sm.select(sm.cmp("==", new, float("-inf")), sm.const(0.0), new)  # NaN: new
            b.store(b.call(exp, [sm.sub(old, base)]), self.alpha[r])
            b.store(new, self.m[r])
            for v, score in enumerate(scores):
                shifted = b.fsub(score, self.splat(base))
                b.store(shifted, self.vec_at(self.p, r * KEY_VECTORS + v), align=self.align)
        with for_range(b, 0, ROWS * self.c, name="pe") as i:
            address = self.at(self.p, i)
            value = b.load(address, typ=self.element, align=self.align)
            b.store(b.call(exp, [value]), address, align=self.align)
        for r in range(ROWS):
            total = b.fmul(b.load(self.l[r]), self.splat(b.load(self.alpha[r])))
            for v in range(KEY_VECTORS):
                p = self.load_vector(self.vec_at(self.p, r * KEY_VECTORS + v))
                total = b.fadd(total, p)
            b.store(total, self.l[r])

    def accumulate(self, v: ir.Value, j0: ir.Value) -> None:
        """o[r] = o[r] * alpha[r] + sum_c p[r, c] * v[j0 + c]: matmul's tile again, over
        OUT_VECTORS vectors of the head dim at a time; keys past s read v's row s-1 (p = 0)."""
        b, a = self.b, self.args
        last = b.sub(a["s"], i64(1))
        for u0 in range(0, self.dv, OUT_VECTORS):
            us = range(u0, min(u0 + OUT_VECTORS, self.dv))
            for r, u in itertools.product(range(ROWS), us):  # o * alpha
                alpha = self.splat(b.load(self.alpha[r]))
                b.store(b.fmul(self.load_vector(self.o_at(r, u)), alpha), self.out_tile[r][u - u0])
            with for_range(b, 0, self.c, name="key") as c:
                j = b.add(j0, c)
                j = b.select(b.icmp_signed("<", j, a["s"]), j, last)
                v_row = self.at(v, b.mul(j, a["vt"]))
                values = [self.load_row_vector(v_row, u) for u in us]
                for r in range(ROWS):
                    p = self.splat(self.load(self.p, b.add(i64(r * self.c), c)))
                    for u, value in zip(us, values, strict=True):
                        acc = self.out_tile[r][u - u0]
                        b.store(self.fma(p, value, b.load(acc)), acc)
            for r, u in itertools.product(range(ROWS), us):
                b.store(b.load(self.out_tile[r][u - u0]), self.o_at(r, u), align=self.align)

    def finish(self, out: ir.Value, i0: ir.Value) -> None:
        """out[i0 + r] = o[r] / sum(l[r]) for the rows that exist (0 / 0 = NaN: every key
        hidden, as the op-by-op softmax gives; 0 if `safe`)."""
        b, t = self.b, self.args["t"]
        for r in range(ROWS):
            row = b.add(i0, i64(r))
            with b.if_then(b.icmp_signed("<", row, t)):
                total = self.splat(
                    self.reduce("fadd", [ir.Constant(self.element, 0.0), b.load(self.l[r])])
                )
                out_row = self.at(out, b.mul(row, i64(self.d)))
                for u in range(self.dv):
                    o = b.fdiv(self.load_vector(self.o_at(r, u)), total)
                    if self.safe:
                        nothing_seen = b.fcmp_ordered("==", total, ir.Constant(self.vector, None))
                        o = b.select(nothing_seen, ir.Constant(self.vector, None), o)
                    self.store_row_vector(o, out_row, u)

    # ---- plumbing -----------------------------------------------------------------------------

    def base(self, name: str, batch: ir.Value, head: ir.Value) -> ir.Value:
        """Where (batch, head) of q, k or v starts, by its strides."""
        b, a = self.b, self.args
        offset = b.add(b.mul(batch, a[f"{name}b"]), b.mul(head, a[f"{name}h"]))
        return self.at(a[name], offset, name=f"{name}_head")

    def local(self, typ: ir.Type, name: str) -> ir.Value:
        return self.b.alloca(typ, name=name)  # in the entry block: SROA makes it a register

    def at(self, pointer: ir.Value, index: ir.Value, name: str = "") -> ir.Value:
        return self.b.gep(pointer, [index], inbounds=True, name=name, source_etype=self.element)

    def vec_at(self, pointer: ir.Value, vector_index: int) -> ir.Value:
        return self.at(pointer, i64(vector_index * self.width))

    def o_at(self, r: int, u: int) -> ir.Value:
        return self.vec_at(self.o, r * self.dv + u)  # vector u of row r of the o block

    def load(self, pointer: ir.Value, index: ir.Value, typ: ir.Type | None = None) -> ir.Value:
        if typ is None:
            return self.b.load(self.at(pointer, index), typ=self.element, align=self.align)
        return self.b.load(self.b.gep(pointer, [index], source_etype=typ), typ=typ)

    def load_vector(self, address: ir.Value) -> ir.Value:
        return self.b.load(address, typ=self.vector, align=self.align)

    def lanes_in_row(self, u: int) -> ir.Constant | None:
        """Which lanes of vector u of a row are < d: None when all are."""
        if (u + 1) * self.width <= self.d:
            return None
        return ir.Constant(
            ir.VectorType(I1, self.width),
            [u * self.width + lane < self.d for lane in range(self.width)],
        )

    def load_row_vector(self, row: ir.Value, u: int) -> ir.Value:
        mask, address = self.lanes_in_row(u), self.vec_at(row, u)
        if mask is None:
            return self.load_vector(address)
        args = [address, ir.Constant(I32, self.align), mask, ir.Constant(self.vector, None)]
        return self.masked("load", self.vector, args)

    def store_row_vector(self, value: ir.Value, row: ir.Value, u: int) -> None:
        mask, address = self.lanes_in_row(u), self.vec_at(row, u)
        if mask is None:
            self.b.store(value, address, align=self.align)
        else:
            self.masked(
                "store", ir.VoidType(), [value, address, ir.Constant(I32, self.align), mask]
            )

    def splat(self, value: ir.Value) -> ir.Value:
        b = self.b
        vector = ir.VectorType(value.type, self.width)
        one = b.insert_element(ir.Constant(vector, ir.Undefined), value, ir.Constant(I32, 0))
        zeros = ir.Constant(ir.VectorType(I32, self.width), None)
        return b.shuffle_vector(one, ir.Constant(vector, ir.Undefined), zeros)

    def fma(self, x: ir.Value, y: ir.Value, z: ir.Value) -> ir.Value:
        return self.call("llvm.fma", self.vector, [x, y, z])

    def reduce(self, op: str, args: list[ir.Value]) -> ir.Value:
        """llvm.vector.reduce.fmax (NaNs ignored, as maxnum) or .fadd (any order: reassoc)."""
        name = f"llvm.vector.reduce.{op}.{self.type_suffix(self.vector)}"
        fn = self.declare(name, ir.FunctionType(self.element, [a.type for a in args]))
        return self.b.call(fn, args, fastmath=("reassoc",) if op == "fadd" else ())

    def masked(self, op: str, result: ir.Type, args: list[ir.Value]) -> ir.Value:
        """llvm.masked.load / llvm.masked.store of one vector."""
        name = f"llvm.masked.{op}.{self.type_suffix(self.vector)}.p0"
        return self.b.call(
            self.declare(name, ir.FunctionType(result, [a.type for a in args])), args
        )

    def call(self, name: str, typ: ir.Type, args: list[ir.Value]) -> ir.Value:
        """A unary-typed intrinsic (llvm.fma, llvm.maxnum) on `typ`."""
        fn = self.declare(
            f"{name}.{self.type_suffix(typ)}", ir.FunctionType(typ, [typ] * len(args))
        )
        return self.b.call(fn, args)

    def declare(self, name: str, signature: ir.FunctionType) -> ir.Function:
        module = self.b.module
        return module.globals.get(name) or ir.Function(module, signature, name)

    @staticmethod
    def type_suffix(typ: ir.Type) -> str:
        element = typ.element if isinstance(typ, ir.VectorType) else typ
        name = "f32" if element == ir.FloatType() else "f64"
        return f"v{typ.count}{name}" if isinstance(typ, ir.VectorType) else name
