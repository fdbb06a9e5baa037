"""ops.rand in LLVM: the counter-based generator of minitorch/counter_rng.py, in i64 instructions.

    %z = mix(mix(seed) + counter * GOLDEN)          ; add and mul wrap around, as numpy's uint64
    %u = uitofp(lshr %z, 11) * 2**-53               ; 53 random bits: a double in [0, 1)

Each step is one integer instruction, the same on every lane, so a loop of them vectorizes,
and the bits are those eager mode computes with numpy ([Note: counter-based random numbers]).
"""

from __future__ import annotations

from llvmlite import ir

from codegen.llvm.loops import I64
from codegen.llvm.mathlib import F64
from minitorch import counter_rng


def _constant(value: int) -> ir.Constant:
    """A 64-bit pattern (an unsigned constant of minitorch/counter_rng.py) as an i64."""
    return ir.Constant(I64, counter_rng.as_int64(value))


def _mix(builder: ir.IRBuilder, z: ir.Value) -> ir.Value:
    """splitmix64's finalizer: xor-shift, multiply, twice, and a last xor-shift."""
    for shift, multiplier in ((30, counter_rng.MIX_1), (27, counter_rng.MIX_2)):
        z = builder.xor(z, builder.lshr(z, _constant(shift)))
        z = builder.mul(z, _constant(multiplier))
    return builder.xor(z, builder.lshr(z, _constant(31)))


def uniform(builder: ir.IRBuilder, seed: ir.Value, counter: ir.Value) -> ir.Value:
    """A double in [0, 1) from two i64 registers: minitorch.counter_rng.uniform, bit for bit."""
    stream = builder.add(_mix(builder, seed), builder.mul(counter, _constant(counter_rng.GOLDEN)))
    bits = builder.lshr(_mix(builder, stream), _constant(11))
    return builder.fmul(builder.uitofp(bits, F64), ir.Constant(F64, 2.0**-53), name="rand")
