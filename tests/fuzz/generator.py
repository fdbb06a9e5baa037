"""Random programs: statements drawn from templates, each kept only if eager mode accepts it.

A generator that knows every op's shape and dtype rules would be a second copy of the op table.
This one guesses instead, and asks eager mode: it runs the program as it grows, on real input
tensors, and a candidate statement that raises (a transpose of a 1-d tensor, `mean` of
integers, an in-place op on a leaf that requires grad) is thrown away. What is left is a
program that eager runs, so a difference from eager is the compiler's fault. (Run later at
other sizes, a program may raise after all; then the compiled one must raise the same error.)

The templates are the op families of the issue: pointwise math, comparisons and `where`,
reductions over random dims, views, in-place ops on inputs, intermediates and views, graph
breaks, and Python control flow on shapes and on values.
"""

from __future__ import annotations

import numpy as np

import minitorch
from tests.fuzz.program import FLOAT_DTYPES, INT_DTYPES, Input, Program, make_input

# `{a}` and `{b}`: tensors of the program; `{d}`, `{e}`: dims of {a}; `{i}`: an index into dim 0
# of {a}; `{k}`: True or False; `{dims}`: a tuple of distinct dims of {a}; `{perm}`: a
# permutation of {a}'s dims; `{all_dims}`: `, -1` per dim of {a}.
POINTWISE = [
    "{a}.sin()", "minitorch.cos({a})", "{a}.exp()", "({a}.abs() + 1).log()", "{a}.tanh()",
    "{a}.sigmoid()", "{a}.relu()", "{a}.abs().sqrt()", "{a}.abs()", "-{a}", "{a}.neg()",
    "{a} ** 2", "{a}.pow(3)", "{a} * 0.5 + 1", "{a}.clamp(-0.5, 0.5)", "{a}.clamp(min=0)",
    "minitorch.clamp({a}, max=1)", "{a}.erf()", "{a}.reciprocal()", "({a} > 0).int()",
    "{a}.float()", "{a}.double()", "{a} * {a}.shape[{d}]", "{a} + len({a}.shape)",
    "{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / {b}", "{a} / ({b}.abs() + 1)",
    "minitorch.maximum({a}, {b})", "minitorch.minimum({a}, {b})", "{a} > {b}", "{a} == {b}",
    "minitorch.where({a} > {b}, {a}, {b})", "minitorch.where({a} < 0, {b}, 0.0)",
    "minitorch.add({a}, {b}, alpha=2)", "{a} - 1.5 * {b}", "{a}.masked_fill({b} > 0, 0.0)",
]
REDUCTIONS = [
    "{a}.sum()", "{a}.sum({d})", "{a}.sum(dim={dims}, keepdim={k})", "{a}.mean({d}, keepdim={k})",
    "{a}.mean()", "{a}.amax({d})", "{a}.amin(dim={dims}, keepdim={k})", "{a}.max()",
    "{a}.min()", "{a}.max({d}).values", "{a}.min({d}, keepdim={k})[0]", "{a}.max(dim={d})[1]",
    "{a}.argmax({d})", "{a}.argmin()", "{a}.var({d})", "{a}.softmax({d})",
    "{a}.log_softmax({d})", "minitorch.sum({a}, {d})",
]
VIEWS = [
    "{a}.reshape(-1)", "{a}.reshape({a}.shape[0], -1)", "{a}.view(-1)", "{a}.t()",
    "{a}.transpose({d}, {e})", "{a}.permute({perm})", "{a}.mT", "{a}[::2]", "{a}[1:]",
    "{a}[:, ::2]", "{a}[..., 1:3]", "{a}[{i}]", "{a}[-1]", "{a}[:, {i}]", "{a}[{i}, ..., ::-1]",
    "{a}.unsqueeze({d})", "{a}.squeeze()", "{a}.squeeze({d})", "{a}.expand(2{all_dims})",
    "{a}.expand_as({b})", "{a}.flatten()", "{a}.flatten(0, 1)", "{a}.contiguous()",
    "{a}.clone()", "{a}.detach()", "minitorch.cat([{a}, {b}], dim={d})",
    "minitorch.stack([{a}, {b}])", "{a} @ {b}",
]
# An in-place op's target: the tensor itself or a view of it, written through.
TARGETS = ["{a}", "{a}", "{a}[0]", "{a}[:, ::2]", "{a}.t()", "{a}[..., -1]", "{a}[{i}:]"]
IN_PLACE = [
    "{t}.add_({b})", "{t}.mul_(2)", "{t}.sub_({b}, alpha=0.5)", "{t}.div_(2)",
    "{t}.clamp_(-1, 1)", "{t}.copy_({b})", "{t}.fill_(0.5)", "{t}.zero_()", "{t} += {b}",
    "{t} *= 2", "{t} -= 1", "{a}[{i}] = {b}", "{a}[{i}] = 1", "{a}[:, ::2] = 0",
]
BREAK = 'print("", end="")'  # an untraceable call: the graph breaks there and resumes after
CONDITIONS = [
    "{a}.shape[0] > 2", "{a}.ndim == 2", "{a}.shape[-1] % 2 == 0", "{a}.numel() > 6",
    "{a}.sum() > 0",  # a tensor's value: compiled code branches on a graph output
]


def generate(seed: int, max_statements: int = 8) -> Program:
    """A random program, the same for the same seed: numpy's generator makes every choice."""
    rng = np.random.default_rng(seed)
    inputs = _random_inputs(rng)
    namespace: dict = {spec.name: make_input(spec, seed, k) for k, spec in enumerate(inputs)}
    body: list[str] = []
    for _ in range(int(rng.integers(1, max_statements + 1)) * 3):  # tries; some fail
        if len(body) >= max_statements:
            break
        statement = _random_statement(rng, namespace, f"t{len(body)}")
        if statement is not None and _runs(statement, namespace):
            body.append(statement)
    returns = _random_returns(rng, namespace)
    return Program(tuple(inputs), tuple(body), returns, seed)


def _random_inputs(rng: np.random.Generator) -> list[Input]:
    """1 to 3 inputs of one dtype, of ranks 0 to 3 that mostly broadcast with the first."""
    dtype = str(rng.choice(FLOAT_DTYPES * 3 + INT_DTYPES))
    grad = dtype in FLOAT_DTYPES and rng.random() < 0.35
    first = tuple(int(s) for s in rng.integers(1, 5, rng.integers(1, 4)))
    inputs = []
    for k in range(int(rng.integers(1, 4))):
        shape = first if k == 0 else _broadcastable(rng, first)
        inputs.append(Input("xyz"[k], shape, dtype, requires_grad=bool(grad and rng.random() < 0.7),
                            transposed=bool(len(shape) >= 2 and rng.random() < 0.2)))
    return inputs


def _broadcastable(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[int, ...]:
    """`shape`, its trailing dims, some dims set to 1, or (rarely) an unrelated shape."""
    choice = rng.random()
    if choice < 0.1:
        return tuple(int(s) for s in rng.integers(1, 5, rng.integers(0, 3)))
    if choice < 0.4:
        return shape[int(rng.integers(0, len(shape) + 1)):]
    if choice < 0.6:
        return tuple(1 if rng.random() < 0.5 else s for s in shape)
    return shape


def _random_statement(rng: np.random.Generator, namespace: dict, fresh: str) -> str | None:
    tensors = [name for name, v in namespace.items() if isinstance(v, minitorch.Tensor)]
    # Recent values are the likely operands, so that programs are chains, not fans.
    weights = np.arange(1, len(tensors) + 1, dtype=float) ** 2
    a, b = (str(rng.choice(tensors, p=weights / weights.sum())) for _ in range(2))
    kind = rng.choice(["pointwise"] * 4 + ["reduction", "view", "view", "in_place",
                                          "in_place", "break", "if", "for"])
    fill = _placeholders(rng, namespace[a], a, b)
    if kind == "break":
        return BREAK
    if kind == "in_place":
        target = rng.choice(TARGETS).format(**fill)
        return str(rng.choice(IN_PLACE)).format(t=target, **fill)
    if kind in ("if", "for"):
        return _block(rng, kind, fill, fresh)
    table = {"pointwise": POINTWISE, "reduction": REDUCTIONS, "view": VIEWS}[kind]
    return f"{fresh} = " + str(rng.choice(table)).format(**fill)


def _block(rng: np.random.Generator, kind: str, fill: dict, fresh: str) -> str:
    """An `if` whose branches assign `fresh` differently, or a loop accumulating into it."""
    then, other = (str(rng.choice(POINTWISE)).format(**fill) for _ in range(2))
    if kind == "if":
        condition = str(rng.choice(CONDITIONS)).format(**fill)
        return f"if {condition}:\n    {fresh} = {then}\nelse:\n    {fresh} = {other}"
    a = fill["a"]
    return (f"{fresh} = {a} * 0\nfor i in range(min({a}.shape[0], 3)):\n"
            f"    {fresh} = {fresh} + {a}[i] * i")


def _placeholders(rng: np.random.Generator, tensor: minitorch.Tensor, a: str, b: str) -> dict:
    ndim = max(tensor.ndim, 1)
    dims = [int(d) for d in rng.choice(ndim, int(rng.integers(1, ndim + 1)), replace=False)]
    negative = rng.random() < 0.3
    return {
        "a": a, "b": b,
        "d": int(rng.integers(0, ndim)) - (ndim if negative else 0),
        "e": int(rng.integers(0, ndim)),
        "i": int(rng.integers(0, max(tensor.shape[0] if tensor.ndim else 1, 1))),
        "k": bool(rng.random() < 0.5),
        "dims": tuple(dims),
        "perm": tuple(int(d) for d in rng.permutation(tensor.ndim)),
        "all_dims": ", -1" * tensor.ndim,  # expand's sizes: each dim kept
    }


def _runs(statement: str, namespace: dict) -> bool:
    """Does eager mode run `statement`? If it does, `namespace` holds the names it bound."""
    trial = dict(namespace)  # a block that fails half-way binds nothing
    try:
        with np.errstate(all="ignore"):
            exec(statement, {"minitorch": minitorch}, trial)  # noqa: S102
    except Exception:
        return False
    namespace.update(trial)
    return True


def _random_returns(rng: np.random.Generator, namespace: dict) -> tuple:
    """The last value made, and perhaps another value or an input (an output may alias it)."""
    tensors = [name for name, v in namespace.items() if isinstance(v, minitorch.Tensor)]
    returns = [tensors[-1]]
    for _ in range(int(rng.integers(0, 3))):
        name = str(rng.choice(tensors))
        if name not in returns:
            returns.append(name)
    return tuple(returns)
