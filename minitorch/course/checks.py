"""The checks graders share: a compiled function against eager, named workloads, fuzzing.

    same_as_eager("softmax", softmax, make_inputs)      # raises CaseFailed if it differs
    for name, fn, make_inputs in WORKLOADS: ...          # small real programs, with gradients
    fuzz_cases(n=20)                                    # Cases: generated programs vs eager

Eager mode is the oracle: values (within float tolerance), dtypes, shapes, and the inputs'
gradients after `backward()`. The fuzzing campaign is the project's differential fuzzer
(tests/fuzz), so the course is graded from a clone of the repository, tests beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

import minitorch
from minitorch.course.grading import Case, CaseFailed


def _mlp(x, w1, w2):
    return minitorch.relu(x @ w1) @ w2


def _layernorm(x):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / minitorch.sqrt(var + 1e-5)


def _attention(q, k):
    scores = q @ k.transpose(-2, -1) / 4.0
    return minitorch.softmax(scores, dim=-1) @ k


def randn_input(*shape):
    """An input maker: seed -> a float32 tensor of `shape` that requires grad."""
    return lambda seed: minitorch.tensor(
        np.random.default_rng(seed).standard_normal(shape).astype(np.float32),
        requires_grad=True,
    )


# name -> (the function, its source for a reproducer, input makers: seed -> tensor)
WORKLOADS: dict[str, tuple[Callable, str, list[Callable]]] = {
    "sincos": (
        lambda x: minitorch.sin(x) ** 2 + minitorch.cos(x) ** 2,
        "lambda x: torch.sin(x) ** 2 + torch.cos(x) ** 2",
        [randn_input(64)],
    ),
    "repeated": (
        lambda x: minitorch.sin(x) * minitorch.sin(x) + minitorch.exp(x) * minitorch.exp(x),
        "lambda x: torch.sin(x) * torch.sin(x) + torch.exp(x) * torch.exp(x)",
        [randn_input(32)],
    ),
    "softmax": (
        lambda x: minitorch.softmax(x, dim=-1),
        "lambda x: torch.softmax(x, dim=-1)",
        [randn_input(16, 40)],
    ),
    "layernorm": (_layernorm, "layernorm(x) over the last dim, written out", [randn_input(8, 64)]),
    "gelu": (
        lambda x: minitorch.nn.functional.gelu(x) * x,
        "lambda x: F.gelu(x) * x",
        [randn_input(256)],
    ),
    "mlp": (
        _mlp,
        "relu(x @ w1) @ w2",
        [randn_input(8, 16), randn_input(16, 32), randn_input(32, 4)],
    ),
    "attention": (
        _attention,
        "softmax(q @ k.T / 4) @ k",
        [randn_input(2, 6, 8), randn_input(2, 6, 8)],
    ),
}


def same_as_eager(
    name: str, fn: Callable, makers: list[Callable], backend: str = "inductor", seed: int = 0
) -> None:
    """Compile `fn` and compare it with eager on fresh inputs: values and the gradients of
    every input; a CaseFailed saying what differed otherwise."""
    want_inputs = [make(seed) for make in makers]
    got_inputs = [make(seed) for make in makers]
    minitorch.manual_seed(seed)  # random ops draw the same numbers, compiled or not
    want = _as_tuple(fn(*want_inputs))
    minitorch.manual_seed(seed)
    got = _as_tuple(minitorch.compile(fn, backend=backend, fullgraph=True)(*got_inputs))
    if len(want) != len(got):
        raise CaseFailed(f"{name}: eager returns {len(want)} outputs, compiled {len(got)}")
    for k, (a, b) in enumerate(zip(want, got, strict=True)):
        _compare(name, f"output {k}" if len(want) > 1 else "output", a, b)
    if not any(x.requires_grad for x in want_inputs):
        return
    if not any(out.requires_grad for out in want):
        return
    sum(out.float().sum() for out in want if out.requires_grad).backward()
    sum(out.float().sum() for out in got if out.requires_grad).backward()
    for k, (a, b) in enumerate(zip(want_inputs, got_inputs, strict=True)):
        _compare(name, f"gradient of input {k}", a.grad, b.grad)


def _as_tuple(out) -> tuple:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _compare(name: str, what: str, want, got) -> None:
    if want is None or got is None:
        if (want is None) != (got is None):
            raise CaseFailed(f"{name}: {what}: eager gives {want!r}, compiled {got!r}")
        return
    if (want.dtype, tuple(want.shape)) != (got.dtype, tuple(got.shape)):
        raise CaseFailed(
            f"{name}: {what}: eager gives {want.dtype} {tuple(want.shape)}, compiled "
            f"{got.dtype} {tuple(got.shape)}"
        )
    a, b = want.detach().numpy(), got.detach().numpy()
    zeros = (a == 0) & (b == 0)
    if np.any(np.signbit(a[zeros]) != np.signbit(b[zeros])):
        raise CaseFailed(f"{name}: {what} differs from eager in the sign of a zero (-0.0, 0.0)")
    if not np.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True):
        worst = np.unravel_index(np.nanargmax(np.abs(a - b)), a.shape) if a.ndim else ()
        raise CaseFailed(
            f"{name}: {what} differs from eager: at {worst} eager {a[worst]!r}, compiled "
            f"{b[worst]!r}"
        )


def workload_cases(backend: str = "inductor", names: tuple[str, ...] = ()) -> Iterator[Case]:
    """One case per workload: compiled equals eager, values and gradients."""
    for name, (fn, source, makers) in WORKLOADS.items():
        if names and name not in names:
            continue
        reproducer = (
            "from minitorch.course.checks import WORKLOADS, same_as_eager\n"
            f"fn, source, makers = WORKLOADS[{name!r}]  # {source}\n"
            f"same_as_eager({name!r}, fn, makers, backend={backend!r})"
        )
        yield Case(
            f"{name} ({backend})",
            lambda fn=fn, makers=makers, name=name: same_as_eager(name, fn, makers, backend),
            reproducer,
        )


def fuzz_cases(n: int, seed: int = 0, backends: tuple[str, ...] = ("inductor",)) -> Iterator[Case]:
    """One case per generated program (tests/fuzz): every backend equals eager on it."""
    from tests.fuzz.generator import generate
    from tests.fuzz.runner import run_program

    for s in range(seed, seed + n):

        def run(s: int = s) -> None:
            program = generate(s)
            result = run_program(program, backends)
            if result.failures:
                failure = result.failures[0]
                raise CaseFailed(
                    f"program {s}: {failure.backend} call {failure.call}: {failure.kind}: "
                    f"{failure.message}",
                    f"python -m tests.fuzz --seed {s} --n 1 --backends {failure.backend}\n"
                    f"the program:\n{program.source()}",
                )

        yield Case(f"generated program {s}", run)
