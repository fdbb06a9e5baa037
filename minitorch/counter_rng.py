"""Counter-based random numbers: dropout's mask as a pure function of (seed, offset, element).

[Note: counter-based random numbers]
A stream generator (numpy's PCG64, Mersenne Twister) makes its k-th number from the (k-1)-th:
to draw a mask in a compiled kernel, the kernel would have to carry the generator's state
through its loop, in order, on one thread. A *counter-based* generator (Salmon et al.,
"Parallel random numbers: as easy as 1, 2, 3", the idea behind Philox and JAX's keys)
makes the k-th number from k alone: a hash of (seed, counter). Any element, any thread, any
order, the same bits; so eager mode and a compiled kernel draw the *same* mask if they agree on
the seed and the counters. The state is two integers:

    seed      what minitorch.manual_seed set
    offset    how many numbers have been drawn since

and a draw of n numbers uses the counters offset, offset + 1, ..., offset + n - 1 and moves
offset on by n. The op table splits dropout's mask in the two halves a compiler needs:
`rng_state(x)` reads the state and reserves x.numel() counters (the only op with a side effect,
run where eager mode would run it), and `dropout_keep(x, p, state)` is pure: element k is kept
when uniform(seed, offset + k) >= p. The second one lowers to a loop (ops.rand in the loop IR).

The hash is splitmix64's output function (Steele, Lea and Flood, "Fast splittable
pseudorandom number generators", 2014), a bijection of 64-bit integers that mixes every bit
into every other, applied to the counter's place in a stream keyed by the mixed seed:

    uniform(seed, counter) = (mix(mix(seed) + counter * GOLDEN) >> 11) * 2**-53

53 random bits, so the result is a float64 in [0, 1) with no rounding; every backend computes
it with 64-bit integer arithmetic that wraps around, and gets the same bits.
"""

from __future__ import annotations

import numpy as np

GOLDEN = 0x9E3779B97F4A7C15  # 2**64 / the golden ratio: splitmix64's step between counters
MIX_1 = 0xBF58476D1CE4E5B9  # splitmix64's multipliers
MIX_2 = 0x94D049BB133111EB
_MASK = (1 << 64) - 1

_seed = 0  # the generator's state: see the Note
_offset = 0


def reset(seed: int) -> None:
    """Start over from `seed` (minitorch.manual_seed calls this): counters count from 0 again.

    NOTE: not PyTorch's `torch.random.manual_seed`, which seeds every generator: call
    minitorch.manual_seed."""
    global _seed, _offset
    _seed, _offset = seed & _MASK, 0


def advance(count: int) -> tuple[int, int]:
    """(seed, offset) for a draw of `count` numbers; the next draw starts after them."""
    global _offset
    start = _offset
    _offset = (_offset + count) & _MASK
    return _seed, start


def get_state() -> tuple[int, int]:
    """(seed, offset): what set_state puts back (the driver's trial runs of a graph do)."""
    return _seed, _offset


def set_state(state: tuple[int, int]) -> None:
    """Put back a (seed, offset) that get_state returned."""
    global _seed, _offset
    _seed, _offset = state


def as_int64(value: int) -> int:
    """A 64-bit pattern (0 <= value < 2**64) as the signed int64 holding the same bits."""
    return value - (1 << 64) if value >= 1 << 63 else value


def mix(xp, z):
    """splitmix64's finalizer on a uint64 array, in place (it wraps around, as i64 does)."""
    z ^= z >> xp.uint64(30)
    z *= xp.uint64(MIX_1)
    z ^= z >> xp.uint64(27)
    z *= xp.uint64(MIX_2)
    z ^= z >> xp.uint64(31)
    return z


def uniform(xp, seed, counter):
    """Floats in [0, 1), one per counter: the Note's formula, on int64 (or uint64) arrays."""
    with np.errstate(over="ignore"):
        key = mix(xp, xp.array(seed).astype(xp.uint64))  # the same bits, read unsigned
        z = xp.array(counter).astype(xp.uint64) * xp.uint64(GOLDEN)
        z += key
        z = mix(xp, z)
    z >>= xp.uint64(11)
    return z.astype(xp.float64) * 2.0**-53
