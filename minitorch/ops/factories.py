"""The op table, the factories: tensors made from a shape and numbers, with no tensor input.

See [Note: the op table] in registry.py. `minitorch.zeros(2, 3)` checks its arguments and calls
`ops.full((2, 3), 0, dtype=float32)` (minitorch/factories.py), so that a factory inside
compiled code is an op like any other: capture records it, AOT autograd traces it into the
graph, and the compiler lowers it (`full`: a constant in every element) or runs it as an
extern kernel. Were they plain numpy calls, a trace would bake the tensor they made into the
graph as a constant, and a random tensor would be drawn once, when compiling.

Why each op is one:
- full: every element one value; zeros, ones and empty are its calls (empty's values are
  unspecified: zeros is one choice of them).
- arange: start + i * step; an index expression once the loop IR has one (an extern kernel
  until then).
- uniform, normal, randint: randomness, drawn from the generator `minitorch.manual_seed`
  seeds, in the order the program asks for them, compiled or not (kind 'random': never merged
  or folded by the graph passes). `rand` is uniform(0, 1), `randn` normal(0, 1); other bounds
  and spreads exist so that a sample can pin the values (uniform(2, 2) is all 2s).
"""

from __future__ import annotations

import math

from minitorch.dtype import DType
from minitorch.ops.meta import check_dtype, check_sizes
from minitorch.ops.registry import OpDef, TensorMeta, register

__all__ = ["full", "arange", "uniform", "normal", "randint"]  # the ops this family registers


def _shaped(op: str):
    """The rule of a factory: the shape it is asked for, and its dtype."""

    def meta(size, *numbers, dtype: DType, generator=None) -> TensorMeta:
        return TensorMeta(
            check_sizes(f"{op}()", size, new_tensor=True), check_dtype(f"{op}()", dtype)
        )

    return meta


def _arange_meta(start, end, step, *, dtype: DType) -> TensorMeta:
    """ceil((end - start) / step) elements: exact for integers, as numpy counts them."""
    if all(isinstance(v, int) for v in (start, end, step)):
        n = -((start - end) // step)
    else:
        n = math.ceil((end - start) / step)
    return TensorMeta((max(n, 0),), check_dtype("arange()", dtype))


def _generator(generator=None):
    """The numpy stream to draw from: a `minitorch.Generator`'s own (`generator=`), else the one
    `manual_seed` replaces, read at each draw, never kept."""
    from minitorch import factories

    return factories._generator if generator is None else generator._rng


def _uniform_impl(xp, size, low, high, *, dtype: DType, generator=None):
    # rand's draws, unchanged for (0, 1)
    draws = _generator(generator).random(tuple(size))
    if (low, high) != (0, 1):
        draws = low + (high - low) * draws
    return draws.astype(dtype.np)


def _normal_impl(xp, size, mean, std, *, dtype: DType, generator=None):
    # randn's draws, unchanged for (0, 1)
    draws = _generator(generator).standard_normal(tuple(size))
    if (mean, std) != (0, 1):
        draws = mean + std * draws
    return draws.astype(dtype.np)


def _randint_impl(xp, size, low, high, *, dtype: DType, generator=None):
    return _generator(generator).integers(low, high, size=tuple(size)).astype(dtype.np)


def _arange_impl(xp, start, end, step, *, dtype: DType):
    return xp.arange(start, end, step).astype(dtype.np)


full = register(
    OpDef(
        "full",
        "factory",
        _shaped("full"),
        impl=lambda xp, size, fill_value, *, dtype: xp.full(tuple(size), fill_value, dtype.np),
        lowering="lowered",
    )
)
arange = register(OpDef("arange", "factory", _arange_meta, impl=_arange_impl, lowering="lowered"))
uniform = register(OpDef("uniform", "random", _shaped("uniform"), impl=_uniform_impl))
normal = register(OpDef("normal", "random", _shaped("normal"), impl=_normal_impl))
randint = register(OpDef("randint", "random", _shaped("randint"), impl=_randint_impl))
