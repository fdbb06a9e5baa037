"""A fuzzed program: its inputs, its statements as source text, and what it returns.

    Program(inputs=(Input("x", (3, 4), "float32", requires_grad=True),),
            body=("t0 = x.sin()", "t0.mul_(2)", 'print("", end="")'),
            returns=("t0",), seed=7)

prints as, and `function()` execs into, a real Python function:

    def program(x):
        t0 = x.sin()
        t0.mul_(2)
        print("", end="")
        return t0

Source text, not a closure over Python callables, because bytecode capture reads the function's
bytecode: the fuzzer must hand it the same kind of code a user writes, and the minimizer must be
able to print it. The input *values* are not stored: `make_inputs` draws them from `seed`, so a
program is a few lines of text that reproduce exactly.
"""

from __future__ import annotations

import functools
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

import minitorch
from minitorch.dispatch import DispatchMode

FLOAT_DTYPES = ("float32", "float64")
INT_DTYPES = ("int32", "int64")
# What a program's source may name besides its inputs: `F` as real code imports it.
GLOBALS = {"minitorch": minitorch, "F": minitorch.nn.functional}


@dataclass(frozen=True)
class Input:
    """One tensor argument of a program."""

    name: str  # the parameter's name: x, y, z
    shape: tuple[int, ...]
    dtype: str  # a minitorch dtype's name: "float32", "int64", ...
    requires_grad: bool = False  # a leaf that backward() fills with .grad
    transposed: bool = False  # laid out with its first two dims swapped (same values)


@dataclass(frozen=True)
class Program:
    """A function over `inputs`: `body` statements (a block may span lines), then `returns`."""

    inputs: tuple[Input, ...]
    body: tuple[str, ...]  # each a statement; `if` and `for` blocks carry their own indentation
    returns: tuple[str, ...]  # one expression: returned as is; several: returned as a tuple
    seed: int  # draws the input values

    def source(self) -> str:
        params = ", ".join(i.name for i in self.inputs)
        lines = [textwrap.indent(statement, "    ") for statement in self.body]
        result = self.returns[0] if len(self.returns) == 1 else ", ".join(self.returns)
        return "\n".join([f"def program({params}):", *lines, f"    return {result}"]) + "\n"

    def function(self) -> Callable:
        """The program as a Python function, defined in a module of its own."""
        namespace = {**GLOBALS, "__name__": "fuzzed_program"}
        exec(compile(self.source(), "<fuzzed program>", "exec"), namespace)  # noqa: S102
        return namespace["program"]

    def make_inputs(self, resize: int = 0) -> list[minitorch.Tensor]:
        """Fresh input tensors; `resize` > 0 adds it to every size above 1 (same broadcasting)."""
        return [make_input(spec, self.seed, k, resize) for k, spec in enumerate(self.inputs)]

    def precision(self) -> str:
        """The least precise float dtype it computes in: float64 only if nothing is float32.

        Integer and bool inputs count as float32: `sin` and `/` of integers give float32. With
        float64 inputs, an eager run says whether any op made a float32 result (`x.argmax(0)
        .exp()` computes exp of an int64 in float32: a float64 output then carries float32's
        rounding).
        """
        wide = all(i.dtype == "float64" for i in self.inputs)
        narrow = (".float()", "float32")  # a cast to float32
        if not wide or any(n in self.source() for n in narrow):
            return "float32"
        return "float32" if "float32" in _result_dtypes(self) else "float64"

    def with_body(self, body: tuple[str, ...]) -> Program:
        return replace(self, body=body)


class _ResultDtypes(DispatchMode):
    """Records the dtype of every op's result; the ops run eagerly as they would without it."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def run(self, op, args, kwargs, meta):
        self.seen.update(m.dtype.name for m in (meta if isinstance(meta, tuple) else (meta,)))
        return op(*args, **kwargs)  # the mode is off while it runs: this is the eager op


@functools.lru_cache(maxsize=64)
def _result_dtypes(program: Program) -> frozenset[str]:
    """The dtypes of every op result of one eager run (none if the program raises). It draws
    random numbers like any run: observe() seeds the generator before every call it compares."""
    mode = _ResultDtypes()
    try:
        with warnings.catch_warnings(), mode:
            warnings.simplefilter("ignore")
            program.function()(*program.make_inputs())
    except Exception:  # noqa: BLE001 - an invalid program: compared as float64, as before
        pass
    return frozenset(mode.seen)


def make_input(spec: Input, seed: int, position: int, resize: int = 0) -> minitorch.Tensor:
    """The tensor for `spec`: values drawn from (seed, position, resize), so runs agree.

    Floats are drawn from [-2, 2], where every generated op is well conditioned; integers
    from [-4, 4], so that products and sums of a few of them stay far from overflow.
    """
    shape = tuple(s + resize if s > 1 else s for s in spec.shape)
    rng = np.random.default_rng([seed, position, resize])
    if spec.dtype in FLOAT_DTYPES:
        array = rng.uniform(-2, 2, shape).astype(spec.dtype)
    elif spec.dtype == "bool":
        array = np.asarray(rng.random(shape) < 0.5)
    else:
        array = rng.integers(-4, 5, shape).astype(spec.dtype)
    if spec.transposed and array.ndim >= 2:
        array = np.ascontiguousarray(array.swapaxes(0, 1)).swapaxes(0, 1)  # same values
    tensor = minitorch.from_numpy(array)
    return tensor.requires_grad_() if spec.requires_grad else tensor
