"""A guard's fast path: while no module changed, the checks of the module tree are skipped.

[Note: a module tree is one number]
The guard of a frame that calls a model reads the whole model: for the GPT decode step, 900
parts, ~1,800 `Module.__getattr__` calls per call (`L['model'].h._modules['0'].attn.c_attn
.weight`), most of them about which submodule, class, flag and attribute it holds. None of
that changes from one call to the next unless a module is changed, and every change of a
module's state moves the module epoch ([Note: the module epoch] in minitorch/nn/epoch.py).
So this extra (config.epoch_guards) compiles a second guard beside the full one (guards.py):

    def guard(L, G):
        ___v = ___epoch_guard.unchanged((L['model'], ))
        if ___v is None:  # a module changed since the last full check, or another model
            return ___epoch_guard.full_check(L, G)
        (
            ___L_model_config, ___L_model_wte_weight, ...
        ) = ___v
        return (
            not minitorch.is_grad_enabled()
            and ___tensor_key(L['idx']) == ___tensor_L_idx  # Tensor int64[1, 16], ...
            and ___type_GPT.forward is ___function_forward
            and type(___L_model_config) is ___type_GPTConfig
            and ___L_model_config.block_size == 64
            and ___tensor_key(___L_model_wte_weight) == ___tensor_L_model_wte_weight  # ...
            ...
        )

`full_check` runs the full guard; when it passes, it records the epoch it read *before*
checking, the roots (weakly) and `___v`: the values the full guard found at the sources the
fast one reads without walking (`L['model'].wte.weight`, named `___L_model_wte_weight`).
While the epoch and the roots stay the same, every part the epoch vouches for still holds and
is left out, and every other part reads its subject through those. For the decode step, 900
parts become about 100 (one per tensor, class and global), and the ~2 ms walk ~40 us.
Which sources a tree fixes (`ModuleTree`):

- a *root*: a module read from the frame not through another module (`L['model']`,
  `G['net']`, `L['self']`). The fast path checks that it is the same object;
- an attribute of a fixed module that is its own (in its `__dict__` or tables, not its
  class's: `m.wte`, `m.config`, `m.drop.p`), its `__class__`, an entry of a Table
  (`m.h._modules['0']`) and an item of a fixed tuple.

A fixed module's state is the epoch's: its class and training flag (NN_MODULE), its hooks,
`'forward' not in m.__dict__`, a Table's keys. So is anything about a fixed value that cannot
change: its identity (ID_MATCH), an int's type and value, a tuple's length. What stays on
every call is what the epoch does not count ([Note: the module epoch]): every tensor (its
metadata, and which tensors share memory), every class attribute (read through the class
the tree fixes: `___type_Block.forward is ...`, once for all the instances), every function's
code, every global, the attributes of objects that are not modules (the config above), the
grad mode. Each stays one comparison, and the tree costs one.

A module whose class makes its own `__setattr__`, `__delattr__`, `__getattr__` or
`__getattribute__` may keep state where the epoch does not see it: it is not fixed, and its
parts are checked on every call, as in the full guard. What the fast path does not see: a
class attribute made later that hides a module's own attribute or submodule (`Block.attn =
...`, over every block's submodule), and writes past Module's methods ([Note: the module
epoch]). With the extra off the full guard runs alone; both give the same answers, as the
guard suite checks (tests/tracer/dynamo/test_guard_suite_modules.py).
"""

from __future__ import annotations

import re
import textwrap
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minitorch.nn import epoch
from minitorch.nn.epoch import Table
from minitorch.nn.module import Module
from tracer.dynamo.source import AttrSource, GetItemSource, Source

# Values whose type and value cannot change: a check of either, once true, stays true.
IMMUTABLE_TYPES = (type(None), bool, int, float, complex, str, bytes, range, types.FunctionType)


class ModuleTree:
    """Which sources of a frame the module trees fix, and how the fast guard reads each."""

    def __init__(
        self, f_locals: dict, f_globals: dict, types: dict[str, str], names: dict[str, Any]
    ) -> None:
        self.f_locals, self.f_globals = f_locals, f_globals
        self.types = types  # x -> C for each part `type(x) is C` of the full guard
        self.names = names  # the guard's namespace, whose names the fast guard's must not hide
        self.roots: list[Source] = []  # checked by identity before anything else
        self.cached: dict[Source, str] = {}  # a fixed source -> the fast guard's name for it
        self._kinds: dict[Source, str] = {}  # 'fixed', 'under' (a fixed value's, not fixed), 'free'
        self._values: dict[Source, Any] = {}  # each source's value in the frame compiled

    def fixed(self, source: Source) -> bool:
        """Is the value at `source` the same object while the roots and the epoch are?"""
        return self._kind(source) == "fixed"

    def holds_state(self, source: Source) -> bool:
        """Is `source` a fixed module whose whole state the epoch counts?"""
        return self.fixed(source) and _plain_module(self._value(source))

    def unchangeable(self, source: Source) -> bool:
        """Is `source` fixed, and its value one whose type and value cannot change?"""
        return self.fixed(source) and _immutable(self._value(source))

    def expr(self, source: Source) -> str:
        """How the fast guard reads `source`: a root by its name, another fixed value from
        `___v`, and the rest over the expression of their base."""
        if self._kind(source) == "fixed" and source not in self.roots:
            return self._fixed_expr(source)
        if source in self.roots or not isinstance(source, (AttrSource, GetItemSource)):
            return source.name()  # (another source with a base, like a cached call: in full)
        return source.name_over(self.expr(source.base))

    def _fixed_expr(self, source: Source) -> str:
        if isinstance(source, AttrSource) and source.member == "__class__":
            # `type(m) is C` is one of the parts the epoch vouches for: then m.__class__ is C
            if source.base.name() in self.types:
                return self.types[source.base.name()]
        if source not in self.cached:  # L['model'].wte.weight -> ___L_model_wte_weight
            name = "___" + re.sub(r"\W+", "_", source.name()).strip("_")
            while name in self.cached.values() or name in self.names:
                name += "_"
            self.cached[source] = name
        return self.cached[source]

    def _kind(self, source: Source) -> str:
        if source not in self._kinds:
            self._kinds[source] = self._classify(source)
        return self._kinds[source]

    def _classify(self, source: Source) -> str:
        base = getattr(source, "base", None)
        base_kind = "free" if base is None else self._kind(base)
        if base_kind == "fixed":
            return "fixed" if self._stays(source, self._value(base)) else "under"
        if base_kind == "under":
            return "under"
        try:
            value = self._value(source)
        except Exception:
            return "free"
        if _plain_module(value):
            self.roots.append(source)
            return "fixed"
        return "free"

    def _stays(self, source: Source, base: Any) -> bool:
        """Given a fixed `base`, is `source`'s value fixed too?"""
        if isinstance(source, AttrSource):
            if not _plain_module(base):
                return False
            if source.member == "__class__":  # `m.__class__ = C` moves the epoch
                return True
            name = source.member
            if any(name in vars(k) for k in type(base).__mro__):
                return False  # a class attribute: the class may change
            tables = (base._parameters, base._buffers, base._modules)
            return name in base.__dict__ or any(name in table for table in tables)
        if isinstance(source, GetItemSource):
            return type(base) in (Table, tuple)
        return False

    def _value(self, source: Source) -> Any:
        if source not in self._values:
            self._values[source] = source.get_value(self.f_locals, self.f_globals)
        return self._values[source]


def _plain_module(value: Any) -> bool:
    """A Module whose state is all in its __dict__ and Tables, written through Module's
    methods, so that the epoch counts every change of it."""
    if not isinstance(value, Module):
        return False
    cls, own = type(value), value.__dict__
    return (
        cls.__setattr__ is Module.__setattr__
        and cls.__delattr__ is Module.__delattr__
        and cls.__getattr__ is Module.__getattr__
        and cls.__getattribute__ is object.__getattribute__
        and all(type(own.get(name)) is Table for name in _TABLES)
    )


_TABLES = ("_parameters", "_buffers", "_modules", "_forward_pre_hooks", "_forward_hooks")


def _immutable(value: Any) -> bool:
    if type(value) is tuple:
        return all(_immutable(item) for item in value)
    return type(value) in IMMUTABLE_TYPES


@dataclass(frozen=True)
class Seen:
    """What the last full check that passed found."""

    epoch: int  # read before it checked
    roots: tuple[weakref.ref, ...]  # the roots it checked, weakly: a guard keeps no model alive
    values: tuple  # ___v: the values of the fixed sources the fast guard reads


class EpochGuard:
    """The fast guard's state: the full guard, and what its last pass found."""

    def __init__(
        self,
        full: Callable[[dict, dict], bool],
        roots_of: Callable[[dict, dict], tuple],
        values_of: Callable[[dict, dict], tuple],
    ) -> None:
        self.full = full
        self.roots_of = roots_of
        self.values_of = values_of
        self.seen: Seen | None = None  # replaced whole, never changed: threads read it freely

    def unchanged(self, roots: tuple) -> tuple | None:
        """The values the last full check found, if no module changed since and `roots` are
        the roots it checked; None otherwise."""
        seen = self.seen
        if seen is None or seen.epoch != epoch.current:
            return None
        for ref, root in zip(seen.roots, roots, strict=True):
            if ref() is not root:
                return None
        return seen.values

    def full_check(self, f_locals: dict, f_globals: dict) -> bool:
        """The full guard; when it passes, remember what it found, at the epoch it began."""
        began = epoch.current
        if not self.full(f_locals, f_globals):
            return False
        roots = tuple(weakref.ref(r, self._forget) for r in self.roots_of(f_locals, f_globals))
        self.seen = Seen(began, roots, self.values_of(f_locals, f_globals))
        return True

    def _forget(self, dead: weakref.ref) -> None:
        """A root died: drop the values, which would keep its submodules alive."""
        seen = self.seen
        if seen is not None and any(ref is dead for ref in seen.roots):
            self.seen = None


class FullTree:
    """What the full guard's builder asks instead of a ModuleTree: nothing is fixed, every
    source is read by its own expression."""

    def fixed(self, source: Source) -> bool:
        return False

    holds_state = unchangeable = fixed

    def expr(self, source: Source) -> str:
        return source.name()


FULL = FullTree()


def fast_guard(
    tree: ModuleTree, lines: list[str], full: Callable, namespace: dict
) -> tuple[str, Callable]:
    """The fast guard, as code and compiled: the roots' check, then the `lines` that the
    epoch leaves. The `___epoch_guard` it calls, over the `full` guard, joins `namespace`."""
    chain = "\n        and ".join(dict.fromkeys(lines)) or "True"
    # the fixed values the lines read (a name found in a string constant only costs a read)
    used = {s: n for s, n in tree.cached.items() if re.search(rf"\b{n}\b", chain)}
    namespace["___epoch_guard"] = EpochGuard(
        full, _tuple_function(tree.roots, namespace), _tuple_function(list(used), namespace)
    )
    roots = "".join(f"{root.name()}, " for root in tree.roots)
    unpack = ""
    if used:
        names = ", ".join(used.values()) + ","  # lines of up to 100 columns, names unbroken
        names = textwrap.fill(names, 92, subsequent_indent=" " * 8, break_long_words=False)
        unpack = f"    (\n        {names}\n    ) = ___v\n"
    source = (
        "def guard(L, G):\n"
        f"    ___v = ___epoch_guard.unchanged(({roots}))\n"
        "    if ___v is None:  # a module changed since the last full check, or another model\n"
        "        return ___epoch_guard.full_check(L, G)\n"
        f"{unpack}"
        f"    return (\n        {chain}\n    )\n"
    )
    return source, _compiled(source, namespace, "guard")


def _tuple_function(sources: list[Source], namespace: dict[str, Any]) -> Callable:
    """`def values(L, G): return (source, ...)`: how the full check reads the roots and ___v."""
    items = "".join(f"{s.name()}, " for s in sources)
    return _compiled(f"def values(L, G):\n    return ({items})\n", namespace, "values")


def _compiled(source: str, namespace: dict[str, Any], name: str) -> Callable:
    """The function `name` that `source` defines, over `namespace`'s names."""
    scope = dict(namespace)
    exec(compile(source, f"<{name}>", "exec"), scope)  # noqa: S102 - our own generated code
    return scope[name]
