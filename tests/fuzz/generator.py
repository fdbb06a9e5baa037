"""Random programs: statements drawn from templates, each kept only if eager mode accepts it.

A generator that knows every op's shape and dtype rules would be a second copy of the op table.
This one guesses instead, and asks eager mode: it runs the program as it grows, on real input
tensors, and a candidate statement that raises (a transpose of a 1-d tensor, `mean` of
integers, an in-place op on a leaf that requires grad) is thrown away. What is left is a
program that eager runs, so a difference from eager is the compiler's fault. (Run later at
other sizes, a program may raise after all; then the compiled one must raise the same error.)

The templates (`templates.py`) are the op families the compiler claims: pointwise math,
comparisons and `where`, reductions over random dims, views, in-place ops on inputs,
intermediates and views, graph breaks, Python control flow on shapes and on values; and the
idioms of real models: integer and bool intermediates (masks, casts, counts), `max(dim)`'s named
tuple, factories inside the function, advanced indexing reads and writes, `cat`/`split`/`gather`/
`roll`, softmax, cross-entropy over int64 targets and dropout, normalizations written out
as several reductions with pointwise math between them (softmax, layernorm), and the heavy ops:
products (`@`, `mm`, `bmm`, `F.linear`, `einsum`, on views with odd strides, with work before
and after), convolutions and pooling, and attention (written out, masked and causal, and
`F.scaled_dot_product_attention`). The inputs are
float, integer or bool tensors, a float program sometimes with an integer or bool input beside
its floats.
"""

from __future__ import annotations

import re

import numpy as np

import minitorch
from tests.fuzz import templates
from tests.fuzz.fragile import Fragile
from tests.fuzz.program import FLOAT_DTYPES, GLOBALS, INT_DTYPES, Input, Program, make_input


def generate(seed: int, max_statements: int = 8) -> Program:
    """A random program, the same for the same seed: numpy's generator makes every choice."""
    rng = np.random.default_rng(seed)
    inputs = _random_inputs(rng)
    namespace: dict = {spec.name: make_input(spec, seed, k) for k, spec in enumerate(inputs)}
    body: list[str] = []
    for _ in range(int(rng.integers(1, max_statements + 1)) * 3):  # tries; some fail
        if len(body) >= max_statements:
            break
        statement = _random_statement(rng, namespace, f"t{len(body)}", f"u{len(body)}")
        if statement is not None and _runs(statement, namespace):
            body.append(statement)
    returns = _random_returns(rng, namespace)
    return Program(tuple(inputs), tuple(body), returns, seed)


def _random_inputs(rng: np.random.Generator) -> list[Input]:
    """1 to 3 inputs of ranks 0 to 3 that mostly broadcast with the first, mostly of its dtype.

    A float program sometimes takes an integer or bool input too, as a model takes labels,
    token ids or a mask beside its activations.
    """
    dtypes = FLOAT_DTYPES * 3 + INT_DTYPES + ("bool",)
    first_dtype = str(rng.choice(dtypes))
    grad = first_dtype in FLOAT_DTYPES and rng.random() < 0.35
    first = tuple(int(s) for s in rng.integers(1, 5, rng.integers(1, 4)))
    inputs = []
    for k in range(int(rng.integers(1, 4))):
        shape = first if k == 0 else _broadcastable(rng, first)
        dtype = first_dtype if k == 0 or rng.random() < 0.7 else str(rng.choice(dtypes))
        inputs.append(
            Input(
                "xyz"[k],
                shape,
                dtype,
                requires_grad=bool(grad and dtype in FLOAT_DTYPES and rng.random() < 0.7),
                transposed=bool(len(shape) >= 2 and rng.random() < 0.2),
            )
        )
    return inputs


def _broadcastable(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[int, ...]:
    """`shape`, its trailing dims, some dims set to 1, or (rarely) an unrelated shape."""
    choice = rng.random()
    if choice < 0.1:
        return tuple(int(s) for s in rng.integers(1, 5, rng.integers(0, 3)))
    if choice < 0.4:
        return shape[int(rng.integers(0, len(shape) + 1)) :]
    if choice < 0.6:
        return tuple(1 if rng.random() < 0.5 else s for s in shape)
    return shape


_KINDS = list(templates.KINDS)
_KIND_WEIGHTS = np.array(list(templates.KINDS.values())) / sum(templates.KINDS.values())


def _random_statement(
    rng: np.random.Generator, namespace: dict, fresh: str, other: str
) -> str | None:
    """One statement; `fresh` (and for some, `other`) the names it may bind."""
    tensors = [name for name, v in namespace.items() if isinstance(v, minitorch.Tensor)]
    # Recent values are the likely operands, so that programs are chains, not fans.
    weights = np.arange(1, len(tensors) + 1, dtype=float) ** 2
    a, b = (str(rng.choice(tensors, p=weights / weights.sum())) for _ in range(2))
    kind = str(rng.choice(_KINDS, p=_KIND_WEIGHTS))
    fill = _placeholders(rng, namespace[a], a, b)
    if kind == "break":
        return templates.BREAK
    if kind == "in_place":
        target = rng.choice(templates.TARGETS).format(**fill)
        return str(rng.choice(templates.IN_PLACE)).format(t=target, **fill)
    if kind in ("if", "for"):
        return _block(rng, kind, fill, fresh)
    if kind in templates.STATEMENTS:
        return str(rng.choice(templates.STATEMENTS[kind])).format(fresh=fresh, other=other, **fill)
    return f"{fresh} = " + str(rng.choice(templates.EXPRESSIONS[kind])).format(**fill)


def _block(rng: np.random.Generator, kind: str, fill: dict, fresh: str) -> str:
    """An `if` whose branches assign `fresh` differently, or a loop accumulating into it."""
    then, other = (str(rng.choice(templates.POINTWISE)).format(**fill) for _ in range(2))
    if kind == "if":
        condition = str(rng.choice(templates.CONDITIONS)).format(**fill)
        return f"if {condition}:\n    {fresh} = {then}\nelse:\n    {fresh} = {other}"
    a = fill["a"]
    return (
        f"{fresh} = {a} * 0\nfor i in range(min({a}.shape[0], 3)):\n"
        f"    {fresh} = {fresh} + {a}[i] * i"
    )


def _placeholders(rng: np.random.Generator, tensor: minitorch.Tensor, a: str, b: str) -> dict:
    ndim = max(tensor.ndim, 1)
    dims = [int(d) for d in rng.choice(ndim, int(rng.integers(1, ndim + 1)), replace=False)]
    negative = rng.random() < 0.3
    return {
        "a": a,
        "b": b,
        "d": int(rng.integers(0, ndim)) - (ndim if negative else 0),
        "e": int(rng.integers(0, ndim)),
        "i": int(rng.integers(0, max(tensor.shape[0] if tensor.ndim else 1, 1))),
        "j": int(rng.integers(0, max(tensor.shape[-1] if tensor.ndim else 1, 1))),
        "k": bool(rng.random() < 0.5),
        "dims": tuple(dims),
        "perm": tuple(int(d) for d in rng.permutation(tensor.ndim)),
        "all_dims": ", -1" * tensor.ndim,  # expand's sizes: each dim kept
    }


def _runs(statement: str, namespace: dict) -> bool:
    """Does eager mode run `statement`? If it does, `namespace` holds the names it bound."""
    trial = dict(namespace)  # a block that fails half-way binds nothing
    minitorch.manual_seed(0)  # dropout's values, and so what the next statements see, repeat
    fragile = Fragile()  # an answer decided by rounding: see fragile.py
    try:
        with np.errstate(all="ignore"), fragile:
            exec(statement, dict(GLOBALS), trial)  # noqa: S102
    except Exception:
        return False
    if fragile.found:
        return False
    if any(_cast_of_nan(trial[name]) for name in trial if trial[name] is not namespace.get(name)):
        return False
    if _casts_non_finite(statement, namespace):
        return False
    namespace.update(trial)
    return True


_CASTS = re.compile(r"\.(long|int)\(\)|minitorch\.int(32|64)\b")
_NAMES = re.compile(r"\b[a-z]\w*\b")


def _casts_non_finite(statement: str, namespace: dict) -> bool:
    """Might `statement` cast a NaN or an infinity to an integer, where the result does not
    show it (`t.long().clamp(-2, 2)` turns numpy's minimum into -2)? It does if it casts at all
    and a float tensor it names holds one: an undefined cast, as in `_cast_of_nan`."""
    if not _CASTS.search(statement):
        return False
    named = (namespace.get(name) for name in set(_NAMES.findall(statement)))
    return any(
        isinstance(t, minitorch.Tensor)
        and t.dtype.is_floating_point
        and not np.isfinite(t.detach().numpy()).all()
        for t in named
    )


def _cast_of_nan(value: object) -> bool:
    """Does integer tensor `value` hold an integer type's minimum: what numpy makes of a NaN or
    an infinity cast to an integer (int32's, also once summed into an int64)? PyTorch leaves
    that cast undefined (LLVM's is poison), so a program that makes one tests nothing."""
    if not isinstance(value, minitorch.Tensor) or value.dtype not in _INT_DTYPES:
        return False
    return bool(np.isin(value.detach().numpy(), _INT_MINS).any())


_INT_DTYPES = (minitorch.int32, minitorch.int64)
_INT_MINS = [np.iinfo(np.int32).min, np.iinfo(np.int64).min]


def _random_returns(rng: np.random.Generator, namespace: dict) -> tuple:
    """The last value made, and perhaps another value or an input (an output may alias it)."""
    tensors = [name for name, v in namespace.items() if isinstance(v, minitorch.Tensor)]
    returns = [tensors[-1]]
    for _ in range(int(rng.integers(0, 3))):
        name = str(rng.choice(tensors))
        if name not in returns:
            returns.append(name)
    return tuple(returns)
