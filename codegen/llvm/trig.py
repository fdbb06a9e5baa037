"""sin and cos for float and double: a vectorized fast path, and an exact one for huge x.

[Note: sin and cos over the whole float range]
sin x is ±sin r or ±cos r, where x = j*(pi/2) + r with j an integer and |r| <= pi/4; j mod 4
picks which. The Taylor series do the rest (mathlib.py's recipe); the whole difficulty is r.

Fast path, |x| <= 2^30 (every input a network sees). Cody-Waite, as in mathlib.py:
j = rint(x * 2/pi) and r = x - j*c1 - j*c2 - j*c3, where c1 + c2 + c3 is pi/2 to ~160 bits.
That sum misses pi/2 by ~2^-160, so r is off by j * 2^-160 <= 2^-130, far below an ulp of r:
no double comes closer than ~2^-61 to a multiple of pi/2 (float32 reduces in double). Past
2^30 the error grows with j, and past 2^53 j no longer fits a double at all.

Slow path, |x| > 2^30: an exact reduction (Payne and Hanek's idea). Write x = m * 2^e with m
a 53-bit integer. Then x * 2/pi mod 4 = m * (2^e * 2/pi) mod 4, and only a window of 2/pi's
bits matters: the bits worth more than 2^(2-e) multiply m into multiples of 4, which vanish
mod 4, and the bits worth less than ~2^(-190-e) change nothing a double can hold. So we keep
2/pi to 1216 bits, as a table of 64-bit words, cut out the 192-bit window that e picks, and
multiply it by m in exact integer arithmetic:

    y = (m * window) >> 64, mod 2^128  =  x * 2/pi mod 4, in units of 2^-126

The top two bits of y + 1/2 are j mod 4; the rest is f = x*2/pi - j in [-1/2, 1/2), to 126
bits, and r = f * pi/2. The worst case, x = 6381956970095103 * 2^797, has |f| ~ 2^-62: 64 of
those 126 bits remain, more than a double's 53, so r is right to its last bit for every x.

The two paths in one kernel. The slow path is integer code with a table load and branches;
inside a kernel's loop it would stop the loop vectorizer for every kernel with a sin in it. So
a kernel runs twice at most (codegen/llvm/kernel.py, ops.py):

1. Its body calls only the fast path (`fast_function`, straight-line, inlined, vectorized), and
   ORs `needs_slow_path(x)` into a flag: one compare per vector. Nearly always that is all.
2. If the flag came back set, the entry runs a second body over the same range, whose sin is
   `math_function`: the fast path, and a call of `minitorch.sin.float.huge` that answers the
   lanes with |x| > 2^30. That one lives in the trig library, compiled once per process (or
   loaded from the kernel cache on disk, codegen/disk_cache.py; trig_library.py loads it),
   with vector variants that LLVM's "vector-function-abi-variant" attribute names, so this
   body vectorizes too: a variant checks its lanes and calls the exact path only for huge
   ones.

    declare float @"minitorch.sin.float.huge"(float) nounwind readnone willreturn
        "vector-function-abi-variant"="_ZGV_LLVM_N4v_minitorch.sin.float.huge(...v4),..."

Running the body again is allowed because a kernel only reads its reads and writes its writes
(never the same memory: see [Note: the LLVM kernel]).
"""

from __future__ import annotations

import math

from llvmlite import ir
from llvmlite.ir.values import FunctionAttributes

from codegen.llvm import trig_library
from codegen.llvm.mathlib import (
    F32,
    F64,
    PRECISIONS,
    Emitter,
    define_function,
    unary_function,
)
from codegen.llvm.pi_reduction import reduce_exactly

I1 = ir.IntType(1)
I64 = ir.IntType(64)

_FUNCTIONS = ("sin", "cos")
# The fast path's domain: |x| <= _FAST_MAX (see the note).
_FAST_MAX = 2.0**30
# Vector variants: the widths the loop vectorizer may pick, 128 to 512 bits (the widest for
# the main loop, narrower ones for its epilogue and for CPUs without AVX-512).
_LANES = {"float": (4, 8, 16), "double": (2, 4, 8)}

# Taylor coefficients, each series cut where the first dropped term, at |r| = pi/4, is below
# a quarter ulp (float: 2^-26 = 1.5e-8, double: 2^-55 = 2.8e-17).
#   sin(r) = r + r*z*S(z), z = r^2:  float to r^9  (r^11/11! = 1.7e-9),
#                                    double to r^17 (r^19/19! = 8.2e-20)
#   cos(r) = 1 + z*C(z):             float to r^10 (r^12/12! = 1.1e-10),
#                                    double to r^16 (r^18/18! = 2.0e-18)
_SIN_SERIES = {
    name: [(-1) ** k / math.factorial(2 * k + 1) for k in range(1, n + 1)]  # -1/3!, 1/5!, ...
    for name, n in (("float", 4), ("double", 8))
}
_COS_SERIES = {
    name: [(-1) ** k / math.factorial(2 * k) for k in range(1, n + 1)]  # -1/2!, 1/4!, ...
    for name, n in (("float", 5), ("double", 8))
}


def fast_function(module: ir.Module, name: str, ir_type: ir.Type) -> ir.Function:
    """The function `minitorch.<name>.fast.<type>` (sin or cos) in `module`, made once: the
    fast path alone, right where `needs_slow_path` is false."""
    return define_function(module, f"{name}.fast", ir_type, lambda m, x: _fast(m, x, name))


def needs_slow_path(builder: ir.IRBuilder, x: ir.Value) -> ir.Value:
    """An i1: whether sin(x) and cos(x) need the slow path, |x| > 2^30 (inf too; not NaN)."""
    m = Emitter(builder, PRECISIONS[str(x.type)])
    return m.cmp(">", m.fabs(x), _FAST_MAX)


def math_function(module: ir.Module, name: str, ir_type: ir.Type) -> ir.Function:
    """The function `minitorch.<name>.<type>` (sin or cos) in `module`, made once, right for
    every x:

        fn = math_function(module, "sin", ir.FloatType())
        builder.call(fn, [x])

    It is the fast path, inlined into the loop and vectorized like mathlib's functions, and a
    call of the slow path for huge x, which is in the trig library ([Note: sin and cos over
    the whole float range]). Only with config.exact_trig on: off, ops.py calls libm's
    instead ([Note: plain trig] in mathlib.py), and this module is not even imported.
    """
    fn_name = f"minitorch.{name}.{ir_type}"
    if fn_name in module.globals:
        return module.globals[fn_name]
    if "llvm.compiler.used" not in module.globals:
        trig_library.load()
        _declare_library(module)
    huge = module.globals[f"{fn_name}.huge"]

    def fast_or_huge(m: Emitter, x: ir.Value) -> ir.Value:
        exact = m.builder.call(huge, [x])
        return m.select(needs_slow_path(m.builder, x), exact, _fast(m, x, name))

    return define_function(module, name, ir_type, fast_or_huge)


def _declare_library(module: ir.Module) -> None:
    """Declare the library's functions in `module`, and list the vector variants in
    `llvm.compiler.used`: LLVM would delete the unused declarations before the vectorizer
    gets to use them."""
    variants = []
    for name in _FUNCTIONS:
        for ir_type in (F32, F64):
            variants += _declare_huge(module, name, ir_type)
    used_type = ir.ArrayType(ir.PointerType(), len(variants))
    used = ir.GlobalVariable(module, used_type, "llvm.compiler.used")
    used.linkage = "appending"
    used.section = "llvm.metadata"
    used.initializer = ir.Constant(used_type, variants)


def _declare_huge(module: ir.Module, name: str, ir_type: ir.Type) -> list[ir.Function]:
    """Declare `minitorch.<name>.<type>.huge`, whose attribute names its vector variants, and
    them; return the variants."""
    fn_name = f"minitorch.{name}.{ir_type}.huge"
    lanes = _LANES[str(ir_type)]
    variants = ",".join(f"_ZGV_LLVM_N{n}v_{fn_name}({fn_name}.v{n})" for n in lanes)
    fn = ir.Function(module, ir.FunctionType(ir_type, [ir_type]), fn_name)
    fn.attributes = _WithVectorVariants(variants)
    vectors = [ir.VectorType(ir_type, n) for n in lanes]
    return [ir.Function(module, ir.FunctionType(v, [v]), f"{fn_name}.v{v.count}") for v in vectors]


class _WithVectorVariants(FunctionAttributes):
    """A pure function's attributes plus the string attribute that names its vector variants
    (llvmlite knows only LLVM's keyword attributes)."""

    def __init__(self, variants: str) -> None:
        super().__init__(["nounwind", "readnone"])
        self.variants = variants

    def _to_list(self, ret_type: ir.Type) -> list[str]:
        extra = ["willreturn", f'"vector-function-abi-variant"="{self.variants}"']
        return super()._to_list(ret_type) + extra


def exact_function(module: ir.Module, name: str, ir_type: ir.Type) -> ir.Function:
    """`minitorch.<name>.<type>.exact` (sin or cos) in `module`, made once: right for every x,
    through the exact reduction. Internal and `noinline`: one copy, however many callers."""
    fn_name = f"minitorch.{name}.{ir_type}.exact"
    if fn_name in module.globals:
        return module.globals[fn_name]
    exact = unary_function(module, fn_name, ir_type, "noinline")
    if ir_type == F64:
        _emit_body(exact, lambda m, x: _exact(m, x, name))
    else:
        in_double = exact_function(module, name, F64)
        _emit_body(exact, lambda m, x: _through(m, x, in_double))
    return exact


def branching_function(module: ir.Module, name: str, ir_type: ir.Type) -> ir.Function:
    """`minitorch.<name>.branching.<type>` (sin or cos) in `module`, right for every x with no
    trig library to call: the fast path, and a branch to `exact_function` (in the module too)
    for huge x. For a target that cannot call into this process, as a GPU cannot
    (codegen/cuda/); the branch costs nothing there, where each thread takes its own."""
    exact = exact_function(module, name, ir_type)

    def fast_or_exact(m: Emitter, x: ir.Value) -> ir.Value:
        return m.select(
            needs_slow_path(m.builder, x), _exact_where_huge(m, x, exact), _fast(m, x, name)
        )

    return define_function(module, f"{name}.branching", ir_type, fast_or_exact)


# -- the trig library: the slow path, compiled once per process (trig_library.py loads it) ---


def define_library() -> ir.Module:
    """sin and cos's slow paths for float and double, each as a scalar function and its
    vector variants, which call the exact reduction for the lanes that need it."""
    module = ir.Module("minitorch.trig")
    for name in _FUNCTIONS:
        for ir_type in (F64, F32):  # double first: float's exact path calls double's
            _declare_huge(module, name, ir_type)
            huge = module.globals[f"minitorch.{name}.{ir_type}.huge"]
            exact = exact_function(module, name, ir_type)

            def where_huge(m: Emitter, x: ir.Value, exact: ir.Function = exact) -> ir.Value:
                return _exact_where_huge(m, x, exact)

            _emit_body(huge, where_huge)
            for lanes in _LANES[str(ir_type)]:
                _emit_body(module.globals[f"{huge.name}.v{lanes}"], where_huge, lanes)
    return module


def exported_names() -> list[str]:
    """The library's functions that kernels call: what `_declare_library` declares."""
    declarations = ir.Module("minitorch.trig.declarations")
    _declare_library(declarations)
    return [fn.name for fn in declarations.functions]


def _emit_body(fn: ir.Function, emit, lanes: int = 1) -> None:
    """fn's body: `return emit(m, x)`, with an emitter for x's precision and lanes."""
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    x = fn.args[0]
    element = x.type.element if lanes > 1 else x.type
    builder.ret(emit(Emitter(builder, PRECISIONS[str(element)], lanes), x))


def _exact_where_huge(m: Emitter, x: ir.Value, exact: ir.Function) -> ir.Value:
    """`exact(x)` in the lanes where |x| > _FAST_MAX, x in the others (the caller keeps its
    fast path's answer there). One compare and branch when no lane is huge."""
    b = m.builder
    needs_exact = m.cmp(">", m.fabs(x), _FAST_MAX)
    any_lane = needs_exact if m.lanes == 1 else _any(b, needs_exact)
    before = b.block
    with b.if_then(any_lane, likely=False):
        if m.lanes == 1:
            result = b.call(exact, [x])
        else:
            result = x  # each lane's answer is inserted into this vector
            for lane in range(m.lanes):
                value = b.call(exact, [b.extract_element(x, ir.Constant(I64, lane))])
                result = b.insert_element(result, value, ir.Constant(I64, lane))
            result = m.select(needs_exact, result, x)
        after = b.block
    merged = b.phi(m.type)
    merged.add_incoming(x, before)
    merged.add_incoming(result, after)
    return merged


def _any(b: ir.IRBuilder, lanes: ir.Value) -> ir.Value:
    """Whether any lane of a vector of i1 is true."""
    name = f"llvm.vector.reduce.or.v{lanes.type.count}i1"
    fn = b.module.globals.get(name) or ir.Function(
        b.module, ir.FunctionType(I1, [lanes.type]), name
    )
    return b.call(fn, [lanes])


# -- the fast path: Cody-Waite ------------------------------------------------------------------


def _fast(m: Emitter, x: ir.Value, name: str) -> ir.Value:
    """sin or cos of x, right for |x| <= _FAST_MAX and NaN."""
    r, q = _reduce_by_half_pi(m, x)
    result = _from_quadrant(m, name, r, q)
    if name == "sin":  # sin(-0.0) = -0.0, which the reduction (0 - 0*c) would turn into +0.0
        return m.select(m.cmp("==", x, 0.0), x, result)
    return result


def _reduce_by_half_pi(m: Emitter, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """r, q with x = j*(pi/2) + r, |r| <= ~pi/4, and q = j mod 4 as a float (NaN for inf/NaN)."""
    if m.p.ir_type == F32:
        # NOTE: float32 reduces in float64. In float, x*2/pi is itself rounded to an integer
        # once |x| passes ~3e6, j comes out wrong, and sin(1e7) would be off by thousands
        # of ulp. The price: a float32 sin(x)**2 + cos(x)**2 kernel takes ~13 ms per 1e7
        # elements instead of ~9.5.
        wide = m.in_precision("double")
        r, q = _reduce_by_half_pi(wide, m.builder.fpext(x, wide.type))
        return m.builder.fptrunc(r, m.type), m.builder.fptrunc(q, m.type)
    j = m.rint(m.mul(x, m.const(2 / math.pi)))
    r = x
    for part in m.p.half_pi:
        r = m.fma(j, m.const(-part), r)  # r - j*part; the first one is exact
    # NOTE: j mod 4 stays in floating point: AVX2 has no instruction to convert doubles to
    # 64-bit integers, and j/4, floor and the subtraction are all exact.
    q = m.sub(j, m.mul(m.floor(m.mul(j, m.const(0.25))), m.const(4.0)))
    return r, q


# -- the slow path: an exact reduction ----------------------------------------------------------


def _exact(m: Emitter, x: ir.Value, name: str) -> ir.Value:
    """sin or cos of any double x, through the exact reduction."""
    r, q = reduce_exactly(m, x)
    result = _from_quadrant(m, name, r, q)
    return m.select(m.cmp("<", m.fabs(x), math.inf), result, math.nan)  # sin(inf) = NaN


def _through(m: Emitter, x: ir.Value, in_double: ir.Function) -> ir.Value:
    """float32's exact path: double's, on x widened, rounded once. (A call, not a second copy
    of the exact reduction: the library's object code is a quarter smaller.)"""
    return m.builder.fptrunc(m.builder.call(in_double, [m.builder.fpext(x, F64)]), F32)


# -- both: from r and the quadrant to sin or cos ------------------------------------------------


def _from_quadrant(m: Emitter, name: str, r: ir.Value, q: ir.Value) -> ir.Value:
    """sin or cos of j*(pi/2) + r from r and q = j mod 4:
    sin: quadrants 0, 1, 2, 3 give sin r, cos r, -sin r, -cos r;
    cos: quadrants 0, 1, 2, 3 give cos r, -sin r, -cos r, sin r."""
    precision = str(m.p.ir_type)
    z = m.mul(r, r)
    sin_r = m.fma(m.mul(r, z), m.horner(z, _SIN_SERIES[precision]), r)
    cos_r = m.fma(z, m.horner(z, _COS_SERIES[precision]), m.const(1.0))
    if name == "sin":
        return _quadrant(m, sin_r, cos_r, q, negate_in=(2.0, 3.0))
    return _quadrant(m, cos_r, sin_r, q, negate_in=(1.0, 2.0))


def _quadrant(
    m: Emitter, value_at_r: ir.Value, other: ir.Value, q: ir.Value, negate_in: tuple[float, float]
) -> ir.Value:
    """Pick `other` in odd quadrants, then negate in the two quadrants `negate_in`."""
    odd = m.either(m.cmp("==", q, 1.0), m.cmp("==", q, 3.0))
    value = m.select(odd, other, value_at_r)
    negate = m.either(m.cmp("==", q, negate_in[0]), m.cmp("==", q, negate_in[1]))
    return m.select(negate, m.neg(value), value)
