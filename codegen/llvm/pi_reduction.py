"""x mod pi/2, exactly, for every double: the slow path of sin and cos for huge arguments.

See [Note: sin and cos over the whole float range] in trig.py for why. The steps, for a finite
double x = m * 2^e (m a 53-bit integer, e its exponent):

1. 2/pi in binary is 0.101000101111100110000011011011100100111001000100000101010010...;
   the table `minitorch.two_over_pi` holds G = floor(2/pi * 2^1216) as twenty 64-bit words,
   least significant first (the top word is 0: it makes room for windows that start above
   the binary point).
2. x * 2/pi = m * 2^e * 2/pi, and mod 4 only the 192 bits of 2/pi worth 2^(1-e) down to
   2^(-190-e) count: a bit worth 2^(2-e) or more turns into a multiple of 4, and all the bits
   below the window add less than m * 2^(-190-e) * 2^e < 2^-137. `window` is those bits as
   an integer: three words cut out of four with funnel shifts (the window starts at any bit).
3. y = (m * window) >> 64 mod 2^128 is x * 2/pi mod 4 in fixed point, 126 bits after the
   point. All of it is integer arithmetic on i64 and i128, so nothing is rounded.
4. j mod 4 = the top two bits of y + 1/2, and f = y - j in [-1/2, 1/2); r = f * pi/2, with f
   turned into two doubles and pi/2 in two parts, so r keeps every bit a double can hold.
"""

from __future__ import annotations

from llvmlite import ir

from codegen.llvm.mathlib import F64, PRECISIONS, Emitter

I64 = ir.IntType(64)
I128 = ir.IntType(128)

_WORDS = 20  # 64-bit words of the table: 2/pi to 19 * 64 = 1216 bits after the point
_FRACTION_BITS = 126  # y's bits after the point (it has 2 before it: y < 4)
_WINDOW_BITS = 192  # the bits of 2/pi one x needs: 128 of y and 64 more below them
# e (x = m * 2^e, m a 53-bit integer) is clamped to the range this table serves: up to the
# largest double, down to 2^30 (smaller x take the fast path; see trig.py).
_MIN_E, _MAX_E = 30 - 52, 1023 - 52


def _arctan_of_inverse(n: int, bits: int) -> int:
    """atan(1/n) * 2^bits, to within a few units: the series 1/n - 1/(3n^3) + 1/(5n^5) - ..."""
    power = (1 << bits) // n  # 2^bits / n^(2k+1)
    total, k = 0, 0
    while power:
        term = power // (2 * k + 1)
        total += -term if k % 2 else term
        power //= n * n
        k += 1
    return total


def two_over_pi_bits(bits: int) -> int:
    """floor(2/pi * 2^bits), from Machin's pi = 16 atan(1/5) - 4 atan(1/239).

    Computed with 64 guard bits, so the few units of error of the series stay far below the
    bits returned: two_over_pi_bits(4) == 10 (2/pi = 0.1010001... in binary).
    """
    guard = bits + 64
    pi = 16 * _arctan_of_inverse(5, guard) - 4 * _arctan_of_inverse(239, guard)  # pi * 2^guard
    return ((2 << (2 * guard)) // pi) >> 64


def _table(module: ir.Module) -> ir.GlobalVariable:
    """The constant array of 2/pi's words in `module`, made once."""
    name = "minitorch.two_over_pi"
    if name in module.globals:
        return module.globals[name]
    g = two_over_pi_bits(64 * (_WORDS - 1))
    words = [(g >> (64 * i)) & (2**64 - 1) for i in range(_WORDS)]
    # LLVM reads i64 constants as signed: write the words with the top bit set as negatives.
    signed = [w - 2**64 if w >= 2**63 else w for w in words]
    array_type = ir.ArrayType(I64, _WORDS)
    table = ir.GlobalVariable(module, array_type, name)
    table.linkage = "internal"
    table.global_constant = True
    table.initializer = ir.Constant(array_type, signed)
    return table


def reduce_exactly(m: Emitter, x: ir.Value) -> tuple[ir.Value, ir.Value]:
    """r, q (doubles) with x = j*(pi/2) + r, |r| <= pi/4, q = j mod 4, for |x| > 2^30.

    Other x give some finite r and q without reading outside the table (the caller keeps the
    fast path's answer for them, and NaN for inf).
    """
    b = m.builder
    bits = b.bitcast(m.fabs(x), I64)
    mantissa = b.or_(b.and_(bits, _i64(2**52 - 1)), _i64(2**52))  # m: the implicit 1 added
    e = _clamp(b, b.sub(b.lshr(bits, _i64(52)), _i64(1023 + 52)), _MIN_E, _MAX_E)
    low, middle, high = _window(b, e)
    # (m * window) >> 64 mod 2^128, as m*high << 64 + m*middle + (m*low >> 64): each product
    # of a 53-bit and a 64-bit number is exact in 128 bits, and the sum wraps mod 2^128.
    m128 = _wide(b, mantissa)
    y = b.shl(b.mul(m128, _wide(b, high)), _i128(64))
    y = b.add(y, b.mul(m128, _wide(b, middle)))
    y = b.add(y, b.lshr(b.mul(m128, _wide(b, low)), _i128(64)))
    # Add 1/2: the top two bits are then rint(y) mod 4 = j mod 4, and the rest, less 1/2, f.
    half = 1 << (_FRACTION_BITS - 1)
    rounded = b.add(y, _i128(half))
    j = b.trunc(b.lshr(rounded, _i128(_FRACTION_BITS)), I64)
    f = b.sub(b.and_(rounded, _i128(2 * half - 1)), _i128(half))  # signed, |f| <= 2^125
    r = _times_half_pi(m, f)
    # sin(-x) = -sin(x): for x < 0, -x = j*(pi/2) + r gives x = (-j)*(pi/2) + (-r).
    negative = m.cmp("<", x, 0.0)
    r = m.select(negative, m.neg(r), r)
    j = b.select(negative, b.neg(j), j)
    q = b.uitofp(b.and_(j, _i64(3)), F64)
    return r, q


def _window(b: ir.IRBuilder, e: ir.Value) -> list[ir.Value]:
    """[low, middle, high]: the 192 bits of the table from bit 1216 - 190 - e upwards."""
    start = b.sub(_i64(64 * (_WORDS - 1) - (_WINDOW_BITS - 2)), e)  # its lowest bit in G
    first_word = b.lshr(start, _i64(6))
    offset = b.and_(start, _i64(63))
    table = _table(b.module)
    words = []
    for k in range(4):
        address = b.gep(table, [_i64(0), b.add(first_word, _i64(k))], inbounds=True)
        words.append(b.load(address, typ=I64))
    # fshr(high, low, s) = the low 64 bits of (high:low) >> s, for any s from 0 to 63.
    fshr = b.module.declare_intrinsic("llvm.fshr", [I64], ir.FunctionType(I64, [I64] * 3))
    return [b.call(fshr, [words[k + 1], words[k], offset]) for k in range(3)]


def _times_half_pi(m: Emitter, f: ir.Value) -> ir.Value:
    """f * 2^-126 * pi/2 as a double, for a signed i128 f: f is split into a rounded high
    double and the exact rest, and pi/2 into two parts, so the product loses nothing."""
    b = m.builder
    negative = b.icmp_signed("<", f, _i128(0))
    magnitude = b.select(negative, b.neg(f), f)
    top = b.trunc(b.lshr(magnitude, _i128(64)), I64)  # < 2^61
    bottom = b.trunc(magnitude, I64)
    high = b.uitofp(top, F64)  # rounded to 53 bits ...
    dropped = b.sub(top, b.fptoui(high, I64))  # ... and what rounding dropped, |dropped| < 2^8
    rest = m.fma(b.sitofp(dropped, F64), m.const(2.0**64), b.uitofp(bottom, F64))
    high = m.mul(high, m.const(2.0 ** (64 - _FRACTION_BITS)))  # f = high + low, exactly
    low = m.mul(rest, m.const(2.0**-_FRACTION_BITS))  # ... but for low's last bit
    pi_1, pi_2, _ = PRECISIONS["double"].half_pi
    product = m.mul(high, m.const(pi_1))
    error = m.fma(high, m.const(pi_1), m.neg(product))  # high*pi_1 - product, exactly
    r = m.add(product, m.add(error, m.fma(high, m.const(pi_2), m.mul(low, m.const(pi_1)))))
    return m.select(negative, m.neg(r), r)


def _clamp(b: ir.IRBuilder, n: ir.Value, low: int, high: int) -> ir.Value:
    n = b.select(b.icmp_signed("<", n, _i64(low)), _i64(low), n)
    return b.select(b.icmp_signed(">", n, _i64(high)), _i64(high), n)


def _wide(b: ir.IRBuilder, n: ir.Value) -> ir.Value:
    return b.zext(n, I128)


def _i64(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


def _i128(value: int) -> ir.Constant:
    return ir.Constant(I128, value)
