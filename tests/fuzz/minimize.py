"""Minimization: shrink a failing program while it keeps failing the same way, then print it.

A random program that fails is long and mostly irrelevant. Delta debugging (Zeller's ddmin;
C-Reduce and Hypothesis's shrinker do the same for their inputs) tries smaller variants one at
a time and keeps any that still fails with the same signature (same backend, same kind of
difference, same exception class for a crash):

    delete a statement          t3 = t1.sin()          ->  (gone)
    inline a rename             t2 = x; t3 = t2 * 2    ->  t3 = x * 2
    delete a returned value     return t4, t2, x       ->  return t4, t2
    flatten a block             if ...: t2 = a else: t2 = b  ->  t2 = a
    simplify an expression      t3 = t1 * t2           ->  t3 = t1
    drop an unused input        def program(x, y)      ->  def program(y)
    shrink an input             (4, 3, 2)              ->  (3, 3, 2), (1, 3, 2), (3, 2)
    plainer inputs              requires_grad, transposed  ->  off

until no variant fails. Each variant is checked by running it, so every step is sound: the
result is a program that fails, only smaller. `reproducer` prints it as a script to paste.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

import numpy as np

from tests.fuzz.program import Program, make_input
from tests.fuzz.runner import RESIZES, Failure, run_program

NAME = re.compile(r"\b[tuxyz]\d*\b")  # the names of values in generated programs


def minimize(failure: Failure, max_runs: int = 400) -> Failure:
    """The smallest variant of failure.program found that fails with the same signature."""
    runs = 0
    progress = True
    while progress and runs < max_runs:
        progress = False
        for candidate in _smaller(failure.program):
            runs += 1
            smaller = _same_failure(candidate, failure)
            if smaller is not None:
                failure, progress = smaller, True
                break
            if runs >= max_runs:
                break
    return failure


def _same_failure(program: Program, failure: Failure) -> Failure | None:
    try:
        found = run_program(program, (failure.backend,)).failures
    except Exception:  # a variant that breaks the fuzzer itself (a syntax error) is no use
        return None
    return next((f for f in found if f.signature() == failure.signature()), None)


def _smaller(program: Program) -> Iterator[Program]:
    """Variants of `program`, each a little simpler, the likeliest to help first."""
    body = program.body
    for k in reversed(range(len(body))):
        yield program.with_body(body[:k] + body[k + 1 :])
    for k, statement in enumerate(body):
        renamed = _inline_rename(program, k, statement)
        if renamed is not None:
            yield renamed
    for k in range(len(program.returns) if len(program.returns) > 1 else 0):
        yield replace(program, returns=program.returns[:k] + program.returns[k + 1 :])
    for k, statement in enumerate(body):
        for simpler in _simpler_statements(statement):
            yield program.with_body(body[:k] + (simpler,) + body[k + 1 :])
    text = "\n".join(body + program.returns)
    for k, spec in enumerate(program.inputs):
        if len(program.inputs) > 1 and not re.search(rf"\b{spec.name}\b", text):
            yield replace(program, inputs=program.inputs[:k] + program.inputs[k + 1 :])
        for smaller in _smaller_inputs(spec):
            inputs = program.inputs[:k] + (smaller,) + program.inputs[k + 1 :]
            yield replace(program, inputs=inputs)


def _inline_rename(program: Program, k: int, statement: str) -> Program | None:
    """Without `t2 = x`, reading x wherever the statements after it read t2."""
    target, sep, source = statement.partition(" = ")
    if not sep or not NAME.fullmatch(target) or not NAME.fullmatch(source):
        return None
    name = re.compile(rf"\b{target}\b")
    after = tuple(name.sub(source, s) for s in program.body[k + 1 :])
    returns = tuple(name.sub(source, r) for r in program.returns)
    return replace(program, body=program.body[:k] + after, returns=returns)


def _simpler_statements(statement: str) -> Iterator[str]:
    """A block's lines on their own; `v = expr` as `v = name` for each name expr reads."""
    lines = statement.splitlines()
    if len(lines) > 1:
        yield from (line.strip() for line in lines if not line.endswith(":"))
        return
    target, sep, expr = statement.partition(" = ")
    if not sep or not NAME.fullmatch(target):
        return
    for name in dict.fromkeys(NAME.findall(expr)):
        if expr != name:
            yield f"{target} = {name}"


def _smaller_inputs(spec):
    """The input with one size smaller, one dim fewer, or a plainer layout or grad flag."""
    for d, size in enumerate(spec.shape):
        if size > 1:
            yield replace(spec, shape=spec.shape[:d] + (size - 1,) + spec.shape[d + 1 :])
    for d in range(len(spec.shape)):
        yield replace(spec, shape=spec.shape[:d] + spec.shape[d + 1 :])
    if spec.requires_grad:
        yield replace(spec, requires_grad=False)
    if spec.transposed:
        yield replace(spec, transposed=False)


def reproducer(failure: Failure) -> str:
    """A self-contained script that shows the failure: the program, its inputs, the calls."""
    program = failure.program
    resizes = sorted(set(RESIZES[: failure.call]))
    lines = [
        f"# minitorch.compile(program, backend={failure.backend!r}) differs from eager "
        f"on call {failure.call} ({failure.kind}):",
        f"#   {failure.message}",
        "import numpy as np",
        "import minitorch",
        "import minitorch.nn.functional as F",
        "",
        program.source(),
        "def inputs(resize):  # fresh tensors for each call; resize grows the sizes",
    ]
    for resize in resizes:
        tensors = ", ".join(
            _literal(spec, program.seed, k, resize) for k, spec in enumerate(program.inputs)
        )
        lines.append(f"    if resize == {resize}:\n        return [{tensors}]")
    lines += [
        "",
        "# eager and compiled, call by call: outputs, inputs after, aliasing, grads",
        "from tests.fuzz.compare import difference, observe",
        f"compiled = minitorch.compile(program, backend={failure.backend!r})",
        f"for resize in {list(RESIZES[: failure.call])}:",
        "    print(difference(observe(program, inputs(resize)),",
        f"                     observe(compiled, inputs(resize)), {program.precision()!r}))",
    ]
    return "\n".join(lines) + "\n"


def _literal(spec, seed: int, position: int, resize: int) -> str:
    """Python source that makes the tensor make_input makes."""
    array = make_input(spec, seed, position, resize).detach().numpy()
    values = np.array2string(array, separator=", ", threshold=10**6, floatmode="unique")
    text = f"np.array({values.replace(chr(10), '')}, dtype=np.{spec.dtype})"
    if spec.transposed and array.ndim >= 2:
        text = f"np.ascontiguousarray({text}.swapaxes(0, 1)).swapaxes(0, 1)"
    text = f"minitorch.from_numpy({text})"
    return text + ".requires_grad_()" if spec.requires_grad else text
