"""Guards: the conditions under which a compiled frame may be reused, compiled into one function.

[Note: guards]
A graph captured from one call is only valid for calls that would have traced the same way.
While it interprets the bytecode, the translator records a `Guard(source, kind)` for every
value whose properties it relied on: a tensor's shape (it was constant-folded into the graph),
a global's identity (its functions were called), an int argument's value (it was baked in as a
constant), the global grad mode. After tracing, `GuardBuilder` turns each guard into boolean
*parts*, one line each, reading the value the source has in the frame being compiled, and
compiles all of them into a single Python function, kept with its source text:

    def guard(L, G):                                    # for sin(x) ** 2 + cos(x) ** 2
        return (
            minitorch.is_grad_enabled()
            and G['minitorch'] is minitorch
            and G['minitorch'].sin is ___function_sin      # the function object of the trace
            and ___tensor_key(L['x']) == ___tensor_L_x  # Tensor float32[3, 4], stride (4, 1), cpu
            and G['minitorch'].cos is ___function_cos
        )

A tensor is checked with one comparison ([Note: a tensor guard is one tuple]).

What tracing relies on is more than the values it computes with. Python objects are mutable,
so the guard also pins what the code *looked up*: every function read through a module
(`G['minitorch'].sin is ___function_sin`: [Note: module attributes are guarded] in
variables/modules.py), the code and the defaults of every function it inlined ([Note: what a
function object holds] in variables/inline.py), the class of every module and object whose
methods it inlined and those methods (`method_of` in variables/user_object.py), and which
tensor inputs share memory ([Note: aliasing is overlapping memory] in memory_overlap.py).

Each call runs the guard of every cache entry, most recently used first, and takes the first
that passes. When none passes, the first failing part of the most recently used entry is the
*recompile reason* (`L['x'].shape == (3, 4) failed: L['x'].shape was minitorch.Size([5, 4])`).
One `and` chain is the fast path; the parts are re-run one by one only to explain a failure.
TorchDynamo compiles guards the same way (newer versions into a C++ tree of guard managers).
While no module changes, a second function skips the parts about the modules: [Note: a module
tree is one number] in epoch_guard.py.

[Note: a tensor guard is one tuple]
Every call checks each tensor input's type, shape, strides, dtype, device and requires_grad.
Written as six parts, that is six lookups of `L['x']` and six properties that each build a
Python object (`stride()` divides every stride by the item size, `dtype` looks the numpy
dtype up, `device` finds the array's module): ~2 us a tensor. The same facts read straight
off the numpy array are one tuple, `tensor_key(t)`: the tensor's type and requires_grad, the
array's type (numpy or cupy: the device), dtype, shape and strides in bytes. One comparison
with the tuple seen while tracing (`___tensor_x`) costs ~0.2 us, and, since the tuple holds
exactly what the six parts check, it passes exactly when they all pass. The six parts are
still the guard's `parts`, each marked `fused` with the line that checks it: explain() lists
them, and when the comparison fails, they are what says why (`L['x'].shape == (3, 4) failed:
...`). A tensor with a dim left dynamic (below) is checked part by part: its shape is not one
value.
"""

from __future__ import annotations

import builtins
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import minitorch
from minitorch import config
from minitorch.dtype import DType
from minitorch.nn.epoch import Table
from minitorch.nn.hooks import has_hooks
from tracer.dynamo.epoch_guard import FULL, ModuleTree, fast_guard
from tracer.dynamo.memory_overlap import alias_pattern, identity_pattern
from tracer.dynamo.source import BuiltinSource, Source


@dataclass(frozen=True)
class Guard:
    """A promise about one source; `kind` names the GuardBuilder method that writes its code."""

    source: Source | None  # None for global state, like the grad mode
    kind: str  # 'TENSOR_MATCH' | 'CONSTANT_MATCH' | 'ID_MATCH' | 'TYPE_MATCH' | ...


@dataclass(frozen=True)
class GuardPart:
    """One boolean line of a guard function."""

    code: str  # "L['x'].shape == (3, 4)"
    subject: str | None = None  # what to show when it fails: "L['x'].shape"
    # When showing the subject's value says too little: scope -> the failure, in words.
    explain: Callable[[dict], str] | None = field(default=None, compare=False)
    # The line of the guard's code that checks this part with others (and a comment), if
    # any: "___tensor_key(L['x']) == ___tensor_L_x  # ..." ([Note: a tensor guard is one tuple])
    fused: str | None = None


class GuardBuilder:
    """Writes the parts of each guard from the values in the frame being compiled; with a
    `tree`, the fast guard's (epoch_guard.py): without the parts the module epoch vouches for
    (`counted`), the others reading their subjects through the tree (`tree.expr`)."""

    def __init__(
        self,
        f_locals: dict[str, Any],
        f_globals: dict[str, Any],
        dynamic_dims: dict[Source, set[int]] | None = None,
        tree: ModuleTree = FULL,
        full: GuardBuilder | None = None,  # the full guard's builder, whose names to reuse
    ) -> None:
        self.f_locals = f_locals
        self.f_globals = f_globals
        self.dynamic_dims = dynamic_dims or {}  # source -> dims whose size is not guarded
        self.tree = tree
        self.parts: list[GuardPart] = []
        self._codes: set[str] = set()  # the parts' code, to write each once
        self.types: dict[str, str] = {}  # x -> the class C of its part `type(x) is C`
        self.keys: dict[Source, str] = full.keys if full else {}  # tensor -> its key's name
        # The names a guard's code may use besides L and G.
        self.namespace: dict[str, Any] = {
            "minitorch": minitorch,
            "builtins": builtins,
            "sys": sys,
            "___alias_pattern": alias_pattern,
            "___identity_pattern": identity_pattern,
            "___tensor_key": tensor_key,
            "___class_defines": class_defines,
            "___has_hooks": has_hooks,
        }
        if full is not None:
            self.namespace = full.namespace

    def add(self, guard: Guard) -> None:
        getattr(self, guard.kind)(guard)

    def _value(self, guard: Guard) -> Any:
        return guard.source.get_value(self.f_locals, self.f_globals)

    def _type_part(self, x: str, value: Any, counted: bool = False, fused=None) -> None:
        """`type(x) is C`."""
        self.types[x] = self._literal(type(value))
        self._part(f"type({x}) is {self.types[x]}", f"type({x})", fused=fused, counted=counted)

    def _part(
        self,
        code: str,
        subject: str | None = None,
        explain=None,
        fused: str | None = None,
        counted: bool = False,  # the module epoch vouches for it: the fast guard leaves it
    ) -> None:
        if counted:
            return
        if code not in self._codes:  # two guards may promise the same (a function's __code__)
            self._codes.add(code)
            self.parts.append(GuardPart(code, subject, explain, fused))

    # ---- one method per kind of guard -------------------------------------------------------

    def TENSOR_MATCH(self, guard: Guard) -> None:
        """Everything about a tensor that tracing constant-folded or that changes its kernels;
        the guard's code checks it as one tuple ([Note: a tensor guard is one tuple])."""
        t, x = self._value(guard), self.tree.expr(guard.source)
        dynamic = self.dynamic_dims.get(guard.source)
        fused = None
        if not dynamic:
            key = self.keys.get(guard.source)
            if key is None:  # the fast guard compares with the full guard's key
                name = "___tensor_" + re.sub(r"\W+", "_", guard.source.name()).strip("_")
                key = self.keys[guard.source] = self._bind(tensor_key(t), name)
            dims = ", ".join(map(str, t.shape))
            fused = (
                f"___tensor_key({x}) == {key}  # {type(t).__name__} {t.dtype.name}[{dims}]"
                f", stride {t.stride()}, {t.device}"
                f"{', requires_grad' if t.requires_grad else ''}"
            )
        self._type_part(x, t, fused=fused)
        if dynamic:
            self._dynamic_sizes(t, x, dynamic)
        else:
            self._part(f"{x}.shape == {tuple(t.shape)!r}", f"{x}.shape", fused=fused)
            self._part(f"{x}.stride() == {t.stride()!r}", f"{x}.stride()", fused=fused)
        self._part(f"{x}.dtype is {self._literal(t.dtype)}", f"{x}.dtype", fused=fused)
        self._part(f"{x}.device == {str(t.device)!r}", f"{x}.device", fused=fused)
        rg = f"{x}.requires_grad"
        self._part(rg if t.requires_grad else f"not {rg}", rg, fused=fused)

    def _dynamic_sizes(self, t: Any, x: str, dynamic: set[int]) -> None:
        """The rank and the static sizes; a dynamic size only >= 2 ([Note: dynamic shapes]).

        0 and 1 stay specialised, as in PyTorch: a size-1 dim broadcasts and a size-0 tensor
        is empty, so code traced at size 5 may mean something else at size 1. Strides follow
        the sizes, so a contiguous input is guarded as contiguous, not by its strides.
        """
        self._part(f"{x}.ndim == {t.ndim}", f"{x}.ndim")
        for dim, size in enumerate(t.shape):
            if dim in dynamic:
                self._part(f"{x}.shape[{dim}] >= 2", f"{x}.shape[{dim}]")
            else:
                self._part(f"{x}.shape[{dim}] == {size}", f"{x}.shape[{dim}]")
        if t.is_contiguous():
            self._part(f"{x}.is_contiguous()", f"{x}.stride()")
        else:  # another size needs another stride: a miss, then a recompile
            self._part(f"{x}.stride() == {t.stride()!r}", f"{x}.stride()")

    def CONTAINER_ID(self, guard: Guard) -> None:
        """A list, dict or plain object of the frame that tracing may mutate: which of them
        are one object is one part for all of them (`container_identity`, from
        compile_guards)."""

    def container_identity(self, sources: list[Source]) -> None:
        """The lists, dicts and objects read from the frame that were one object while
        tracing are one object now, and the others are not: a mutation through one is seen
        through the other only then (builder.py gives one object one tracker)."""
        values = [s.get_value(self.f_locals, self.f_globals) for s in sources]
        names = ", ".join(self.tree.expr(s) for s in sources)
        self._part(
            f"___identity_pattern(({names},)) == {identity_pattern(values)!r}",
            f"___identity_pattern(({names},))",
        )

    def tensor_aliasing(self, sources: list[Source]) -> None:
        """Tensors that shared memory while tracing share it now, and the others do not: one
        part, comparing the pattern of overlaps (see `alias_pattern`)."""
        values = [s.get_value(self.f_locals, self.f_globals) for s in sources]
        names = [self.tree.expr(s) for s in sources]
        expected = alias_pattern(values)
        code = f"___alias_pattern(({', '.join(names)},)) == {expected!r}"
        pairs = [(i, j) for i in range(len(names)) for j in range(i)]
        identical = {(i, j) for i, j in pairs if values[i] is values[j]}

        def explain(scope: dict) -> str:
            now = [eval(name, scope) for name in names]  # noqa: S307 - our own sources
            actual = alias_pattern(now)
            for i, j in pairs:
                was, shared = expected[i] == expected[j], actual[i] == actual[j]
                if was and not shared:
                    state = (
                        "were the same tensor while tracing and are distinct now"
                        if (i, j) in identical
                        else "shared memory while tracing and do not now"
                    )
                    return f"{code} failed: {names[j]} and {names[i]} {state}"
                if shared and not was:
                    state = (
                        "were distinct tensors while tracing and are the same now"
                        if now[i] is now[j]
                        else "did not share memory while tracing and do now"
                    )
                    return f"{code} failed: {names[j]} and {names[i]} {state}"
            return f"{code} failed"

        self._part(code, None, explain)

    def NOT_A_VIEW(self, guard: Guard) -> None:
        """An input written back with copy_ (variables/inplace.py) owns its memory."""
        x = self.tree.expr(guard.source)
        self._part(f"{x}._base is None", f"{x}._base")

    def CONSTANT_MATCH(self, guard: Guard) -> None:
        """A Python constant that was baked into the graph: same type and same value."""
        value, x = self._value(guard), self.tree.expr(guard.source)
        counted = self.tree.unchangeable(guard.source)
        if value is None or isinstance(value, bool):
            self._part(f"{x} is {value!r}", x, counted=counted)
            return
        self._type_part(x, value, counted)
        self._part(f"{x} == {self._literal(value)}", x, counted=counted)

    def ID_MATCH(self, guard: Guard) -> None:
        """The very same object (modules, functions): `is`."""
        value, x = self._value(guard), self.tree.expr(guard.source)
        self._part(f"{x} is {self._literal(value)}", x, counted=self.tree.fixed(guard.source))

    def NN_MODULE(self, guard: Guard) -> None:
        """An nn.Module whose attributes tracing read: the same class, in the same mode.

        Not its identity: everything tracing read from it is guarded one by one where it was
        read (parameters and buffers as TENSOR_MATCH: they are graph inputs; submodules as
        NN_MODULE; Python attributes by value; methods by their class attribute), so another
        instance of the class with parameters of the same shapes runs the same compiled code,
        as an optimizer step or load_state_dict on the same instance does. `training` is
        guarded here for every module tracing entered, since layers like Dropout branch on it.
        """
        value, x = self._value(guard), self.tree.expr(guard.source)
        counted = self.tree.holds_state(guard.source)
        # `m.__class__ = Other` changes the class of the same object, too.
        self._type_part(x, value, counted)
        flag = f"{x}.training"
        self._part(f"{flag} is {value.training!r}", flag, counted=counted)

    def FUNCTION_MATCH(self, guard: Guard) -> None:
        """A user function: its body and its globals, not its identity.

        Everything else a call of it uses is guarded where it was used: each default it took,
        each closure cell its body read ([Note: what a function object holds] and [Note:
        closures are read through their cells] in variables/inline.py). So a lambda made
        anew for each module instance (`self.act = lambda t: t * k`) reuses the entry.
        """
        value, x = self._value(guard), self.tree.expr(guard.source)
        counted = self.tree.fixed(guard.source)  # a function's class and globals are fixed
        self._type_part(x, value, counted)
        self._part(f"{x}.__code__ is {self._bind(value.__code__)}", f"{x}.__code__")
        code = f"{x}.__globals__ is {self._bind(value.__globals__)}"
        self._part(code, f"{x}.__globals__", counted=counted)

    def TYPE_MATCH(self, guard: Guard) -> None:
        """Only the type was relied on (a value tracing could hold but not use)."""
        value, x = self._value(guard), self.tree.expr(guard.source)
        counted = self.tree.holds_state(guard.source) or self.tree.unchangeable(guard.source)
        self._type_part(x, value, counted)

    def TUPLE_LENGTH(self, guard: Guard) -> None:
        """A tuple or list argument: its type and length (each item gets guards of its own)."""
        value, x = self._value(guard), self.tree.expr(guard.source)
        counted = type(value) is tuple and self.tree.fixed(guard.source)
        self._type_part(x, value, counted)
        self._part(f"len({x}) == {len(value)}", f"len({x})", counted=counted)

    def DICT_KEYS(self, guard: Guard) -> None:
        """A dict whose items tracing iterated (a Sequential's `_modules`): the same keys."""
        value, x = self._value(guard), self.tree.expr(guard.source)
        counted = type(value) is Table and self.tree.fixed(guard.source)  # a write moves the epoch
        self._part(f"list({x}) == {list(value)!r}", f"list({x})", counted=counted)

    def NOT_SHADOWED(self, guard: Guard) -> None:
        """A name found past a namespace that could hide it is found there only while that
        namespace does not gain it: a builtin read by name (no global of that name appears),
        a method found on the class (no instance attribute hides it: `m.forward = other`)."""
        source = guard.source
        if isinstance(source, BuiltinSource):
            self._part(f"{source.builtin_name!r} not in G")
        else:  # an AttrSource: obj.name
            x, counted = self.tree.expr(source.base), self.tree.holds_state(source.base)
            self._part(f"{source.member!r} not in {x}.__dict__", None, counted=counted)

    def NO_HOOKS(self, guard: Guard) -> None:
        """An inlined module call had no forward hooks: one added later retraces (hooks.py)."""
        x, counted = self.tree.expr(guard.source), self.tree.holds_state(guard.source)
        self._part(f"not ___has_hooks({x})", f"___has_hooks({x})", counted=counted)

    def NOT_ON_CLASS(self, guard: Guard) -> None:
        """No class of the object's MRO defines the name (`obj.b` went to __getattr__)."""
        source = guard.source  # an AttrSource: obj.name
        x = self.tree.expr(source.base)
        self._part(
            f"not ___class_defines(type({x}), {source.member!r})",
            f"___class_defines(type({x}), {source.member!r})",
        )

    def CLASS_LACKS(self, guard: Guard) -> None:
        """No class of the class's MRO defines the name (an object made in the frame keeps
        `obj.name` in its own __dict__ only while no property of that name appears)."""
        source = guard.source  # an AttrSource: cls.name
        x = self.tree.expr(source.base)
        self._part(
            f"not ___class_defines({x}, {source.member!r})",
            f"___class_defines({x}, {source.member!r})",
        )

    def GRAD_MODE(self, guard: Guard) -> None:
        """Autograd records (or not) depending on the global grad mode at call time."""
        enabled = minitorch.is_grad_enabled()
        self._part("minitorch.is_grad_enabled()" if enabled else "not minitorch.is_grad_enabled()")

    # ---- turning values into code ---------------------------------------------------------

    def _literal(self, value: Any) -> str:
        """Code that evaluates to `value`: its repr where that round-trips, else a name."""
        if value is None or type(value) in (bool, int, str):
            return repr(value)
        if type(value) is float and math.isfinite(value):
            return repr(value)
        if type(value) is tuple and all(type(v) in (bool, int, str) for v in value):
            return repr(value)
        if isinstance(value, DType):
            return repr(value)  # minitorch.float32
        if value is minitorch:
            return "minitorch"
        if isinstance(value, type):
            if getattr(builtins, value.__name__, None) is value:
                return value.__name__  # int, tuple
            if getattr(minitorch, value.__name__, None) is value:
                return f"minitorch.{value.__name__}"  # minitorch.Tensor
        return self._bind(value)

    def _bind(self, value: Any, name: str | None = None) -> str:
        """Put `value` into the guard's namespace under a readable, unique name (`name`, if
        given, made unique)."""
        if name is not None:
            while name in self.namespace:
                name += "_"
            self.namespace[name] = value
            return name
        for name, bound in self.namespace.items():
            if bound is value and name.startswith("___"):
                return name
        # A code object is named after its function: ___code_forward.
        hint = getattr(value, "__name__", None) or getattr(value, "co_name", None)
        kind = "module" if type(value) is type(builtins) else type(value).__name__
        if type(value) is dict and "__name__" in value:  # a module's globals: ___globals_f
            kind, hint = "globals", value["__name__"]
        hint = hint or type(value).__name__
        name = "___" + re.sub(r"\W", "_", f"{kind}_{hint}")
        while name in self.namespace:
            name += "_"
        self.namespace[name] = value
        return name


@dataclass
class GuardFunction:
    """The compiled guard of one cache entry: `guard(L, G) -> bool`, and how to explain it."""

    source: str  # the function's Python source, for printing
    parts: list[GuardPart]
    namespace: dict[str, Any]  # the objects its code refers to
    check: Callable[[dict, dict], bool] = field(repr=False)  # what runs: the fast guard if any
    fast: str | None = None  # the fast guard's source (epoch_guard.py), if there is one

    def __call__(self, f_locals: dict[str, Any], f_globals: dict[str, Any]) -> bool:
        try:
            return bool(self.check(f_locals, f_globals))
        except Exception:  # a global that disappeared, an argument of another kind, ...
            return False

    def failure_reason(self, f_locals: dict[str, Any], f_globals: dict[str, Any]) -> str | None:
        """The first part that fails on this frame, as a sentence; None if all pass."""
        return _first_failure(self.parts, {**self.namespace, "L": f_locals, "G": f_globals})


def _first_failure(parts: list[GuardPart], scope: dict[str, Any]) -> str | None:
    """The first of `parts` that fails in `scope`, as a sentence; None if all pass."""
    for part in parts:
        try:
            if eval(part.code, scope):  # noqa: S307 - our own generated code
                continue
        except Exception as e:
            return f"{part.code} raised {type(e).__name__}: {e}"
        if part.explain is not None:
            return part.explain(scope)
        if part.subject is None:
            return f"{part.code} failed"
        actual = eval(part.subject, scope)  # noqa: S307
        return f"{part.code} failed: {part.subject} was {actual!r}"
    return None


def class_defines(cls: type, name: str) -> bool:
    """Does a class of `cls`'s MRO define `name`? (Not its metaclass, unlike hasattr.)"""
    return any(name in vars(k) for k in cls.__mro__)


def tensor_key(t: Any) -> tuple:
    """What a tensor guard compares, read straight off the array ([Note: a tensor guard is
    one tuple]): the same tuple exactly when type, shape, stride, dtype, device and
    requires_grad are the same."""
    data = t._data
    return type(t), t.requires_grad, type(data), data.dtype, data.shape, data.strides


def compile_guards(
    guards: list[Guard],
    f_locals: dict,
    f_globals: dict,
    dynamic_dims: dict[Source, set[int]] | None = None,
) -> GuardFunction:
    """One guard function for a cache entry, from the guards recorded while tracing.

    `dynamic_dims` names the tensor dims whose sizes are not guarded (see [Note: dynamic
    shapes] in output_graph.py). With config.epoch_guards, the function that runs is the
    fast guard ([Note: a module tree is one number] in epoch_guard.py), over the full one.
    """
    builder = _build(GuardBuilder(f_locals, f_globals, dynamic_dims), guards)
    lines = [part.fused or part.code for part in builder.parts]
    chain = "\n        and ".join(dict.fromkeys(lines))  # a fused check's line once
    source = f"def guard(L, G):\n    return (\n        {chain}\n    )\n"
    if not lines:
        source = "def guard(L, G):\n    return True\n"
    namespace = dict(builder.namespace)
    exec(compile(source, "<guard>", "exec"), namespace)  # noqa: S102 - our own generated code
    guard = GuardFunction(source, builder.parts, builder.namespace, namespace["guard"])
    if config.epoch_guards:
        tree = ModuleTree(f_locals, f_globals, builder.types, builder.namespace)
        fast = _build(GuardBuilder(f_locals, f_globals, dynamic_dims, tree, builder), guards)
        if tree.roots:  # a module was read: the fast guard skips what the epoch vouches for
            lines = [part.fused or part.code for part in fast.parts]
            guard.fast, guard.check = fast_guard(tree, lines, guard.check, builder.namespace)
    return guard


def _build(builder: GuardBuilder, guards: list[Guard]) -> GuardBuilder:
    """Every guard's parts, then the parts about the tensors and containers together."""
    for guard in guards:
        builder.add(guard)
    tensors = [g.source for g in guards if g.kind == "TENSOR_MATCH"]
    if len(tensors) > 1:
        builder.tensor_aliasing(tensors)
    containers = [g.source for g in guards if g.kind == "CONTAINER_ID"]
    if len(containers) > 1:
        builder.container_identity(containers)
    return builder
