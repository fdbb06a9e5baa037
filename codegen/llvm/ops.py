"""The ops handler of the LLVM backend: its values are LLVM registers, so running a loop body
emits its code (see [Note: the LLVM kernel] in kernel.py for the loops around it).

    with set_ops_handler(LLVMOps(builder, pointers, dtypes)):
        value = inner_fn(index)        # ops.sin(ops.load("x", i0)) -> %"sin" = call float ...

Each op is one instruction or intrinsic where LLVM has one (fadd, fcmp, select, llvm.fabs,
llvm.maximum), and otherwise a call of one of our own vectorizable math functions
(mathlib.py, activations.py, and trig.py's sin and cos when config.exact_trig is on).
Integers (int32 and int64, as i32 and i64) take the integer instructions: add, icmp with
signed predicates, llvm.smax, llvm.abs; they wrap around on overflow, as numpy's do.
Transcendental functions and division take floats only: lowering converts integers first,
as PyTorch's `sin(int)` and `int / int` give floats.

Besides the core ops, LLVMOps implements the composite ops it does better than their
decompositions in ir/op_table.py ([Note: the loop-IR ops]): sub and neg (one instruction each),
ne (one fcmp), maximum and minimum (intrinsics), tanh and sigmoid (activations.py). Any other
op of the table (sqrt, relu, log1p, ...) runs as its decomposition, which calls the methods
here; tests/codegen/test_loop_op_lowerings.py names an op that has neither.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType

from llvmlite import ir

from codegen.llvm import activations, mathlib, random
from codegen.llvm.loops import I64, IndexValue, i64
from ir.indexing import Expr, Var
from ir.ops_handler import OpsHandler
from minitorch import config
from minitorch.dtype import DType
from minitorch.errors import CompileError, DTypeError

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
# dtype name -> LLVM type. NOTE: a bool is a byte holding 0 or 1, in memory as numpy keeps it
# and in registers too; comparisons widen their i1 to it, and `where` narrows it back. So i8
# means bool, and i32 and i64 are the integers: the width of an IntType says which it is.
_IR_TYPES = {
    "float32": mathlib.F32, "float64": mathlib.F64, "int32": I32, "int64": I64, "bool": I8,
}  # fmt: skip


def ir_type(dtype: DType) -> ir.Type:
    """The LLVM type of a dtype's elements (float32 -> float, int64 -> i64, bool -> i8)."""
    if dtype.name not in _IR_TYPES:
        raise DTypeError(f"the LLVM backend does not support dtype {dtype.name} yet")
    return _IR_TYPES[dtype.name]


def is_integer(type_: ir.Type) -> bool:
    """Whether `type_` is an int32 or int64 element (i8 is a bool, not an integer)."""
    return type_ in (I32, I64)


def _literal(value: float | int, type_: ir.Type) -> ir.Constant:
    """`value` as a constant of an element type: a float, an integer or a bool byte (0 or 1)."""
    if type_ == I8:
        return ir.Constant(I8, int(bool(value)))
    if is_integer(type_):
        return ir.Constant(type_, _integer(value, type_.width))
    return ir.Constant(type_, float(value))


def _integer(value: float | int, width: int) -> int:
    """A number as an integer literal: truncated toward zero, as numpy converts it; a value
    the integer cannot hold is refused, as numpy refuses it."""
    if not math.isfinite(value) or not -(2 ** (width - 1)) <= int(value) < 2 ** (width - 1):
        raise CompileError(f"the constant {value} does not fit in an int{width}")
    return int(value)


def call_intrinsic(builder: ir.IRBuilder, name: str, *args: ir.Value) -> ir.Value:
    t = args[0].type
    fn = builder.module.declare_intrinsic(name, [t], ir.FunctionType(t, [t] * len(args)))
    return builder.call(fn, args)


def freeze(builder: ir.IRBuilder, value: ir.Value) -> ir.Value:
    """`freeze value`: the same value (it only pins down poison, which we never make), which
    llvmlite's builder has no method for. reductions.py says why a kernel wants one."""
    instruction = ir.Instruction(builder.block, value.type, "freeze", [value])
    builder._insert(instruction)  # NOTE: how llvmlite's own builder methods add theirs
    return instruction


class Lanes:
    """The value of a node for every output in the current tile: a [T x type] stack array
    (see [Note: reductions across outputs] in kernel.py)."""

    def __init__(self, array: ir.Value, element: ir.Type) -> None:
        self.array = array
        self.element = element  # the node's element type


class LLVMOps(OpsHandler):
    """An ops handler whose values are LLVM registers: running a loop body emits its code.

    Equal ops on equal operands return the register made the first time (lowering inlines
    `sin(x)` into every consumer; this is where the duplicates collapse), within one scope:
    a value made inside a reduction loop is forgotten when the loop ends.
    """

    def __init__(
        self,
        builder: ir.IRBuilder,
        pointers: dict[str, ir.Value],
        dtypes: dict[str, DType],
        huge_seen: ir.Value | None = None,
        index_error: ir.Value | None = None,
    ):
        self.builder = builder
        # Where an index out of its dim is reported: an i64[3], (1, index, size); see
        # indirect_indexing. None in a kernel compiled without one (which then refuses them).
        self.index_error = index_error
        # Where sin and cos note an argument too big for their fast path (an i1 stack slot),
        # or None: then they emit the version that is right for every x (see trig.py).
        self.huge_seen = huge_seen
        self.uses_trig = False  # whether the body called sin or cos
        self.pointers = pointers  # buffer name -> its data pointer (element 0)
        self.dtypes = dtypes  # buffer name -> dtype
        self.index_env: dict[str, IndexValue] = {}  # 'i0', 'r0', ... -> the loop counters
        self.registers: dict[str, tuple[Expr, ir.Value | Lanes]] = {}  # node -> (index, value)
        self.lane: ir.Value | None = None  # the output in a tile, see _emit_output_tiles
        self._made: dict[tuple, ir.Value] = {}  # (op, operands...) -> the register it gave

    @contextmanager
    def scope(self) -> Iterator[None]:
        """Forget the values made inside the block when it ends (they live in a loop body)."""
        outer = dict(self._made)
        yield
        self._made = outer

    def _once(self, key: tuple, make: Callable[[], ir.Value]) -> ir.Value:
        if key not in self._made:
            self._made[key] = make()
        return self._made[key]

    def _same_type(self, op: str, a: ir.Value, b: ir.Value) -> None:
        if a.type != b.type:
            raise CompileError(f"ops.{op} on {a.type} and {b.type}: convert with ops.to_dtype")

    def load(self, name: str, index: Expr) -> ir.Value:
        if name in self.registers:  # computed earlier in this kernel: use the register
            stored_at, value = self.registers[name]
            if index != stored_at:
                raise CompileError(
                    f"load of {name} at {index}, but this kernel has it at {stored_at}"
                )
            if isinstance(value, Lanes):
                return self.builder.load(self.lane_address(value, self.lane), typ=value.element)
            return value
        element = ir_type(self.dtypes[name])
        return self._once(
            ("load", name, index),
            lambda: self.builder.load(
                self._address(name, index), name=f"{name}[{index}]", typ=element
            ),
        )

    def store(self, name: str, index: Expr, value: ir.Value) -> None:
        """Write `value` to element `index` of buffer `name` (not an op: the kernel calls it)."""
        self.builder.store(value, self._address(name, index))

    def lane_address(self, lanes: Lanes, lane: ir.Value) -> ir.Value:
        """&lanes[lane], one output's slot in a tile's accumulator array."""
        return self.builder.gep(lanes.array, [i64(0), lane], inbounds=True)

    def _address(self, name: str, index: Expr) -> ir.Value:
        """&buffer[index]: the flat index computed in i64 registers, scaled by the element size."""
        offset = index.evaluate(self.index_env)
        offset = offset.value if isinstance(offset, IndexValue) else i64(offset)
        element = ir_type(self.dtypes[name])
        # inbounds: the element lies inside the caller's array, even at a negative offset.
        pointer = self.pointers[name]
        return self.builder.gep(
            pointer, [offset], inbounds=True, name=f"&{name}[{index}]", source_etype=element
        )

    def constant(self, value: float | int, dtype: DType) -> ir.Value:
        return _literal(value, ir_type(dtype))

    def constant_like(self, value: float | int, like: ir.Value) -> ir.Value:
        return _literal(value, like.type)

    def to_dtype(self, a: ir.Value, dtype: DType) -> ir.Value:
        target = ir_type(dtype)
        if a.type == target:
            return a
        return self._once(("to_dtype", a, dtype.name), lambda: self._convert(a, target))

    def _convert(self, a: ir.Value, target: ir.Type) -> ir.Value:
        """numpy's astype between any two of float, double, i32, i64 and bool (i8)."""
        b, source = self.builder, a.type
        if target == I8:  # -> bool: a != 0, and NaN is True (unordered), as numpy says
            if is_integer(source):
                nonzero = b.icmp_unsigned("!=", a, ir.Constant(source, 0))
            else:
                nonzero = b.fcmp_unordered("!=", a, ir.Constant(source, 0.0))
            return b.zext(nonzero, I8)
        if source == I8:  # bool -> 0 or 1
            return b.zext(a, target) if is_integer(target) else b.uitofp(a, target)
        if is_integer(source) and is_integer(target):  # wraps around, as numpy's astype
            return b.sext(a, target) if target.width > source.width else b.trunc(a, target)
        if is_integer(source):  # rounds to nearest, as numpy's
            return b.sitofp(a, target)
        if is_integer(target):
            return self._float_to_int(a, target)
        convert = b.fpext if target == mathlib.F64 else b.fptrunc
        return convert(a, target)

    def _float_to_int(self, a: ir.Value, target: ir.IntType) -> ir.Value:
        """Toward zero; NaN, and a float the integer cannot hold, give the smallest integer, as
        x86's conversion instruction does and so numpy's astype on this CPU (PyTorch calls
        them undefined). LLVM's fptosi alone would make them poison, a value the optimizer
        may take for anything: `nan.long() == 0` could fold to true, where eager says False."""
        b = self.builder
        limit = ir.Constant(a.type, float(2 ** (target.width - 1)))
        inside = b.and_(b.fcmp_ordered(">=", a, b.fneg(limit)), b.fcmp_ordered("<", a, limit))
        smallest = ir.Constant(target, -(2 ** (target.width - 1)))
        return b.select(inside, b.fptosi(a, target), smallest)  # (the other arm's poison unused)

    # Arithmetic picks its instruction by the operands' type: floats (fadd), integers (add,
    # which wraps around as numpy's does), or bools, where + is `or` and * is `and` as in eager
    # mode (0 or 1 stays a bool). None: the IR has no such op on that type.
    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self._arithmetic("add", a, b, self.builder.fadd, self.builder.add, self.builder.or_)

    def sub(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self._arithmetic("sub", a, b, self.builder.fsub, self.builder.sub, None)

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self._arithmetic("mul", a, b, self.builder.fmul, self.builder.mul, self.builder.and_)

    def div(self, a: ir.Value, b: ir.Value) -> ir.Value:
        # Dividing integers gives a float (PyTorch's true division): lowering converts first.
        return self._arithmetic("div", a, b, self.builder.fdiv, None, None)

    # llvm.maximum/minimum propagate NaN, as numpy's do (llvm.maxnum would drop it); on bools
    # (bytes 0 and 1) they are `or` and `and`.
    def maximum(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self._arithmetic(
            "maximum", a, b, self._intrinsic("llvm.maximum"), self._intrinsic("llvm.smax"),
            self.builder.or_,
        )  # fmt: skip

    def minimum(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self._arithmetic(
            "minimum", a, b, self._intrinsic("llvm.minimum"), self._intrinsic("llvm.smin"),
            self.builder.and_,
        )  # fmt: skip

    def _intrinsic(self, intrinsic: str) -> Callable[..., ir.Value]:
        """An emitter of a two-operand intrinsic, called as the builder's methods are."""
        return lambda a, b, name="": call_intrinsic(self.builder, intrinsic, a, b)

    def _arithmetic(
        self,
        op: str,
        a: ir.Value,
        b: ir.Value,
        on_floats: Callable[..., ir.Value],
        on_integers: Callable[..., ir.Value] | None,
        on_bools: Callable[..., ir.Value] | None,
    ) -> ir.Value:
        self._same_type(op, a, b)
        emit = on_bools if a.type == I8 else on_integers if is_integer(a.type) else on_floats
        if emit is None:
            kind = "bools" if a.type == I8 else "integers"
            raise CompileError(f"ops.{op} of {kind} is not a loop-IR op: convert with to_dtype")
        return self._once((op, a, b), lambda: emit(a, b, name=op))

    def neg(self, a: ir.Value) -> ir.Value:
        if is_integer(a.type):  # 0 - a (wraps at the minimum, as numpy's)
            return self._once(("neg", a), lambda: self.builder.neg(a, name="neg"))
        return self._once(("neg", a), lambda: self.builder.fneg(a, name="neg"))

    def abs(self, a: ir.Value) -> ir.Value:
        if not is_integer(a.type):
            return self._once(("abs", a), lambda: call_intrinsic(self.builder, "llvm.fabs", a))
        # i1 false: |minimum| is the minimum itself (numpy's answer), not poison.
        fn = self.builder.module.declare_intrinsic(
            "llvm.abs", [a.type], ir.FunctionType(a.type, [a.type, I1])
        )
        return self._once(("abs", a), lambda: self.builder.call(fn, [a, ir.Constant(I1, 0)]))

    def pow(self, a: ir.Value, exponent: float | int) -> ir.Value:
        if is_integer(a.type):
            if not float(exponent).is_integer() or exponent < 0:
                raise CompileError(f"ops.pow of integers to the power {exponent}: only n >= 0")
            return self._once(("pow", a, exponent), lambda: self._power(a, int(exponent)))
        if not math.isfinite(exponent):
            raise CompileError(f"ops.pow with the exponent {exponent} is not supported")
        return self._once(("pow", a, exponent), lambda: mathlib.power(self.builder, a, exponent))

    def _power(self, a: ir.Value, n: int) -> ir.Value:
        """a ** n of an integer by repeated squaring, wrapping around as numpy's power does."""
        result, square = ir.Constant(a.type, 1), a  # square: a^(2^k)
        while n:
            if n & 1:
                result = self.builder.mul(result, square)
            n >>= 1
            if n:
                square = self.builder.mul(square, square)
        return result

    def sin(self, a: ir.Value) -> ir.Value:
        return self._trig("sin", a)

    def cos(self, a: ir.Value) -> ir.Value:
        return self._trig("cos", a)

    def exp(self, a: ir.Value) -> ir.Value:
        return self._math("exp", a)

    def log(self, a: ir.Value) -> ir.Value:
        return self._math("log", a)

    def tanh(self, a: ir.Value) -> ir.Value:
        return self._math("tanh", a, activations)

    def sigmoid(self, a: ir.Value) -> ir.Value:
        return self._math("sigmoid", a, activations)

    def erf(self, a: ir.Value) -> ir.Value:
        return self._math("erf", a, activations)

    def eq(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self._compare("eq", "==", a, b)

    def ne(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self._compare("ne", "!=", a, b)

    def lt(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self._compare("lt", "<", a, b)

    def le(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self._compare("le", "<=", a, b)

    def _compare(self, op: str, predicate: str, a: ir.Value, b: ir.Value) -> ir.Value:
        """A bool (i8) from fcmp; ordered (NaN gives False) except for !=, which NaN makes True,
        as in numpy. Integers compare signed, bools as unsigned bytes (False < True)."""
        self._same_type(op, a, b)

        def emit() -> ir.Value:
            if a.type == I8:
                result = self.builder.icmp_unsigned(predicate, a, b)
            elif is_integer(a.type):
                result = self.builder.icmp_signed(predicate, a, b)
            elif predicate == "!=":
                result = self.builder.fcmp_unordered(predicate, a, b)
            else:
                result = self.builder.fcmp_ordered(predicate, a, b)
            return self.builder.zext(result, I8, name=op)

        return self._once((op, a, b), emit)

    def where(self, condition: ir.Value, a: ir.Value, b: ir.Value) -> ir.Value:
        self._same_type("where", a, b)
        if condition.type != I8:
            raise CompileError(f"ops.where with a {condition.type} condition, not a bool")

        def emit() -> ir.Value:
            picked = self.builder.trunc(condition, I1)  # 0 or 1 -> i1
            return self.builder.select(picked, a, b, name="where")

        return self._once(("where", condition, a, b), emit)

    # -- indices and random numbers ([Note: indirect loads] in ir/ops_handler.py) ------------

    def index_expr(self, expr: Expr, dtype: DType) -> ir.Value:
        value = expr.evaluate(self.index_env)
        value = value.value if isinstance(value, IndexValue) else i64(value)
        target = ir_type(dtype)
        return value if target == value.type else self.builder.trunc(value, target)

    def indirect_indexing(self, value: ir.Value, size: int, wrap_negative: bool) -> Expr:
        """An index variable bound to `value` (as an i64), checked: an index outside the dim
        is written to `index_error` and element 0 is read instead, so nothing out of bounds
        is; the caller raises after the kernel (codegen/llvm/backend.py)."""
        if self.index_error is None:
            raise CompileError("ops.indirect_indexing in a kernel with no index error slot")
        name = self._once(
            ("indirect", value, size, wrap_negative),
            lambda: self._indirect(value, size, wrap_negative),
        )
        return Var(name)

    def _indirect(self, value: ir.Value, size: int, wrap_negative: bool) -> str:
        builder = self.builder
        original = value if value.type == I64 else builder.sext(value, I64)
        index = original
        if wrap_negative:
            negative = builder.icmp_signed("<", index, i64(0))
            index = builder.select(negative, builder.add(index, i64(size)), index)
        inside = builder.icmp_unsigned("<", index, i64(size), name="in_bounds")  # 0 <= index
        with builder.if_then(builder.not_(inside), likely=False):
            for slot, reported in enumerate((i64(1), original, i64(size))):
                address = builder.gep(self.index_error, [i64(slot)], source_etype=I64)
                # NOTE: plain stores: two threads that both fail set the flag either way, though
                # the index and size shown may then come from two different failures.
                builder.store(reported, address)
        name = f"ind{sum(var.startswith('ind') for var in self.index_env)}"
        self.index_env[name] = IndexValue(builder, builder.select(inside, index, i64(0)))
        return name

    def rand(self, seed: ir.Value, counter: ir.Value) -> ir.Value:
        self._same_type("rand", seed, counter)
        return self._once(
            ("rand", seed, counter), lambda: random.uniform(self.builder, seed, counter)
        )

    def _trig(self, name: str, a: ir.Value) -> ir.Value:
        """sin or cos. With config.exact_trig off, libm's ([Note: plain trig] in mathlib.py).
        With it on, the fast path, noting in `huge_seen` whether `a` needs the slow one; or,
        when there is no `huge_seen`, the version right for every x ([Note: sin and cos over
        the whole float range] in trig.py)."""
        self.uses_trig = True
        if not config.exact_trig:
            fn = mathlib.libm_function(self.builder.module, name, a.type)
            return self._once((name, a), lambda: self.builder.call(fn, [a], name=name))
        # NOTE: imported here: exact trig is an extra ([Note: the core and its extras] in
        # minitorch/config.py), so a kernel compiled with the core alone never loads trig.py.
        from codegen.llvm import trig

        if self.huge_seen is None:
            return self._math(name, a, trig)
        self._once(("huge_seen", a), lambda: self._note_huge(a))
        fast = trig.fast_function(self.builder.module, name, a.type)
        return self._once((name, a), lambda: self.builder.call(fast, [a], name=name))

    def _note_huge(self, a: ir.Value) -> ir.Value:
        from codegen.llvm import trig  # NOTE: imported here: see _trig

        seen = self.builder.load(self.huge_seen, typ=I1)
        seen = self.builder.or_(seen, trig.needs_slow_path(self.builder, a))
        self.builder.store(seen, self.huge_seen)
        return seen

    def _math(self, name: str, a: ir.Value, library: ModuleType = mathlib) -> ir.Value:
        """A call of `library`'s function `name` (mathlib.py, trig.py or activations.py)."""
        fn = library.math_function(self.builder.module, name, a.type)
        return self._once((name, a), lambda: self.builder.call(fn, [a], name=name))
