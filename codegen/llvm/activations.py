"""tanh, sigmoid and erf (for gelu) as vectorizable IR, built from mathlib's exp and polynomials.

Like mathlib's functions they are straight-line IR (no branches: both sides of a `select` are
computed, and the loop vectorizer widens all of it):

    tanh x     x P(x^2) for |x| < 1/2 (its Taylor series); else sign(x) (1 - 2 / (e^2|x| + 1)),
               which cancels at most one bit there
    sigmoid x  e^min(x, 0) / (1 + e^-|x|): e^-|x| <= 1 never overflows, and sigmoid(-700)
               keeps its digits
    erf x      the series 2/sqrt(pi) x e^-x^2 sum_k (2x^2)^k / (1*3*...*(2k+1)) for |x| < 2;
               else 1 - erfc(|x|) from erfc's continued fraction (as a ratio of two
               polynomials: one division); odd in x. float32's: two fitted polynomials
               ([Note: erf for float32, fitted])

tanh and sigmoid compute in their own precision (float32 within ~2 ulp, 2.3x faster than
through double). erf computes in double and rounds once: in float32, e^-x^2 alone would carry
an error of x^2 ulp. These are the formulas of the eager kernels
(minitorch/ops/pointwise_kernels.py), so compiled and eager results agree to an ulp or two
(float32's erf is fitted, not the eager formula, but both round erf within an ulp).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from itertools import zip_longest

from llvmlite import ir

from codegen.llvm import mathlib
from codegen.llvm.mathlib import F32, F64, PRECISIONS, Emitter, define_function


def _tanh_series(n: int) -> list[float]:
    """Taylor coefficients of tanh x / x in powers of x^2: 1, -1/3, 2/15, -17/315, ...

    y = tanh x solves y' = 1 - y^2. Putting y = sum a_k x^(2k+1) in and matching the powers
    x^2k gives a_0 = 1 and (2k+1) a_k = -sum_{i+j=k-1} a_i a_j.
    """
    a = [Fraction(1)]
    for k in range(1, n):
        a.append(-sum(a[i] * a[k - 1 - i] for i in range(k)) / (2 * k + 1))
    return [float(c) for c in a]


# Terms that reach a quarter ulp at the edge |x| = 1/2 (each term is ~x^2 (2/pi)^2 = 0.1 of
# the last): double to x^33 (0.1^17 = 1e-17), float to x^17 (0.1^9 = 1e-9).
_TANH_SMALL = 0.5
_TANH_TERMS = {"float": 9, "double": 17}
# erf: series terms and continued-fraction levels, measured against math.erf.
_ERF_SERIES = [1 / math.prod(range(1, 2 * k + 2, 2)) for k in range(30)]  # 1 / (2k+1)!!
_ERF_TERMS = {"float": (20, 20), "double": (30, 40)}


def _emit_tanh(m: Emitter, x: ir.Value, accuracy: str) -> ir.Value:
    near_zero = m.mul(x, m.horner(m.mul(x, x), _tanh_series(_TANH_TERMS[accuracy])))
    e = _exp(m, m.mul(m.fabs(x), m.const(2.0)))
    far = m.copysign(m.sub(m.const(1.0), m.div(m.const(2.0), m.add(e, m.const(1.0)))), x)
    return m.select(m.cmp("<", m.fabs(x), _TANH_SMALL), near_zero, far)  # NaN goes far: NaN


def _emit_sigmoid(m: Emitter, x: ir.Value, accuracy: str) -> ir.Value:
    e = _exp(m, m.neg(m.fabs(x)))
    numerator = m.select(m.cmp(">=", x, 0.0), m.const(1.0), e)  # e^min(x, 0); NaN: e = NaN
    return m.div(numerator, m.add(m.const(1.0), e))


def _fraction_polynomials(depth: int) -> tuple[list[float], list[float]]:
    """erfc's continued fraction K = x + (1/2) / (x + (2/2) / (x + ...)), cut after `depth`
    levels, as one ratio of polynomials P(x) / Q(x): coefficients of P and of Q.

    The convergents of b0 + a1 / (b1 + a2 / (b2 + ...)) obey P_k = b_k P_k-1 + a_k P_k-2 (and
    Q likewise) from P_-1 = 1, P_0 = b0, Q_-1 = 0, Q_0 = 1; here b_k = x and a_k = k/2. Every
    coefficient is positive, so Horner's rule cancels nothing, and one division replaces
    `depth` of them.
    """

    def step(p: list[Fraction], p_before: list[Fraction], a: Fraction) -> list[Fraction]:
        out = [Fraction(0), *p]  # x * p
        for i, c in enumerate(p_before):
            out[i] += a * c
        return out

    p_before, p = [Fraction(1)], [Fraction(0), Fraction(1)]
    q_before, q = [Fraction(0)], [Fraction(1)]
    for k in range(1, depth + 1):
        p_before, p = p, step(p, p_before, Fraction(k, 2))
        q_before, q = q, step(q, q_before, Fraction(k, 2))
    return [float(c) for c in p], [float(c) for c in q]


def _emit_erf(m: Emitter, x: ir.Value, accuracy: str) -> ir.Value:
    if accuracy == "float":
        return _emit_erf_fitted(m, x)
    series_terms, fraction_depth = _ERF_TERMS[accuracy]
    ax = m.fabs(x)
    gauss = _exp(m, m.neg(m.mul(ax, ax)))  # e^(-x^2)
    u = m.mul(m.mul(ax, ax), m.const(2.0))
    series = m.horner(u, _ERF_SERIES[:series_terms])
    near = m.mul(m.mul(m.const(2 / math.sqrt(math.pi)), ax), m.mul(gauss, series))
    # erfc(x) = e^(-x^2) / sqrt(pi) / K(x). Past x = 6, erf is 1 in double (erfc(6) = 2e-17),
    # and clamping there keeps P(x) ~ x^(depth+1) finite.
    p, q = _fraction_polynomials(fraction_depth)
    clamped = m.clamp(ax, 0.0, 6.0)
    k = m.div(m.horner(clamped, p), m.horner(clamped, q))
    far = m.sub(m.const(1.0), m.div(gauss, m.mul(m.const(math.sqrt(math.pi)), k)))
    result = m.copysign(m.select(m.cmp("<", ax, 2.0), near, far), x)
    return m.select(m.cmp("uno", x, x), x, result)  # erf(NaN) = NaN (clamp made it a number)


# [Note: erf for float32, fitted]
# The series and the continued fraction above converge slowly near |x| = 2, where they meet:
# float32 needs 20 terms of each (two polynomials of degree 21, a division, in double), and a
# branchless kernel computes both sides for every element. GELU calls erf on every activation
# of a transformer's MLP, so float32's erf is two short polynomials fitted to it instead, each
# on the side of |x| = 1 where it is smooth and slowly varying:
#     |x| < 1:      erf x = x N(x^2)                          N of degree 7
#     1 <= |x| < 4: erf x = 1 - e^(-x^2) F((|x| - 5/2) / (3/2))  F of degree 13, |x| clamped
# Both are Chebyshev interpolants (below), within 1e-9 of the function relatively (measured:
# N 4e-11, F 1.1e-9); computed in double and rounded once, the result stays within 0.51 ulp
# of erf in float32 (tests/codegen/test_activations.py). Past |x| = 4, erfc < 1.6e-8 is under half
# an ulp of 1, so the clamped formula rounds to 1 as erf does. float64 keeps the formulas above.


def _chebyshev_interpolant(f: Callable[[float], float], degree: int) -> list[float]:
    """The polynomial of `degree` through f at the Chebyshev nodes of [-1, 1], as coefficients
    of powers of t: near the best polynomial of that degree for a smooth f, and computed in
    plain float arithmetic (no least squares), so every machine gets the same bits."""
    n = degree + 1
    angles = [math.pi * (k + 0.5) / n for k in range(n)]
    values = [f(math.cos(a)) for a in angles]
    chebyshev = [
        2 / n * math.fsum(v * math.cos(j * a) for v, a in zip(values, angles)) for j in range(n)
    ]
    chebyshev[0] /= 2
    basis = [[1.0], [0.0, 1.0]]  # T_0, T_1, ... in powers of t: T_j+1 = 2t T_j - T_j-1
    while len(basis) < n:
        twice = [0.0] + [2 * c for c in basis[-1]]
        basis.append([a - b for a, b in zip_longest(twice, basis[-2], fillvalue=0.0)])
    return [math.fsum(c * T[i] for c, T in zip(chebyshev, basis) if i < len(T)) for i in range(n)]


_ERF_NEAR = _chebyshev_interpolant(
    lambda t: math.erf(math.sqrt((t + 1) / 2)) / math.sqrt((t + 1) / 2), 7
)
_ERFC_FAR = _chebyshev_interpolant(
    lambda t: math.erfc(2.5 + 1.5 * t) * math.exp((2.5 + 1.5 * t) ** 2), 13
)


def _emit_erf_fitted(m: Emitter, x: ir.Value) -> ir.Value:
    ax = m.fabs(x)
    near = m.mul(ax, m.horner(m.sub(m.mul(m.mul(ax, ax), m.const(2.0)), m.const(1.0)), _ERF_NEAR))
    c = m.clamp(ax, 1.0, 4.0)
    gauss = _exp(m, m.neg(m.mul(c, c)))  # e^(-x^2)
    far = m.sub(
        m.const(1.0),
        m.mul(gauss, m.horner(m.mul(m.sub(c, m.const(2.5)), m.const(1 / 1.5)), _ERFC_FAR)),
    )
    result = m.copysign(m.select(m.cmp("<", ax, 1.0), near, far), x)
    return m.select(m.cmp("uno", x, x), x, result)  # erf(NaN) = NaN (clamp made it a number)


def _exp(m: Emitter, x: ir.Value) -> ir.Value:
    return m.builder.call(mathlib.math_function(m.builder.module, "exp", m.type), [x])


Emit = Callable[[Emitter, ir.Value, str], ir.Value]  # emit(m, x, accuracy): the body


def _in_own_precision(emit: Emit) -> Callable[[Emitter, ir.Value], ir.Value]:
    """emit(m, x, accuracy) in x's own type, with the terms that type's accuracy needs."""
    return lambda m, x: emit(m, x, "double" if m.type == F64 else "float")


def _in_double(emit: Emit) -> Callable[[Emitter, ir.Value], ir.Value]:
    """emit(m, x, accuracy) computed in double; a float x is widened and the result rounded
    once, with only as many terms as float's accuracy needs."""

    def emit_any(m: Emitter, x: ir.Value) -> ir.Value:
        if m.type == F64:
            return emit(m, x, "double")
        wide = Emitter(m.builder, PRECISIONS["double"])
        result = emit(wide, m.builder.fpext(x, F64), "float")
        return m.builder.fptrunc(result, F32)

    return emit_any


_EMITTERS = {
    "tanh": _in_own_precision(_emit_tanh),
    "sigmoid": _in_own_precision(_emit_sigmoid),
    "erf": _in_double(_emit_erf),
}


def math_function(module: ir.Module, name: str, ir_type: ir.Type) -> ir.Function:
    """The function `minitorch.<name>.<type>` (tanh, sigmoid or erf) in `module`, made once."""
    return define_function(module, name, ir_type, _EMITTERS[name])
