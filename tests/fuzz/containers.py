"""Random programs that mix tensors with Python's containers, for the container fuzzer.

    program = generate_containers(seed=7)
    print(program.source())

A program is a function `program(x, lst, d)`: a tensor, a list and a dict the caller owns
(fresh ones on every call), and a module-level list `GL` it may append to. Its body builds
lists, dicts, tuples and sets, takes dict views and then mutates the dict, extends lists with
`+=` through aliases (its arguments' too), calls their methods, slices, unpacks, loops over
views and comprehends, and computes tensors from what it finds. It returns every variable it
made, so a wrong item, type, order or identity anywhere shows.

Like the tensor fuzzer's generator, every candidate statement is run plainly (CPython is the
oracle) as the program grows, and kept only if it runs; the generator reads the live values
(which names hold lists of numbers, which dicts are empty) to pick the next statement, so it
needs no model of Python's semantics of its own. The last statement may raise on purpose
(`d["zz"]`, `[].pop()`), to check that compiled code raises CPython's exception.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import minitorch
from tests.fuzz.container_templates import TEMPLATES, raising
from tests.tracer.dynamo.cpython.harness import time_limit

VIEWS = ("dict_keys", "dict_values", "dict_items")
MAX_LEN = 8  # lists longer than this do not grow (n * [x] and += would explode)


def make_args(variant: int = 0) -> tuple:
    """The caller's arguments, fresh: a tensor, a list and a dict the program may mutate.

    Variant 1 is a later call with longer containers (the compiled code's guards must see
    that its lengths and keys changed); programs are generated against variant 0.
    """
    x = minitorch.tensor([1.0, -2.0, 3.0])
    lst = [minitorch.tensor([0.5, 1.0, 2.0]), 2]
    d = {"a": minitorch.tensor([1.0, 1.0, -1.0]), "b": 3}
    if variant == 1:
        lst.append(minitorch.tensor([-1.0, 0.0, 4.0]))
        d["c"] = 7
    return x, lst, d


@dataclass(frozen=True)
class ContainerProgram:
    """The statements of one random program, and the seed that made them."""

    body: tuple[str, ...]
    seed: int

    def source(self) -> str:
        lines = ["def program(x, lst, d):"] + [_indent(s) for s in self.body]
        lines.append(f"    return {_returned(self.body)}")
        return "\n".join(lines) + "\n"

    def function(self) -> Callable:
        """A real function (capture reads its bytecode), in a namespace with its own GL."""
        namespace = {"GL": [], "minitorch": minitorch}
        exec(compile(self.source(), f"<container program {self.seed}>", "exec"), namespace)
        return namespace["program"]

    def with_body(self, body: tuple[str, ...]) -> ContainerProgram:
        return ContainerProgram(tuple(body), self.seed)


def _indent(statement: str) -> str:
    return "\n".join("    " + line for line in statement.splitlines())


def _returned(body: tuple[str, ...]) -> str:
    """Every name the body assigns, and the arguments, in a tuple."""
    names = ["x"]
    for statement in body:
        for name in _assigned(statement):
            if name not in names:
                names.append(name)
    return "(" + ", ".join(names) + ",)"


def _assigned(statement: str) -> list[str]:
    first = statement.splitlines()[0]
    if (
        first.startswith("for ")
        or "=" not in first
        or first.split("=")[0].rstrip().endswith(("]", ")"))
    ):
        return []
    target = first.split("=")[0].replace("+", "").replace("|", "").replace("*", " ")
    return [n.strip() for n in target.split(",") if n.strip().isidentifier()]


def _probe(body: list[str]) -> dict | None:
    """The function's locals after running `body` plainly on fresh arguments, or None."""
    source = "def program(x, lst, d):\n" + "".join(_indent(s) + "\n" for s in body)
    source += "    return dict(locals())\n"
    namespace = {"GL": [], "minitorch": minitorch}
    try:
        exec(compile(source, "<probe>", "exec"), namespace)
        with time_limit(5):  # a loop that grows what it iterates: dropped
            return namespace["program"](*make_args())
    except Exception:  # noqa: BLE001 (a statement CPython rejects is simply not kept)
        return None


def generate_containers(
    seed: int, length: int | None = None, frozen_arguments: bool = False
) -> ContainerProgram:
    """A random program of `length` statements (6 to 16 by default), seeded.

    `frozen_arguments`: keep no statement that changes the caller's `lst` or `d` (through any
    alias), to look past the failures that argument mutation causes.
    """
    rng = random.Random(seed)
    length = length if length is not None else rng.randint(6, 16)
    body: list[str] = []
    state = _probe(body)
    counter = [0]
    for _ in range(length * 4):
        if len(body) >= length:
            break
        candidate = _statement(rng, state, counter)
        if candidate is None:
            continue
        new_state = _probe(body + [candidate])
        if (
            new_state is not None
            and _small(new_state)
            and not (frozen_arguments and _arguments_changed(new_state))
        ):
            body.append(candidate)
            state = new_state
    if rng.random() < 0.1:
        body.append(raising(rng, _Pools(state)))
    return ContainerProgram(tuple(body), seed)


def _arguments_changed(state: dict) -> bool:
    """Whether the plain run left the caller's list or dict other than make_args() made it."""
    _, lst, d = make_args()
    return _plain(state["lst"]) != _plain(lst) or _plain(state["d"]) != _plain(d)


def _plain(value: object) -> object:
    """A container's contents with tensors as nested lists, comparable with ==."""
    if isinstance(value, minitorch.Tensor):
        return ("tensor", value.tolist())
    if isinstance(value, dict):
        return [(k, _plain(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _small(state: dict) -> bool:
    """Lists stay short, and no container holds itself (CPython's repr copes; comparing
    recursively would not)."""
    return all(
        len(v) <= MAX_LEN * 2 for v in state.values() if isinstance(v, (list, tuple))
    ) and not any(_cyclic(v, set()) for v in state.values())


def _cyclic(value: object, open_ids: set[int]) -> bool:
    """Whether `value` reaches itself through the containers inside it."""
    if not isinstance(value, (list, tuple, dict)):
        return False
    if id(value) in open_ids:
        return True
    open_ids.add(id(value))
    items = value.values() if isinstance(value, dict) else value
    found = any(_cyclic(v, open_ids) for v in items)
    open_ids.discard(id(value))
    return found


class _Pools:
    """The live names by kind, read from the values the plain run left."""

    def __init__(self, state: dict) -> None:
        self.tensors = [n for n, v in state.items() if isinstance(v, minitorch.Tensor)]
        self.lists = [n for n, v in state.items() if type(v) is list]
        self.dicts = [n for n, v in state.items() if type(v) is dict]
        self.tuples = [n for n, v in state.items() if type(v) is tuple]
        self.sets = [n for n, v in state.items() if type(v) is set]
        self.views = [n for n, v in state.items() if type(v).__name__ in VIEWS]
        self.ints = [n for n, v in state.items() if type(v) is int]
        self.sized = self.lists + self.dicts + self.tuples + self.sets + self.views
        self.iterables = self.lists + self.tuples + self.views + self.sets
        self.state = state


def _statement(rng: random.Random, state: dict, counter: list[int]) -> str | None:
    pools = _Pools(state)
    template = rng.choice(TEMPLATES)
    return template(rng, pools, lambda prefix: _fresh(prefix, counter))


def _fresh(prefix: str, counter: list[int]) -> str:
    counter[0] += 1
    return f"{prefix}{counter[0]}"
