"""`InstructionTranslator`: runs a frame's bytecode on trackers instead of values.

It is a small CPython: a stack, a dict of locals and an instruction pointer, and one method per
opname (`LOAD_FAST`, `BINARY_OP`, `CALL`), looked up by name, as TorchDynamo's translator does.
The values on its stack are VariableTrackers (variables/): a tensor is a graph node plus a fake
tensor, so running `x.sin() ** 2` *records* two nodes instead of computing anything.

    def f(x):                      LOAD_FAST x        push TensorVariable(%x)
        return x.sin() ** 2        LOAD_ATTR sin      push the bound method (and a NULL)
                                   CALL 0             record %sin = x.sin(); push it
                                   LOAD_CONST 2       push ConstantVariable(2)
                                   BINARY_OP **       record %pow_1 = sin ** 2; push it
                                   RETURN_VALUE       output (pow_1,); compile the graph

Straight-line code, branches on constants, loops over known sequences (unrolled), containers
(container_opcodes.py) and inlined functions (helpers, module methods, functions made in the
frame: variables/nested.py) are traced; anything else raises `Unsupported` with a reason, and
graph_break.py breaks the graph there or convert_frame.py runs the frame eagerly. Version
differences are asked of compat.py, never of sys.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

from tracer.dynamo import compat, side_effects
from tracer.dynamo import container_opcodes as containers
from tracer.dynamo import import_opcodes as imports
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.graph_break import try_graph_break
from tracer.dynamo.instructions import Instruction, read_instructions
from tracer.dynamo.opcodes import (
    BINARY_OPERATORS,
    COMPARE_OPERATORS,
    MISSING_REASONS,
    jump_or_pop,
    nop,
    pop_jump_if,
    pop_jump_if_none,
    unary,
)
from tracer.dynamo.source import BuiltinSource, LocalSource, Source
from tracer.dynamo.variables import (
    NULL,
    BuiltinVariable,
    ConstantVariable,
    OpaqueVariable,
    TensorVariable,
    TupleVariable,
    VariableTracker,
    constant,
    nested,
    user_class,
    wrap,
)
from tracer.dynamo.variables.container_calls import MUTABLE
from tracer.dynamo.variables.dicts import DictViewVariable
from tracer.dynamo.variables.grad_mode import AutocastVariable, GradModeVariable
from tracer.dynamo.variables.inplace import INPLACE_METHODS, InPlaceMethodVariable
from tracer.dynamo.variables.iterators import end_for, for_iter, get_iter
from tracer.dynamo.variables.user_class import NewObjectVariable

if TYPE_CHECKING:
    from tracer.dynamo.eval_frame import Frame
    from tracer.dynamo.output_graph import OutputGraph

# Unrolling a loop whose condition is a constant is just following its jumps; this bounds it.
MAX_INSTRUCTIONS = 100_000

# Trackers that hold the very object (a constant, a builtin function or class): `is` on two
# of them is known.
KNOWN_OBJECTS = (ConstantVariable, BuiltinVariable, user_class.UserClassVariable)


class InstructionTranslator:
    """Symbolically interprets one frame, building its graph in `output`."""

    def __init__(self, frame: Frame, output: OutputGraph) -> None:
        self.frame = frame
        self.output = output
        self.depth = 0  # how many inlined calls deep (InliningTranslator)
        self.parent: InstructionTranslator | None = None  # the caller, when inlined
        self.instruction: Instruction | None = None  # the one running: its line is the node's
        self.root_globals = frame.f_globals  # what G means in sources and guards
        self.instructions = read_instructions(frame.code)
        self.stack: list[VariableTracker] = []
        self.symbolic_locals: dict[str, VariableTracker] = {}
        # Arguments not read yet: wrapped on first use, so unused ones get no guards.
        self.unread_arguments: dict[str, object] = dict(frame.f_locals)
        self.kw_names: tuple[str, ...] = ()  # set by KW_NAMES for the next CALL
        self.next_index = 0  # the instruction pointer, an index into `instructions`
        self.done = False
        self.with_blocks: list[VariableTracker] = []  # grad mode blocks entered, innermost last

    # ---- the loop ----------------------------------------------------------------------------

    def run(self) -> None:
        """Interpret until RETURN_VALUE (which compiles the graph) or Unsupported."""
        steps = 0
        while not self.done:
            inst = self.instructions[self.next_index]
            self.next_index += 1
            steps += 1
            if steps > MAX_INSTRUCTIONS:
                raise self._located(
                    Unsupported("the trace ran too long (a loop that does not end?)"), inst
                )
            self.step(inst)

    def step(self, inst: Instruction) -> None:
        handler = getattr(self, inst.opname, None)
        stack, kw_names = list(self.stack), self.kw_names  # for a graph break: the state before
        mutations = self.output.side_effects.version  # an inlined call that wrote cannot break
        start = self.output.begin_instruction() if self.depth == 0 else None
        # nodes recorded now are located at this instruction ([Note: provenance])
        self.instruction, translating = inst, self.output.translating
        self.output.translating = self
        try:
            if inst.protected and not self.with_blocks:  # (a grad mode block: traced)
                raise Unsupported(
                    "code inside a try or with block (exception handling is not traced yet)"
                )
            if handler is None:
                words = MISSING_REASONS.get(inst.opname, "no handler for it yet")
                raise Unsupported(f"missing: {inst.opname} ({words})")
            handler(inst)
        except Unsupported as e:
            e = self._located(e, inst)
            e.in_with_block = e.in_with_block or bool(self.with_blocks)
            if start is not None:  # it runs for real at a break, in the mode it started in
                self.output.undo_mode_changes(start)
            if self.output.side_effects.version == mutations and try_graph_break(
                self, inst, self.next_index - 1, e, stack, kw_names
            ):
                return  # the graph so far is compiled; a resume function does the rest
            raise e from None
        finally:
            self.output.translating = translating

    def _located(self, e: Unsupported, inst: Instruction) -> Unsupported:
        if e.lineno is None:
            e.filename, e.lineno, e.opname = self.frame.code.co_filename, inst.lineno, inst.opname
        return e

    # ---- helpers -----------------------------------------------------------------------------

    def push(self, *values: VariableTracker) -> None:
        self.stack.extend(values)

    def pop(self) -> VariableTracker:
        return self.stack.pop()

    def popn(self, n: int) -> list[VariableTracker]:
        """The top `n` values, in the order they were pushed."""
        if n == 0:
            return []
        values = self.stack[-n:]
        del self.stack[-n:]
        return values

    def call(
        self,
        fn: VariableTracker,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker] | None = None,
    ) -> VariableTracker:
        return fn.call_function(self, args, kwargs or {})

    def jump(self, inst: Instruction) -> None:
        self.next_index = inst.target

    def truth(self, value: VariableTracker) -> bool:
        """bool(value), which must be known while tracing."""
        if isinstance(value, TensorVariable):
            raise Unsupported("a branch on a tensor's value (data-dependent control flow)")
        if value.is_python_constant():
            return bool(value.as_python_constant())
        if isinstance(value, TupleVariable):
            return bool(value.items)
        if isinstance(value, DictViewVariable):
            return bool(value.current())
        raise Unsupported(f"the truth value of {value.describe()}")

    def _return(self, value: VariableTracker) -> None:
        self.output.compile_subgraph(value, reason="return value")
        self.done = True

    # ---- locals, constants, globals ------------------------------------------------------

    def _load_local(self, name: str) -> VariableTracker:
        if name in self.unread_arguments:
            value = self.unread_arguments.pop(name)
            self.symbolic_locals[name] = wrap(self, value, self.local_source(name))
        if name not in self.symbolic_locals:
            raise Unsupported(f"local variable {name!r} is read before it is assigned")
        return self.symbolic_locals[name]

    def local_source(self, name: str) -> Source:
        """Where an argument not read yet is reloaded from: L['x'] (a closure's cell, when
        inlined: InliningTranslator)."""
        return LocalSource(name)

    def _store_local(self, name: str, value: VariableTracker) -> None:
        self.unread_arguments.pop(name, None)
        self.symbolic_locals[name] = value

    def LOAD_FAST(self, inst: Instruction) -> None:
        self.push(self._load_local(inst.argval))

    LOAD_FAST_CHECK = LOAD_FAST  # 3.12+: LOAD_FAST that may find the local unbound
    LOAD_FAST_AND_CLEAR = nested.load_fast_and_clear  # 3.12+: an inlined comprehension

    def LOAD_FAST_LOAD_FAST(self, inst: Instruction) -> None:  # 3.13: two loads fused
        for name in inst.argval:
            self.push(self._load_local(name))

    def STORE_FAST(self, inst: Instruction) -> None:
        value = self.pop()
        if value is NULL:  # 3.12+: a comprehension restores a variable that was unbound
            self.DELETE_FAST(inst)
        else:
            self._store_local(inst.argval, value)

    def STORE_FAST_STORE_FAST(self, inst: Instruction) -> None:  # 3.13: `a, b = ...` stores
        for name in inst.argval:
            self._store_local(name, self.pop())

    def STORE_FAST_LOAD_FAST(self, inst: Instruction) -> None:  # 3.13
        store, load = inst.argval
        self._store_local(store, self.pop())
        self.push(self._load_local(load))

    def DELETE_FAST(self, inst: Instruction) -> None:
        self.unread_arguments.pop(inst.argval, None)
        self.symbolic_locals.pop(inst.argval, None)

    def read_cell(self, name: str) -> VariableTracker:
        """The value of this frame's cell or free variable `name`, now."""
        return self._load_local(name)

    MAKE_CELL = nop  # cells and free variables are locals while tracing (variables/nested.py)
    LOAD_DEREF = nested.load_deref
    STORE_DEREF = nested.store_deref
    MAKE_FUNCTION = nested.make_function
    SET_FUNCTION_ATTRIBUTE = nested.set_function_attribute  # 3.13
    LOAD_CLOSURE = nested.load_closure  # 3.11, 3.12

    def LOAD_CONST(self, inst: Instruction) -> None:
        value = inst.argval
        is_code = hasattr(value, "co_code")  # the body of a nested def or lambda
        self.push(OpaqueVariable(value) if is_code else constant(value))

    def RETURN_CONST(self, inst: Instruction) -> None:  # 3.12+
        self._return(constant(inst.argval))

    def RETURN_VALUE(self, inst: Instruction) -> None:
        self._return(self.pop())

    def LOAD_GLOBAL(self, inst: Instruction) -> None:
        value = self._load_global(inst.argval)
        if compat.load_global_pushes_null(inst.arg):
            self.push(*compat.with_null(value, NULL))
        else:
            self.push(value)

    def _load_global(self, name: str) -> VariableTracker:
        from tracer.dynamo.variables.inline import global_source

        if name in self.frame.f_globals:
            return wrap(self, self.frame.f_globals[name], global_source(self, name))
        if name in self.frame.f_builtins:
            # Its NOT_SHADOWED guard reads G, the root frame's globals: only valid there.
            own = self.frame.f_globals is self.root_globals
            return wrap(self, self.frame.f_builtins[name], BuiltinSource(name), guard=own)
        raise Unsupported(f"name {name!r} is not defined")

    # ---- attributes and calls -------------------------------------------------------------

    def LOAD_ATTR(self, inst: Instruction) -> None:
        if compat.load_attr_is_method(inst.arg):
            self.LOAD_METHOD(inst)
            return
        self.push(self._getattr(self.pop(), inst.argval))

    def LOAD_METHOD(self, inst: Instruction) -> None:
        """Push the bound method with a NULL, as for a plain callable (see compat.py)."""
        self.push(*compat.with_null(self._getattr(self.pop(), inst.argval), NULL))

    def _getattr(self, obj: VariableTracker, name: str) -> VariableTracker:
        if isinstance(obj, TensorVariable) and name in INPLACE_METHODS:
            return InPlaceMethodVariable(obj, name)  # y.add_(1): recorded functionally
        return obj.var_getattr(self, name)

    def PUSH_NULL(self, inst: Instruction) -> None:
        self.push(NULL)

    def KW_NAMES(self, inst: Instruction) -> None:  # 3.11, 3.12: names for the next CALL
        self.kw_names = inst.argval

    def CALL(self, inst: Instruction) -> None:
        kw_names, self.kw_names = self.kw_names, ()
        self._call(inst.arg, kw_names)

    def CALL_KW(self, inst: Instruction) -> None:  # 3.13: the names tuple is on the stack
        kw_names = self.pop().as_python_constant()
        self._call(inst.arg, kw_names)

    def _call(self, argc: int, kw_names: tuple[str, ...]) -> None:
        args = self.popn(argc)
        first, second = self.popn(2)
        fn, self_arg = compat.split_call_slots(first, second, lambda v: v is NULL)
        if self_arg is not None:
            args = [self_arg, *args]
        n_positional = len(args) - len(kw_names)
        kwargs = dict(zip(kw_names, args[n_positional:]))
        self.push(self.call(fn, args[:n_positional], kwargs))

    PRECALL = nop  # 3.11: prepared the call; CALL does all the work here

    # ---- operators -------------------------------------------------------------------------

    def BINARY_OP(self, inst: Instruction) -> None:
        right = self.pop()
        left = self.pop()
        self.push(self.call(BuiltinVariable(BINARY_OPERATORS[inst.argval]), [left, right]))

    def COMPARE_OP(self, inst: Instruction) -> None:
        right = self.pop()
        left = self.pop()
        self.push(self.call(BuiltinVariable(COMPARE_OPERATORS[inst.argval]), [left, right]))

    def IS_OP(self, inst: Instruction) -> None:
        """`a is b` / `a is not b` (arg 1): known for constants, and for None vs anything."""
        right = self.pop()
        left = self.pop()
        if left is right:
            same = True
        elif isinstance(left, ConstantVariable) and isinstance(right, ConstantVariable):
            same = left.value is right.value
        elif isinstance(left, KNOWN_OBJECTS) and isinstance(right, KNOWN_OBJECTS):
            same = left.as_python_constant() is right.as_python_constant()  # type(v) is int
        elif _is_none(left) or _is_none(right):
            same = False  # only ConstantVariables hold None
        elif isinstance(left, MUTABLE) or isinstance(right, MUTABLE):
            same = False  # one list, dict or set is one tracker (builder.py, container_calls.py)
        elif isinstance(left, NewObjectVariable) or isinstance(right, NewObjectVariable):
            same = False  # one object made in the frame is one tracker (user_class.py)
        else:
            raise Unsupported(f"`is` between {left.describe()} and {right.describe()}")
        self.push(ConstantVariable(same != bool(inst.arg)))

    def BEFORE_WITH(self, inst: Instruction) -> None:
        """`with no_grad():`: enter the block (variables/grad_mode.py); push its __exit__
        and what __enter__ returned (None)."""
        manager = self.pop()
        if not isinstance(manager, (GradModeVariable, AutocastVariable)):
            raise Unsupported(
                f"a with block over {manager.describe()} (only no_grad, "
                "enable_grad, set_grad_enabled and autocast blocks are traced)"
            )
        entered = (
            ConstantVariable(None)
            if isinstance(manager, GradModeVariable)
            else OpaqueVariable(manager.manager)
        )  # `with autocast(...) as ac`: the manager
        self.push(manager.enter(self), entered)

    CONTAINS_OP = containers.contains_op
    BINARY_SUBSCR = containers.binary_subscr
    BINARY_SLICE = containers.binary_slice  # 3.12+
    BUILD_SLICE = containers.build_slice

    UNARY_NEGATIVE = unary(operator.neg)
    UNARY_POSITIVE = unary(operator.pos)  # 3.11: 3.12+ use CALL_INTRINSIC_1
    UNARY_INVERT = unary(operator.invert)

    def UNARY_NOT(self, inst: Instruction) -> None:
        self.push(ConstantVariable(not self.truth(self.pop())))

    def TO_BOOL(self, inst: Instruction) -> None:  # 3.13: before every conditional jump
        self.push(ConstantVariable(self.truth(self.pop())))

    def CALL_INTRINSIC_1(self, inst: Instruction) -> None:  # 3.12+
        if inst.argval == "INTRINSIC_UNARY_POSITIVE":
            self.push(self.call(BuiltinVariable(operator.pos), [self.pop()]))
        elif inst.argval == "INTRINSIC_LIST_TO_TUPLE":
            self.LIST_TO_TUPLE(inst)
        else:
            raise Unsupported(f"missing: CALL_INTRINSIC_1 {inst.argval}")

    IMPORT_NAME = imports.import_name  # import_opcodes.py
    IMPORT_FROM = imports.import_from

    # ---- tuples, lists, dicts, strings (container_opcodes.py) -----------------------------

    BUILD_TUPLE = containers.build_tuple
    BUILD_LIST = containers.build_list
    LIST_EXTEND = containers.list_extend
    LIST_APPEND = containers.list_append
    LIST_TO_TUPLE = containers.list_to_tuple
    UNPACK_SEQUENCE = containers.unpack_sequence
    UNPACK_EX = containers.unpack_ex
    BUILD_MAP = containers.build_map
    BUILD_CONST_KEY_MAP = containers.build_const_key_map
    MAP_ADD = containers.map_add
    DICT_UPDATE = containers.dict_update
    DICT_MERGE = containers.dict_merge
    CALL_FUNCTION_EX = containers.call_function_ex
    STORE_SUBSCR = containers.store_subscr
    STORE_SLICE = containers.store_slice  # 3.12+
    DELETE_SUBSCR = containers.delete_subscr
    BUILD_SET = containers.build_set
    SET_ADD = containers.set_add
    SET_UPDATE = containers.set_update
    STORE_ATTR = side_effects.store_attr
    LOAD_BUILD_CLASS = user_class.load_build_class
    LOAD_SUPER_ATTR = user_class.load_super_attr  # 3.12+
    BUILD_STRING = containers.build_string
    FORMAT_VALUE = containers.format_value
    FORMAT_SIMPLE = containers.format_value
    FORMAT_WITH_SPEC = containers.format_with_spec
    CONVERT_VALUE = containers.convert_value

    # ---- the stack -----------------------------------------------------------------------

    def POP_TOP(self, inst: Instruction) -> None:
        self.pop()

    def COPY(self, inst: Instruction) -> None:
        self.push(self.stack[-inst.arg])

    def SWAP(self, inst: Instruction) -> None:
        self.stack[-1], self.stack[-inst.arg] = self.stack[-inst.arg], self.stack[-1]

    NOP = nop
    RESUME = nop  # the start of the function (and of resumed generators)
    CACHE = nop  # inline caches: instructions.py already drops them
    COPY_FREE_VARS = nop  # the frame view already holds the closure's values in L

    # ---- loops: unrolled over a sequence known while tracing (variables/iterators.py) ----

    GET_ITER = get_iter
    FOR_ITER = for_iter
    END_FOR = end_for

    # ---- jumps (their condition must be a constant) ------------------------------------------

    def JUMP_FORWARD(self, inst: Instruction) -> None:
        self.jump(inst)

    JUMP_BACKWARD = JUMP_FORWARD
    JUMP_BACKWARD_NO_INTERRUPT = JUMP_FORWARD

    POP_JUMP_IF_TRUE = pop_jump_if(True)
    POP_JUMP_IF_FALSE = pop_jump_if(False)
    POP_JUMP_FORWARD_IF_TRUE = pop_jump_if(True)  # 3.11
    POP_JUMP_FORWARD_IF_FALSE = pop_jump_if(False)  # 3.11
    POP_JUMP_BACKWARD_IF_TRUE = pop_jump_if(True)  # 3.11
    POP_JUMP_BACKWARD_IF_FALSE = pop_jump_if(False)  # 3.11
    POP_JUMP_IF_NONE = pop_jump_if_none(True)
    POP_JUMP_IF_NOT_NONE = pop_jump_if_none(False)
    POP_JUMP_FORWARD_IF_NONE = pop_jump_if_none(True)  # 3.11
    POP_JUMP_FORWARD_IF_NOT_NONE = pop_jump_if_none(False)  # 3.11
    POP_JUMP_BACKWARD_IF_NONE = pop_jump_if_none(True)  # 3.11
    POP_JUMP_BACKWARD_IF_NOT_NONE = pop_jump_if_none(False)  # 3.11
    JUMP_IF_TRUE_OR_POP = jump_or_pop(True)  # 3.11
    JUMP_IF_FALSE_OR_POP = jump_or_pop(False)  # 3.11


def _is_none(value: VariableTracker) -> bool:
    return isinstance(value, ConstantVariable) and value.value is None
