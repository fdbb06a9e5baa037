"""The code that replaces a frame: reload the graph's inputs, call it, rebuild the return value.

For `def f(x): return x.sin() ** 2, x.shape[0]` traced with x of shape (3,), the cache entry
runs this instead of f's bytecode:

    def __transformed_f_0(L, G):
        graph_out = __compiled_fn_0(L['x'])
        return (graph_out[0], 3)

TorchDynamo emits the same thing as *bytecode* (a new code object that CPython runs in place of
the original, through the PEP 523 hook). We cannot install that hook from Python (see
docs/04-dynamo.md), so we generate Python source: it reads the same, shows up in tracebacks,
and is kept as text for printing. At a graph break (graph_break.py) the same kind of function
runs the breaking instruction for real and calls a resume function: those start in the middle
of a function, so they are real bytecode (resume_execution.py).
"""

from __future__ import annotations

import builtins
import functools
import itertools
import linecache
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType, FunctionType
from typing import TYPE_CHECKING, Any

import minitorch
from minitorch.autograd.grad_mode import _set as set_grad_mode  # the mode, set now
from minitorch.dtype import DType
from minitorch.errors import register_generated_lines
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import AttrSource, Source
from tracer.dynamo.variables.base import NULL, VariableTracker
from tracer.dynamo.variables.constant import ConstantVariable
from tracer.dynamo.variables.dicts import ConstDictVariable, DictViewVariable
from tracer.dynamo.variables.functions import BuiltinVariable, UserFunctionVariable
from tracer.dynamo.variables.grad_mode import GradModeExit, GradModeExitVariable, GradModeVariable
from tracer.dynamo.variables.nested import NestedUserFunctionVariable
from tracer.dynamo.variables.sets import SetVariable
from tracer.dynamo.variables.tensor import TensorMethodVariable, TensorVariable
from tracer.dynamo.variables.tuples import ListVariable, TupleVariable
from tracer.dynamo.variables.user_class import NewObjectVariable, UserClassVariable, new_object

if TYPE_CHECKING:
    from tracer.dynamo.graph_break import BreakPlan
    from tracer.dynamo.side_effects import SideEffects

_counter = itertools.count()


@dataclass
class TransformedCode:
    """The replacement of a frame for one cache entry: `fn(L, G) -> the frame's return value`."""

    name: str  # '__transformed_f_0'
    source: str  # its Python source, for printing
    namespace: dict[str, Any]  # what the source refers to besides L and G
    # its lines that run the user's code (a graph break) -> the user's 'file.py:12'
    user_lines: dict[int, str] = field(default_factory=dict)
    fn: Callable[[dict, dict], Any] | None = field(default=None, repr=False)

    def finish(self, compiled_fn: Callable | None) -> None:
        """Bind the backend's compiled graph and compile the source."""
        if compiled_fn is not None:
            self.namespace[self.name.replace("__transformed", "__compiled_fn")] = compiled_fn
        filename = f"<{self.name}>"
        linecache.cache[filename] = (len(self.source), None, self.source.splitlines(True), filename)
        register_generated_lines(filename, self.user_lines)  # its errors name the user's line
        exec(compile(self.source, filename, "exec"), self.namespace)  # noqa: S102
        self.fn = self.namespace[self.name]


def generate_transformed_code(
    code: CodeType,
    value: VariableTracker,
    graph_outputs: list[TensorVariable],
    input_sources: list[Source],
    has_graph: bool,
    side_effects: SideEffects,
    grad_mode: bool | None = None,
) -> TransformedCode:
    """The source of the function that returns `value`; raises Unsupported if it cannot.
    `grad_mode`: the mode the frame leaves set, if it changed it."""
    name, namespace, out_index, lines = _begin(code, graph_outputs, input_sources, has_graph)
    if grad_mode is not None:
        namespace["___set_grad_mode"] = set_grad_mode
        lines.append(f"    ___set_grad_mode({grad_mode})")
    rebuild = Rebuilder(out_index, namespace, [value, *side_effects.values()])
    writes = side_effects.codegen(rebuild, out_index)
    result = rebuild.before(writes, rebuild(value))
    lines += [*rebuild.lines, *writes, f"    return {result}"]
    return TransformedCode(name, "\n".join(lines) + "\n", namespace)


def generate_break_code(
    code: CodeType,
    plan: BreakPlan,
    graph_outputs: list[TensorVariable],
    input_sources: list[Source],
    has_graph: bool,
    side_effects: SideEffects,
) -> TransformedCode:
    """The source of the function that runs the graph, then the break, then resumes.

        def __transformed_f_0(L, G):                 # a call that could not be traced
            graph_out = __compiled_fn_f_0(L['x'])
            ___call = ___call_captured(G['print'], 'hi', graph_out[0])
            return ___resume_f_0_0(___call, L['x'], graph_out[0])

        def __transformed_g_1(L, G):                 # `if x.sum() > 0:` on a tensor
            graph_out = __compiled_fn_g_1(L['x'])
            if graph_out[0]:
                return ___resume_g_1_0(L['x'])       # the jump target (POP_JUMP_IF_TRUE)
            return ___resume_g_1_1(L['x'])           # the next instruction

    See [Note: graph breaks] in graph_break.py. Raises Unsupported for a value it cannot rebuild.
    """
    name, namespace, out_index, lines = _begin(code, graph_outputs, input_sources, has_graph)
    rebuild = Rebuilder(out_index, namespace, [*plan.values(), *side_effects.values()])
    writes = side_effects.codegen(rebuild, out_index)  # before the break runs for real

    def read(v: VariableTracker) -> str:  # read before the writes (see Rebuilder.before)
        return rebuild.before(writes, rebuild(v))

    stack = [read(v) for v in plan.stack if v is not NULL]
    live = [f"L[{local!r}]" if v is None else read(v) for local, v in plan.live_locals.items()]
    resume_names = []
    for k, fn in enumerate(plan.resume):
        resume_names.append(f"{name.replace('__transformed', '___resume')}_{k}")
        namespace[resume_names[-1]] = fn

    call_args = []
    if plan.call is not None:
        fn, args, kwargs = plan.call
        call_args = [read(a) for a in args] + [f"{k}={read(v)}" for k, v in kwargs.items()]
        call_args = [read(fn), *call_args]
    condition = read(plan.condition) if plan.condition is not None else None
    lines += [*rebuild.lines, *writes]
    if plan.grad_mode is not None:  # [Note: a break inside a grad mode block]
        namespace["___set_grad_mode"] = set_grad_mode
        lines.append(f"    ___set_grad_mode({plan.grad_mode[0]})")
    if plan.call is not None:
        namespace["___call_captured"] = plan.run_call
        call = f"___call = ___call_captured({', '.join(call_args)})"
        if plan.grad_mode is None or plan.grad_mode[0] == plan.grad_mode[1]:
            lines.append(f"    {call}")
            breaking_line = len(lines)
        else:  # an exception leaves the blocks, as their __exit__ would
            lines += ["    try:", f"        {call}"]
            breaking_line = len(lines)
            lines += [
                "    except BaseException:",
                f"        ___set_grad_mode({plan.grad_mode[1]})",
                "        raise",
            ]
        lines.append(f"    return {resume_names[0]}({', '.join([*stack, '___call', *live])})")
    else:
        # A tensor's truth decides; the resume functions are (jump target, next instruction).
        arguments = ", ".join([*stack, *live])
        taken, not_taken = (0, 1) if plan.jump_if else (1, 0)
        lines.append(f"    if {condition}:")
        breaking_line = len(lines)
        lines.append(f"        return {resume_names[taken]}({arguments})")
        lines.append(f"    return {resume_names[not_taken]}({arguments})")
    user_lines = {} if plan.where is None else {breaking_line: plan.where}
    return TransformedCode(name, "\n".join(lines) + "\n", namespace, user_lines)


def _begin(
    code: CodeType,
    graph_outputs: list[TensorVariable],
    input_sources: list[Source],
    has_graph: bool,
) -> tuple[str, dict[str, Any], dict, list[str]]:
    """A new transformed function's name, namespace, graph-output index, and first lines:
    the `def` and the call of the compiled graph (bound later, by TransformedCode.finish)."""
    n = next(_counter)
    stem = re.sub(r"\W", "_", code.co_name)  # '<lambda>' -> '_lambda_'
    name = f"__transformed_{stem}_{n}"
    out_index = {t.node: i for i, t in enumerate(graph_outputs)}
    lines = [f"def {name}(L, G):"]
    if has_graph:
        args = ", ".join(source.name() for source in input_sources)
        lines.append(f"    graph_out = __compiled_fn_{stem}_{n}({args})")
    return name, _namespace(), out_index, lines


def _namespace() -> dict[str, Any]:
    """What every generated function may name besides L and G (sources use all three)."""
    return {"minitorch": minitorch, "sys": sys, "builtins": builtins}


class Rebuilder:
    """Python expressions for trackers at the end of the frame: `rebuild(v)`.

    A list, dict, set or object made in the frame is rebuilt once: when more than one place holds it
    (`return lst, lst`; a list in a dict and in a local at a graph break; a dict and its
    `.values()` view), its literal is bound to a name first (`___list_0 = [graph_out[0]]`,
    in `lines`) and every place reads that name, so the caller gets one object, as eager.
    """

    def __init__(
        self, out_index: dict, namespace: dict[str, Any], roots: list[VariableTracker]
    ) -> None:
        self.out_index = out_index
        self.namespace = namespace
        self.lines: list[str] = []  # the shared containers' assignments, before their uses
        self.names: dict[int, str | None] = {}
        self.shared = _shared_containers(roots)

    def before(self, writes: list[str], expression: str) -> str:
        """`expression`, read before the replayed writes run when there are any.

        A value read from the frame is rebuilt from where it was read (`L['lst'][0]`,
        `L['obj'].w`), which the writes may change (`L['lst'][:] = ...` after a pop): the
        frame read it before its own mutations, so the transformed code does too."""
        if not writes or expression.isidentifier():
            return expression
        name = f"___read_{len(self.lines)}"
        self.lines.append(f"    {name} = {expression}")
        return name

    def __call__(self, v: VariableTracker) -> str:
        if id(v) not in self.shared:
            return self._expression(v)
        if id(v) not in self.names:
            name = f"___{v.python_type().__name__}_{len(self.names)}"
            self.names[id(v)] = None  # being built: a list that holds itself cannot be
            self.lines.append(f"    {name} = {self._expression(v)}")
            self.names[id(v)] = name
        if self.names[id(v)] is None:
            raise Unsupported(f"rebuilding {v.describe()}, which holds itself")
        return self.names[id(v)]

    def _expression(self, v: VariableTracker) -> str:
        """A Python expression for `v`."""
        rebuild = self
        if isinstance(v, TensorVariable):
            if v.source is not None:  # the caller's tensor (written back first if mutated)
                return v.source.name()
            if v.node in self.out_index:
                return f"graph_out[{self.out_index[v.node]}]"
            raise Unsupported(f"returning {v.describe()}, which no graph output computes")
        if isinstance(v, (ConstDictVariable, ListVariable)) and v.source is not None:
            return v.source.name()  # the caller's dict or list itself (mutations replayed first)
        if isinstance(v, ConstDictVariable):
            text = "{" + ", ".join(f"{k!r}: {rebuild(i)}" for k, i in v.entries.items()) + "}"
            if v.tuple_type is dict:
                return text
            kind = _literal(v.tuple_type, self.namespace)  # OrderedDict, defaultdict
            if v.default_factory is not None:
                return f"{kind}({rebuild(v.default_factory)}, {text})"
            return f"{kind}({text})"
        if isinstance(v, ListVariable):
            return "[" + ", ".join(rebuild(i) for i in v.items) + "]"
        if isinstance(v, SetVariable):
            return f"set({_literal(frozenset(v.values), self.namespace)})"  # a new set
        if isinstance(v, DictViewVariable):  # a live view of the dict rebuilt beside it
            return f"{rebuild(v.dict)}.{v.kind}()"
        if isinstance(v, TupleVariable) and v.source is not None:
            return v.source.name()  # a tuple of the frame (or a shape): immutable, reload it
        if isinstance(v, TupleVariable):
            return self._tuple(v)
        if isinstance(v, ConstantVariable):
            return _literal(v.value, self.namespace)
        if isinstance(v, BuiltinVariable) and v.source is None:  # a defaultdict's list
            return _literal(v.fn, self.namespace)
        if isinstance(v, NewObjectVariable):  # made again, without __init__ (user_class.py)
            self.namespace["___new_object"] = new_object
            attrs = ", ".join(f"{k!r}: {rebuild(i)}" for k, i in v.attrs.items())
            return f"___new_object({rebuild(v.cls)}, {{{attrs}}})"
        if isinstance(v, UserClassVariable) and v.made is not None:  # a class statement's
            make, bases = v.made  # made again: eager makes a new class on every call
            name = f"___build_class_{len(self.namespace)}"
            self.namespace[name] = make
            return f"{name}({', '.join(rebuild(b) for b in bases)})"
        if isinstance(v, UserClassVariable) and v.source is None:  # a method's class cell
            return _literal(v.value, self.namespace)
        if isinstance(v, GradModeExitVariable) and isinstance(v.manager, GradModeVariable):
            self.namespace["___grad_mode_exit"] = GradModeExit  # a block left at a break
            return f"___grad_mode_exit({v.manager.previous})"
        if isinstance(v, NestedUserFunctionVariable):  # a def of the frame, live at a break
            return _rebuild_function(v, rebuild)
        if isinstance(v, TensorMethodVariable):  # x.item, to be called at a graph break
            return f"{rebuild(v.tensor)}.{v.name}"
        if isinstance(v, UserFunctionVariable) and v.bound_self is not None:
            return _rebuild_method(v, rebuild)
        if v.source is not None:
            return v.source.name()  # a value of the frame that tracing only passed along
        raise Unsupported(f"returning {v.describe()}")

    def _tuple(self, v: TupleVariable) -> str:
        items = [self(i) for i in v.items]
        text = "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        if v.tuple_type is tuple:
            return text
        if v.tuple_type is minitorch.Size:
            return f"minitorch.Size({text})"
        if v.is_named():  # return_types.max(values, indices) and the like
            name = f"___tuple_type_{len(self.namespace)}"
            self.namespace[name] = v.tuple_type
            return f"{name}{text}"
        raise Unsupported(f"returning a {v.tuple_type.__name__}")


def _shared_containers(roots: list[VariableTracker]) -> set[int]:
    """The ids of the frame's lists, dicts and sets that more than one place holds."""
    seen: set[int] = set()
    shared: set[int] = set()

    def visit(v: VariableTracker) -> None:
        mutable = (
            isinstance(v, (ListVariable, ConstDictVariable, SetVariable, NewObjectVariable))
            or getattr(v, "made", None) is not None
        )
        if mutable and id(v) in seen:  # (the caller's list holding its dict holding it: once)
            if v.source is None:
                shared.add(id(v))
            return
        if mutable:
            seen.add(id(v))
        if isinstance(v, TupleVariable):
            for item in v.items:
                visit(item)
        elif isinstance(v, DictViewVariable):
            visit(v.dict)
        elif isinstance(v, UserFunctionVariable) and v.bound_self is not None:
            visit(v.bound_self)  # `m.step`, called at a break: the same m as the local's
        elif isinstance(v, NewObjectVariable):
            visit(v.cls)
            for item in v.attrs.values():
                visit(item)

    for root in roots:
        visit(root)
    return shared


def _rebuild_method(v: UserFunctionVariable, rebuild: Rebuilder) -> str:
    """`self.encode`, a method found on the class: looked up again on its object (its guards,
    method_of in user_object.py, say that this finds the same function)."""
    source = v.fn_source
    if isinstance(source, AttrSource) and source.member == "__func__":
        source = source.base  # a classmethod, read as G['A'].make.__func__ (user_class.py)
    if not isinstance(source, AttrSource):
        raise Unsupported(f"rebuilding the method {v.describe()}")
    return f"{rebuild(v.bound_self)}.{source.member}"


def _rebuild_function(v: NestedUserFunctionVariable, rebuild: Rebuilder) -> str:
    """`def inner` made again, as MAKE_FUNCTION would: only without a closure, whose cells
    the function would have to share with the resume function's own."""
    if v.code.co_freevars:
        raise Unsupported(f"{v.describe()} is a closure; it cannot be rebuilt after a break")
    defaults = "None" if v.defaults is None else rebuild(v.defaults)
    kwdefaults = "None" if v.kwdefaults is None else rebuild(v.kwdefaults)
    name = f"___make_function_{len(rebuild.namespace)}"
    rebuild.namespace[name] = functools.partial(make_function, v.code, v.maker.frame.f_globals)
    return f"{name}({defaults}, {kwdefaults})"


def make_function(
    code: CodeType, f_globals: dict, defaults: tuple | None, kwdefaults: dict | None
) -> FunctionType:
    """What MAKE_FUNCTION does with a code object and its defaults."""
    fn = FunctionType(code, f_globals, code.co_name, defaults)
    fn.__kwdefaults__ = kwdefaults
    fn.__qualname__ = code.co_qualname
    return fn


def _literal(value: Any, namespace: dict[str, Any]) -> str:
    if value is None or type(value) in (bool, int, str):
        return repr(value)
    if type(value) is float and math.isfinite(value):
        return repr(value)
    if isinstance(value, DType):
        return repr(value)  # minitorch.float32
    name = f"___const_{len(namespace)}"
    namespace[name] = value
    return name
