"""Our own exp, log and pow for float and double, written in LLVM IR so they vectorize; the
`Emitter` that trig.py (sin, cos) and activations.py build theirs with.

[Note: why not llvm.sin]
`llvm.sin.*` and friends vectorize on paper, but the x86 backend splits every vector call into
scalar libm calls (sin^2 + cos^2 over 1e7 floats: ~90 ms, slower than numpy), no vector math
library can be switched on through llvmlite, and on NVPTX `llvm.sin` aborts the compiler. So
each function here is straight-line IR built from +, *, fma, rint, floor, bit casts and
`select`: no branches, no calls, marked `alwaysinline`, so the loop vectorizer sees only
instructions it can widen to 8 or 16 lanes. (sin and cos need one exception, a branch for
huge arguments: trig.py, [Note: sin and cos over the whole float range].)

Every function has the same three steps:
1. Range reduction: write x = j*c + r with j an integer and r small, using Cody-Waite: c is
   split into parts c1 + c2 + c3 that together carry ~3x the precision of one float, and
   `fma(-j, c1, x)` is exact (the product is not rounded and the difference is representable).
2. A polynomial for the small r: the Taylor series, cut where the first dropped term is below
   a quarter ulp at the edge of the reduced range (the comments list those terms).
3. Reconstruction: undo step 1 (pick sin or cos and a sign by j mod 4, or scale by 2^j through
   the exponent bits), then `select` the IEEE answers for the special inputs, as numpy gives
   them: log(0) = -inf, log(x < 0) = nan, exp overflow = inf, sin(inf) = nan, sin(-0.0) = -0.0.

Measured against a long-double reference (tests/codegen/test_mathlib.py pins it): exp <= 0.91
ulp, log <= 0.88 ulp (float32) and <= 1.2 ulp (float64), subnormal inputs and results
included.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from decimal import Decimal, localcontext

import numpy as np
from llvmlite import ir

F32 = ir.FloatType()
F64 = ir.DoubleType()

# 60 digits of pi; Decimal keeps every digit while we split constants into float parts.
_PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494")


def _split(value: Decimal, np_type: type, parts: int) -> tuple[float, ...]:
    """Split `value` into `parts` numbers of type `np_type` whose exact sum is `value` + tiny.

    Each part is the nearest representable number to what the earlier parts left over,
    so c1 + c2 + c3 carries about three times the precision of one float.
    """
    result = []
    with localcontext() as context:
        context.prec = 60
        for _ in range(parts):
            part = np_type(float(value))
            result.append(float(part))
            value -= Decimal(float(part))
    return tuple(result)


def _ln2() -> Decimal:
    with localcontext() as context:
        context.prec = 60
        return Decimal(2).ln()


def _widen(element: ir.Type, lanes: int) -> ir.Type:
    return element if lanes == 1 else ir.VectorType(element, lanes)


class _Precision:
    """Everything the emitters need to know about one floating-point type."""

    def __init__(self, ir_type: ir.Type, np_type: type, int_bits: int, mantissa_bits: int):
        self.ir_type = ir_type
        self.int_type = ir.IntType(int_bits)  # same width, for reading the exponent bits
        self.mantissa_bits = mantissa_bits  # stored fraction bits: 23 or 52
        self.exponent_bias = 127 if int_bits == 32 else 1023
        self.smallest_normal = float(np.finfo(np_type).tiny)
        with localcontext() as context:
            context.prec = 60
            self.half_pi = _split(_PI / 2, np_type, parts=3)
            self.ln2 = _split(_ln2(), np_type, parts=2)


PRECISIONS = {
    "float": _Precision(F32, np.float32, int_bits=32, mantissa_bits=23),
    "double": _Precision(F64, np.float64, int_bits=64, mantissa_bits=52),
}

# Taylor coefficients (trig.py has sin's and cos's). Each series is cut where the first dropped
# term, at the edge of the reduced range, is below a quarter ulp (float: 2^-26 = 1.5e-8,
# double: 2^-55 = 2.8e-17).
#   exp(r) = sum r^k/k!, |r| <= ln2/2:            float to r^7  (r^8/8! = 5.3e-9),
#                                                 double to r^13 (r^14/14! = 4.2e-18)
#   log(1+f) = 2s + s*z*L(z), s = f/(2+f), z = s^2 <= 0.0295, L(z) = 2/3 + 2z/5 + ...:
#                                                 float to s^9  (relative z^5/11 = 2.0e-9),
#                                                 double to s^21 (relative z^11/23 = 6.3e-19)
_EXP_TERMS = {"float": 8, "double": 14}  # 1/0!, 1/1!, 1/2!, ...
_LOG_TERMS = {"float": 4, "double": 10}  # coefficients of L: 2/3, 2/5, 2/7, ...


def _exp_series(n: int) -> list[float]:
    return [1 / math.factorial(k) for k in range(n)]


def _log_series(n: int) -> list[float]:
    return [2 / (2 * k + 1) for k in range(1, n + 1)]


class Emitter:
    """An IRBuilder that speaks in math: `m.fma(a, b, c)`, `m.horner(z, coefficients)`.

    With `lanes` > 1 every value is a vector of that many elements (`<8 x float>`) and the
    same calls emit vector instructions: trig.py writes sin's vector variants this way.
    """

    def __init__(self, builder: ir.IRBuilder, precision: _Precision, lanes: int = 1):
        self.builder = builder
        self.p = precision
        self.lanes = lanes
        self.type = _widen(precision.ir_type, lanes)
        self.int_type = _widen(precision.int_type, lanes)

    def in_precision(self, name: str) -> Emitter:
        """An emitter for the same number of lanes in another precision ('float', 'double')."""
        return Emitter(self.builder, PRECISIONS[name], self.lanes)

    def const(self, value: float) -> ir.Constant:
        return ir.Constant(self.type, value)  # a vector constant repeats it in every lane

    def int_const(self, value: int) -> ir.Constant:
        return ir.Constant(self.int_type, value)

    def _intrinsic(self, name: str, *args: ir.Value) -> ir.Value:
        # Intrinsics are named after their type: llvm.fma.f32, llvm.fma.v8f32.
        element = self.p.ir_type.intrinsic_name
        full_name = f"{name}.{element}" if self.lanes == 1 else f"{name}.v{self.lanes}{element}"
        module = self.builder.module
        fn = module.globals.get(full_name)
        if fn is None:
            signature = ir.FunctionType(self.type, [self.type] * len(args))
            fn = ir.Function(module, signature, full_name)
        return self.builder.call(fn, args)

    # Arithmetic, each rounded once (no fast-math flags: the reductions rely on exact IEEE).
    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.builder.fadd(a, b)

    def sub(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.builder.fsub(a, b)

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.builder.fmul(a, b)

    def div(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.builder.fdiv(a, b)

    def neg(self, a: ir.Value) -> ir.Value:
        return self.builder.fneg(a)

    def fma(self, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
        """a*b + c with a single rounding."""
        return self._intrinsic("llvm.fma", a, b, c)

    def rint(self, a: ir.Value) -> ir.Value:
        """Round to the nearest integer (ties to even); one instruction on x86 and NVPTX."""
        return self._intrinsic("llvm.rint", a)

    def floor(self, a: ir.Value) -> ir.Value:
        return self._intrinsic("llvm.floor", a)

    def fabs(self, a: ir.Value) -> ir.Value:
        return self._intrinsic("llvm.fabs", a)

    def copysign(self, magnitude: ir.Value, sign: ir.Value) -> ir.Value:
        """|magnitude| with the sign bit of `sign`."""
        return self._intrinsic("llvm.copysign", magnitude, sign)

    def sqrt(self, a: ir.Value) -> ir.Value:
        """The correctly rounded square root; one instruction, NaN for a < 0."""
        return self._intrinsic("llvm.sqrt", a)

    def clamp(self, a: ir.Value, low: float, high: float) -> ir.Value:
        """min(max(a, low), high); NOTE: a NaN comes out as a number (callers restore it)."""
        return self._intrinsic(
            "llvm.minnum", self._intrinsic("llvm.maxnum", a, self.const(low)), self.const(high)
        )

    def horner(self, z: ir.Value, coefficients: Sequence[float]) -> ir.Value:
        """c0 + z*(c1 + z*(c2 + ...)), one fma per coefficient."""
        result = self.const(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            result = self.fma(result, z, self.const(c))
        return result

    # Comparisons are ordered: false whenever an operand is NaN.
    def cmp(self, op: str, a: ir.Value, b: ir.Value | float) -> ir.Value:
        if isinstance(b, (int, float)):
            b = self.const(b)
        return self.builder.fcmp_ordered(op, a, b)

    def select(self, condition: ir.Value, a: ir.Value, b: ir.Value | float) -> ir.Value:
        if isinstance(b, (int, float)):
            b = self.const(b)
        return self.builder.select(condition, a, b)

    def either(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.builder.or_(a, b)

    def power_of_two(self, n: ir.Value) -> ir.Value:
        """2^n for an integer n in the normal exponent range, built from its exponent bits."""
        biased = self.builder.add(n, self.int_const(self.p.exponent_bias))
        bits = self.builder.shl(biased, self.int_const(self.p.mantissa_bits))
        return self.builder.bitcast(bits, self.type)


# -- exp ---------------------------------------------------------------------------------------


def _emit_exp(m: Emitter, x: ir.Value) -> ir.Value:
    """exp(x) = 2^n * exp(r), n = rint(x / ln2), r = x - n*ln2, |r| <= ln2/2."""
    p = m.p
    # Clamp just past where exp overflows (x > log of the largest float, 2^(bias+1)): that
    # keeps n small, and the final multiplications still produce the inf. Below where exp
    # underflows to 0 (x < log of half the smallest subnormal, 2^-(bias+mantissa_bits)) the
    # answer is selected, not computed: multiplications that underflow take a slow microcode
    # path on x86 (~100 cycles a lane), and a causal mask's -inf sends half a softmax there.
    high = (p.exponent_bias + 1) * math.log(2.0) + 0.5
    low = -(p.exponent_bias + p.mantissa_bits + 2) * math.log(2.0) - 0.5
    underflow = m.cmp("<", x, low)
    clamped = m.clamp(m.select(underflow, m.const(0.0), x), low, high)
    n = m.rint(m.mul(clamped, m.const(1 / math.log(2.0))))
    r = m.fma(n, m.const(-p.ln2[0]), clamped)
    r = m.fma(n, m.const(-p.ln2[1]), r)
    exp_r = m.horner(r, _exp_series(_EXP_TERMS[str(m.type)]))
    # 2^n in two halves, so that 2^-150 (a float subnormal result) or 2^128 (an overflow) is
    # reached through two normal powers of two and rounds once, at the last multiplication.
    n_int = m.builder.fptosi(n, m.int_type)
    half = m.builder.ashr(n_int, m.int_const(1))
    rest = m.builder.sub(n_int, half)
    result = m.mul(m.mul(exp_r, m.power_of_two(half)), m.power_of_two(rest))
    result = m.select(underflow, m.const(0.0), result)
    return m.select(m.cmp("uno", x, x), x, result)  # exp(nan) = nan


# -- log ---------------------------------------------------------------------------------------


def _emit_log(m: Emitter, x: ir.Value) -> ir.Value:
    """log(x) = e*ln2 + log(1 + f), x = (1 + f) * 2^e with 1 + f in [sqrt(1/2), sqrt(2))."""
    p, b = m.p, m.builder
    # A subnormal x has no implicit leading bit; scale it into the normal range first.
    subnormal = m.cmp("<", x, p.smallest_normal)
    x = m.select(subnormal, m.mul(x, m.const(2.0**p.mantissa_bits)), x)
    e_shift = b.select(subnormal, m.int_const(-p.mantissa_bits), m.int_const(0))
    # The bits are [sign | biased exponent | mantissa]: read e, and 1.mantissa in [1, 2).
    bits = b.bitcast(x, m.int_type)
    biased_exponent = b.lshr(bits, m.int_const(p.mantissa_bits))
    e = b.add(b.sub(biased_exponent, m.int_const(p.exponent_bias)), e_shift)
    mantissa_mask = (1 << p.mantissa_bits) - 1
    one_bits = p.exponent_bias << p.mantissa_bits  # the bits of 1.0
    mantissa_bits = b.or_(b.and_(bits, m.int_const(mantissa_mask)), m.int_const(one_bits))
    mantissa = b.bitcast(mantissa_bits, m.type)
    # Centre the mantissa on 1 so that the series below converges fastest.
    big = m.cmp(">", mantissa, math.sqrt(2.0))
    mantissa = m.select(big, m.mul(mantissa, m.const(0.5)), mantissa)
    e = b.select(big, b.add(e, m.int_const(1)), e)
    # log(1 + f) = 2 atanh(s) with s = f/(2+f): 2s + s*R(z), z = s^2, R = 2z/3 + 2z^2/5 + ...
    # Written as f - (f^2/2 - s*(f^2/2 + R)) because 2s = f - s*f: f is exact, and the
    # rounding errors all land in the small correction (fdlibm's arrangement).
    f = m.sub(mantissa, m.const(1.0))
    s = m.div(f, m.add(m.const(2.0), f))
    z = m.mul(s, s)
    r = m.mul(z, m.horner(z, _log_series(_LOG_TERMS[str(m.type)])))
    half_f_squared = m.mul(m.mul(f, f), m.const(0.5))
    log_1_plus_f = m.sub(f, m.sub(half_f_squared, m.mul(s, m.add(half_f_squared, r))))
    e_float = b.sitofp(e, m.type)
    ln2_high, ln2_low = p.ln2
    result = m.fma(e_float, m.const(ln2_high), m.fma(e_float, m.const(ln2_low), log_1_plus_f))
    result = m.select(m.cmp("==", x, math.inf), x, result)  # log(inf) = inf
    result = m.select(m.cmp("==", x, 0.0), m.const(-math.inf), result)  # log(+-0) = -inf
    return m.select(m.cmp(">=", x, 0.0), result, math.nan)  # log(x < 0) = log(nan) = nan


# -- pow with a constant exponent --------------------------------------------------------------

# Integer powers up to this become multiplications. Each multiplication rounds and each
# squaring doubles the error before it, so x^n by squaring is good to ~|n| ulp; exp(n*log|x|)
# is good to ~|n*log x| ulp, at most ~709 for any finite result: the better one for large n.
_MAX_SQUARED_EXPONENT = 64


def power(builder: ir.IRBuilder, x: ir.Value, exponent: float) -> ir.Value:
    """x ** exponent for a constant exponent, with numpy's answers for every x.

        integral n, |n| <= 64:  repeated squaring, x^13 = x^8 * x^4 * x (1/x^|n| for n < 0)
        0.5:                    sqrt(x)
        -0.5:                   1 / sqrt(x)
        anything else:          exp(c * log x), NaN for x < 0 unless c is integral

    float32 is computed in float64 and rounded once at the end, so neither the squarings nor
    the exp/log can cost float32 accuracy (x^-1, x^0, x^1 and x^2 round at most once anyway,
    and stay in float32).
    """
    m = Emitter(builder, PRECISIONS[str(x.type)])
    if exponent in (-1, 0, 1, 2):
        return _integer_power(m, x, int(exponent))  # one rounding at most, in any precision
    if m.type == F32:
        # The exponent is a float32 too, as in numpy and the interpreter: 1/3 is 0.33333334.
        wide = power(builder, builder.fpext(x, F64), float(np.float32(exponent)))
        return builder.fptrunc(wide, F32)
    if exponent == 0.5:
        return m.sqrt(x)  # numpy's power does the same (so x = -0.0 gives -0.0, not C's +0.0)
    if exponent == -0.5:
        return _reciprocal_sqrt(m, x)
    if float(exponent).is_integer() and abs(exponent) <= _MAX_SQUARED_EXPONENT:
        return _integer_power(m, x, int(exponent))
    if float(exponent).is_integer():
        # x^n = |x|^n, negated for odd n and x < 0 (copysign also gets -0.0 right).
        magnitude = _exp_log_power(m, m.fabs(x), exponent)
        return m.copysign(magnitude, x) if int(exponent) % 2 else magnitude
    result = _exp_log_power(m, x, exponent)  # log(x < 0) is NaN, as numpy wants
    # ... except at x = -inf, where numpy (as C's pow) gives inf for c > 0 and 0 for c < 0.
    at_minus_inf = m.const(math.inf if exponent > 0 else 0.0)
    return m.select(m.cmp("==", x, -math.inf), at_minus_inf, result)


def _reciprocal_sqrt(m: Emitter, x: ir.Value) -> ir.Value:
    """x^-0.5 as 1 / sqrt(x): two correctly rounded operations, for layernorm's and RMSNorm's
    `rsqrt(var + eps)` once per row, where exp(-0.5 * log x) took ~5x the instructions and a
    chain of ~150 cycles that the row's next loop waited for. +0.0 is added first because
    numpy's (-0.0)^-0.5 is +inf (1 / sqrt(-0.0) = -inf); and its (-inf)^-0.5 is 0."""
    result = m.div(m.const(1.0), m.sqrt(m.add(x, m.const(0.0))))
    return m.select(m.cmp("==", x, -math.inf), m.const(0.0), result)


def _integer_power(m: Emitter, x: ir.Value, n: int) -> ir.Value:
    """x^n by repeated squaring: multiply in x^(2^k) for every bit k set in |n|; for n < 0,
    1 / x^|n|, or (1/x)^|n| where x^|n| overflows but x^n is a subnormal."""
    if n >= -1:
        return _squarings(m, x, n)
    direct = _squarings(m, x, n)  # 1 / x^|n|: rounds 1/x once, at the end
    # (1/x)^|n| would round 1/x first and raise its error to the |n|th power, but when x^|n|
    # is inf it is the only way to reach a subnormal result instead of 0 (x = 1e45, n = -7).
    small = _squarings(m, m.div(m.const(1.0), x), -n)
    overflowed = m.cmp("==", m.fabs(_squarings(m, x, -n)), math.inf)
    return m.select(overflowed, small, direct)


def _squarings(m: Emitter, x: ir.Value, n: int) -> ir.Value:
    """x^n by repeated squaring: multiply in x^(2^k) for every bit k set in |n| (1/x^|n| for
    n < 0)."""
    result = None
    square = x  # x^(2^k)
    bits = abs(n)
    while bits:
        if bits & 1:
            result = square if result is None else m.mul(result, square)
        bits >>= 1
        if bits:
            square = m.mul(square, square)
    if result is None:
        return m.const(1.0)  # x^0 = 1, even for NaN
    return m.div(m.const(1.0), result) if n < 0 else result


def _exp_log_power(m: Emitter, x: ir.Value, c: float) -> ir.Value:
    """exp(c * log x): inf and 0 at the ends come out of exp and log's own special cases."""
    log = m.builder.call(math_function(m.builder.module, "log", m.type), [x])
    return m.builder.call(math_function(m.builder.module, "exp", m.type), [m.mul(log, m.const(c))])


_EMITTERS: dict[str, Callable[[Emitter, ir.Value], ir.Value]] = {
    "exp": _emit_exp,
    "log": _emit_log,
}


def math_function(module: ir.Module, name: str, ir_type: ir.Type) -> ir.Function:
    """The function `minitorch.<name>.<type>` (exp or log) in `module`, made once.

    Call it like any function; the optimizer inlines it into the loop and vectorizes it:

        fn = math_function(module, "exp", ir.FloatType())
        builder.call(fn, [x])
    """
    return define_function(module, name, ir_type, _EMITTERS[name])


# [Note: plain trig]
# With config.exact_trig off, sin and cos are LLVM's own `llvm.sin` and `llvm.cos`, which the
# x86 backend turns into calls of libm's sinf/sin and cosf/cos (or one sincosf where a kernel
# takes both of one value): right for every argument, huge ones too, as libm is, and numpy
# agrees with libm to within an ulp or two. The price is [Note: why not llvm.sin]: one scalar
# call per element, so a kernel with a sin in it does not vectorize (a few times slower).
# In return a kernel is one body and the generated IR a few lines: what the extra adds, the
# fast path's polynomial, the huge-argument flag and a second body, is trig.py's.
def libm_function(module: ir.Module, name: str, ir_type: ir.Type) -> ir.Function:
    """The intrinsic `llvm.<name>.<type>` (sin or cos) in `module`: libm's, when exact_trig
    is off ([Note: plain trig])."""
    return module.declare_intrinsic(f"llvm.{name}", [ir_type])


def unary_function(
    module: ir.Module, fn_name: str, ir_type: ir.Type, attribute: str
) -> ir.Function:
    """A new internal function `fn_name` from `ir_type` to `ir_type` in `module`, with
    `attribute`; its body is the caller's to emit."""
    fn = ir.Function(module, ir.FunctionType(ir_type, [ir_type]), fn_name)
    fn.linkage = "internal"
    fn.attributes.add(attribute)
    return fn


def define_function(
    module: ir.Module, name: str, ir_type: ir.Type, emit: Callable[[Emitter, ir.Value], ir.Value]
) -> ir.Function:
    """The function `minitorch.<name>.<type>` whose body is `emit(m, x)`, made once per module:
    internal and `alwaysinline`, so it costs no call (activations.py makes its own this way)."""
    fn_name = f"minitorch.{name}.{ir_type}"
    if fn_name in module.globals:
        return module.globals[fn_name]
    fn = unary_function(module, fn_name, ir_type, "alwaysinline")
    builder = ir.IRBuilder(fn.append_basic_block("entry"))
    emitter = Emitter(builder, PRECISIONS[str(ir_type)])
    builder.ret(emit(emitter, fn.args[0]))
    return fn
