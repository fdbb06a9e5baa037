"""`OutputGraph`: the fx graph, the guards and the graph inputs that one trace builds.

The translator (symbolic_convert.py) owns the stack; this object owns everything that outlives
the trace:

    graph          the fx Graph: a placeholder per tensor read from the frame, a node per op
    graph_inputs   for each placeholder, its source (L['x'], G['w']) and the real tensor
    guards         what tracing relied on (guards.py), in the order it was relied on
    wrapped        source -> tracker, so a source read twice is one tracker (one input)
    side_effects   writes to the caller's lists, dicts, objects and input tensors, replayed by
                   the generated code after the graph runs (side_effects.py)

When the frame returns, `compile_subgraph` finishes the graph and generates the code that
replaces the frame (transformed_code.py): reload the inputs, call the compiled graph, and
rebuild the return value around its outputs; `call_backend` then compiles the graph.

[Note: dynamic shapes]
A cache entry guards every size of every input tensor, so a loop over growing batches would
compile once per size. Instead, as PyTorch's automatic dynamic shapes do:

    dynamic=None (automatic)  the first compile is static. The code cache remembers each input
                              tensor's sizes (cache.py, `CodeCache.note_sizes`); when a later
                              miss sees another size in a dim, that (source, dim) is marked
                              dynamic for every later compile of the frame: one recompile, not
                              one per size
    dynamic=True              every dim of every input tensor is dynamic from the start
    dynamic=False             never: every size is guarded

A dynamic dim's guard checks only `size >= 2` (0 and 1 stay specialised; guards.py). Our fake
tensors have concrete sizes, not symbols, so the trace still runs at the example's sizes; what
makes the result valid for other sizes is that the captured fx graph holds no size unless the
user's code read one. When it does (`x.shape`, `x.size(0)`, `x.numel()`, a stride), we
*specialise* rather than make the size a symbol: `specialize` takes the dim back out of the
dynamic set, so its exact size is guarded again. Reading the shape of an intermediate tensor
specialises every dynamic dim of the inputs it was computed from. Always correct; the frame
stays dynamic only in the dims the code never looked at.

Compilers: each gets the dims left dynamic (`GraphCompiler.compile(gm, inputs, dynamic_dims)`,
compiler.py) and must serve every size they may take. The graph runs at any size as Python
code ("eager"); AOT autograd (and so "inductor") traces at concrete sizes, so the driver
compiles those once with sizes as kernel arguments where it can ([Note: symbolic sizes] in
ir/symbolic.py) and once per input shape where it cannot (minitorch/compile/shapes.py).
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from minitorch.autograd import is_grad_enabled
from minitorch.autograd.grad_mode import _set as set_grad_enabled_now
from minitorch.fake import FakeTensorMode, fake_like, is_fake
from minitorch.nn.parameter import Parameter
from minitorch.tensor import Tensor
from tracer.dynamo.cache import GraphBreak
from tracer.dynamo.compiler import GraphCompiler
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.guards import Guard
from tracer.dynamo.memory_overlap import shares_memory
from tracer.dynamo.side_effects import SideEffects
from tracer.dynamo.source import GlobalSource, LocalSource, Source
from tracer.dynamo.transformed_code import (
    TransformedCode,
    generate_break_code,
    generate_transformed_code,
)
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import ConstantVariable
from tracer.dynamo.variables.dicts import DictViewVariable
from tracer.dynamo.variables.factories import DATA_FACTORIES
from tracer.dynamo.variables.tensor import TensorMethodVariable, TensorVariable
from tracer.dynamo.variables.tuples import TupleVariable
from tracer.fx import Graph, GraphModule, Node, lint_after
from tracer.fx.provenance import Location

if TYPE_CHECKING:
    from tracer.dynamo.eval_frame import Frame
    from tracer.dynamo.graph_break import BreakPlan
    from tracer.dynamo.symbolic_convert import InstructionTranslator


@dataclass
class GraphInput:
    """One placeholder of the graph: where its tensor comes from on every call."""

    source: Source  # how the compiled code reloads it: L['x'], G['w']
    node: Node  # the placeholder
    example: Tensor  # the real tensor of the call being compiled (example_inputs)


class OutputGraph:
    """The products of one trace (see the module docstring)."""

    def __init__(
        self,
        frame: Frame,
        compiler: GraphCompiler,
        fullgraph: bool = False,
        dynamic: bool | None = None,
        auto_dynamic: dict[Source, set[int]] | None = None,
    ) -> None:
        self.frame = frame
        self.grad_mode = is_grad_enabled()  # the mode the frame starts in (a guard)
        self.mode_changes: list[Node] = []  # the graph's grad mode nodes (grad_mode.py)
        self.dynamic = dynamic  # see [Note: dynamic shapes]
        self.auto_dynamic = auto_dynamic or {}  # dims the code cache saw change (dynamic=None)
        self.dynamic_dims: dict[Source, set[int]] = {}  # source -> dims left unguarded
        self.specializations: list[str] = []  # "L['x'].shape[0] (read by x.shape)"
        self.compiler = compiler  # compiles the finished graph (compiler.py)
        self.allow_graph_breaks = not fullgraph  # fullgraph: a break is an error instead
        self.graph_breaks: list[GraphBreak] = []  # where this frame's graph was cut short
        self.graph = Graph()
        self.fake_mode = FakeTensorMode()
        self.graph_inputs: list[GraphInput] = []
        self.guards: dict[Guard, None] = {Guard(None, "GRAD_MODE"): None}  # an ordered set
        self.wrapped: dict[Source, VariableTracker] = {}
        # False on a second trace: the first met something untraceable inside a with block
        self.trace_with_blocks = True
        # id of each list and dict of the frame -> its one tracker, whatever its source
        self.containers: dict[int, VariableTracker] = {}
        self.side_effects = SideEffects()  # writes to the caller's objects, replayed after
        self.views_of_written: dict[Node, str] = {}  # views of inputs it mutates: not returned
        self.graph_module: GraphModule | None = None
        self.transformed: TransformedCode | None = None  # set by compile_subgraph
        # the innermost translator running an instruction: where a node is recorded from
        self.translating: InstructionTranslator | None = None

    # ---- recording ---------------------------------------------------------------------------

    def add_graph_break(self, reason: str, filename: str, lineno: int | None) -> None:
        self.graph_breaks.append(GraphBreak(reason, filename, lineno))

    def add_guard(self, source: Source | None, kind: str) -> None:
        self.guards.setdefault(Guard(source, kind), None)

    def add_graph_input(self, source: Source, value: Tensor) -> TensorVariable:
        """A placeholder for a tensor read from the frame; placeholders stay first."""
        for kind, written, _, _ in self.side_effects.writes.values():
            if kind == "tensor" and shares_memory(
                written.source.get_value(self.frame.f_locals, self.frame.f_globals), value
            ):
                # it would be the old value: the write is replayed only after the graph
                raise Unsupported(
                    f"reading {source.name()}, which shares memory with "
                    f"{written.source.name()}, written in place before"
                )
        first_op = next((n for n in self.graph.nodes if n.op != "placeholder"), None)
        if first_op is None:
            node = self.graph.placeholder(_placeholder_name(source))
        else:
            with self.graph.inserting_before(first_op):
                node = self.graph.placeholder(_placeholder_name(source))
        fake = fake_like(value)
        node.meta["val"] = fake
        node.meta["source"] = source.name()
        self.graph_inputs.append(GraphInput(source, node, value))
        dims = self._initial_dynamic_dims(source, value)
        if dims:
            self.dynamic_dims[source] = dims
        tracker = TensorVariable(node, fake, source, self)
        tracker.input_type = type(value)  # a Parameter is one (TENSOR_MATCH: its type)
        return tracker

    def _initial_dynamic_dims(self, source: Source, value: Tensor) -> set[int]:
        if self.dynamic is False or isinstance(value, Parameter):  # weights keep their shape
            return set()
        dims = range(value.ndim) if self.dynamic else self.auto_dynamic.get(source, ())
        # `auto_dynamic` remembers dims of earlier calls: this one may have another rank
        return {d for d in dims if d < value.ndim and value.shape[d] >= 2}

    def specialize(self, tensor: TensorVariable, dims: list[int] | None, why: str) -> None:
        """The code read sizes of `tensor` as Python ints: guard them exactly again.

        `dims` None means every dim. For a tensor computed in the graph, every dynamic dim of
        every input it was computed from (we do not track which input dim each size came from).
        """
        if not self.dynamic_dims:
            return
        if tensor.source in self.dynamic_dims:
            targets = [(tensor.source, dims)]
        else:
            sources = {inp.node: inp.source for inp in self.graph_inputs}
            targets = [(sources[n], None) for n in _ancestors(tensor.node) if n in sources]
        for source, wanted in targets:
            dynamic = self.dynamic_dims.get(source, set())
            for dim in sorted(dynamic if wanted is None else dynamic & set(wanted)):
                dynamic.discard(dim)
                self.specializations.append(f"{source.name()}.shape[{dim}] ({why})")
            if not dynamic:
                self.dynamic_dims.pop(source, None)

    def record_call(
        self, op: str, target: Any, args: list[VariableTracker], kwargs: dict[str, VariableTracker]
    ) -> VariableTracker:
        """Run `target` on fake values to learn the result, then record it as a node.

        `op` is 'call_function' (target: the function) or 'call_method' (target: the method
        name, args[0]: the tensor).
        """
        examples = [a.as_example() for a in args]
        kw_examples = {k: v.as_example() for k, v in kwargs.items()}
        fn = target if op == "call_function" else getattr(examples[0], target)
        fn_args = examples if op == "call_function" else examples[1:]
        try:
            with self.fake_mode:
                result = fn(*fn_args, **kw_examples)
        except Exception as e:  # a bad shape, a data-dependent read, ...: eager will raise it
            raise Unsupported(
                f"{_target_name(op, target)} raised {type(e).__name__} while tracing: {e}"
            ) from e
        if type(result) is tuple:  # split, chunk: how many pieces depends on the sizes
            for a in args:
                if isinstance(a, TensorVariable):
                    self.specialize(
                        a, None, f"{_target_name(op, target)} made {len(result)} pieces"
                    )
        node_args = tuple(a.as_graph_arg() for a in args)
        node_kwargs = {k: v.as_graph_arg() for k, v in kwargs.items()}
        if op == "call_function":
            node = self.graph.call_function(target, node_args, node_kwargs)
        else:
            node = self.graph.call_method(target, node_args, node_kwargs)
        node.meta["val"] = result
        self.locate(node)
        self._refuse_no_grad_view(node, args)
        self._note_view_of_written_input(node, args)
        return self._wrap_result(node, result, _target_name(op, target))

    def locate(self, node: Node) -> None:
        """Record the user's line that made `node`, and the lines of the calls it is inlined
        into, outermost first ([Note: provenance] in tracer/fx/provenance.py)."""
        stack = []
        tx = self.translating
        while tx is not None:
            if tx.instruction is not None and tx.instruction.lineno is not None:
                stack.append(Location.at(tx.frame.code.co_filename, tx.instruction.lineno))
            tx = tx.parent
        node.meta["call_stack"] = tuple(reversed(stack))
        node.meta["location"] = stack[0] if stack else None

    def _refuse_no_grad_view(self, node: Node, args: list[VariableTracker]) -> None:
        """A view made under no_grad of a tensor that requires grad requires grad, with no
        grad_fn ([Note: views made under no_grad] in minitorch/tensor.py): a graph's output
        cannot be that, so tracing stops there (a break, or a break at the `with` block)."""
        from tracer.dynamo.variables.inplace import makes_fresh_tensor

        if is_grad_enabled() or makes_fresh_tensor(node):
            return
        if any(isinstance(a, TensorVariable) and a.as_example().requires_grad for a in args):
            self.graph.erase_node(node)
            raise Unsupported(
                f"a view ({_target_name(node.op, node.target)}) made under "
                "no_grad of a tensor that requires grad"
            )

    def _note_view_of_written_input(self, node: Node, args: list[VariableTracker]) -> None:
        """Remember a view of an input this graph mutates (or a view of such a view): made of
        the graph's new value, not of the caller's tensor (written back only after the
        graph), it shares no memory with it, so the graph may not return it (_finish_graph)."""
        from tracer.dynamo.variables.inplace import makes_fresh_tensor

        if makes_fresh_tensor(node):
            return
        for a in args:
            if self.side_effects.writes_back(a):
                self.views_of_written[node] = a.describe()
            elif getattr(a, "node", None) in self.views_of_written:
                self.views_of_written[node] = self.views_of_written[a.node]

    def _wrap_result(self, node: Node, result: Any, what: str) -> VariableTracker:
        if isinstance(result, Tensor) and is_fake(result):
            return TensorVariable(node, result, output=self)
        if _is_result_tuple(result):  # several outputs: one getitem node each (torch.fx)
            items = []
            for i, r in enumerate(result):
                item = self.graph.call_function(operator.getitem, (node, i))
                item.meta["val"] = r
                item.meta["location"] = node.meta["location"]  # the line of the call
                item.meta["call_stack"] = node.meta["call_stack"]
                if node in self.views_of_written:  # chunk of a written input: pieces are views
                    self.views_of_written[item] = self.views_of_written[node]
                items.append(TensorVariable(item, r, output=self))
            return TupleVariable(items, tuple_type=type(result))  # x.max(-1): return_types.max
        if (
            isinstance(result, Tensor)
            and node.target in DATA_FACTORIES
            and not result.requires_grad
        ):  # (a new leaf of autograd: not a graph's)
            # tensor([0.5, 0.25]), x.new_tensor([1, 2]) of constant data: a node of the graph
            # like any factory, described by a fake of the real tensor (variables/factories.py)
            fake = fake_like(result)
            node.meta["val"] = fake
            # ... copied, as eager makes a new tensor on every call: AOT autograd keeps the
            # constant in the graph, and a caller writing into it would change every later call
            made = TensorVariable(node, fake, output=self)
            return self.record_call("call_method", "clone", [made], {})
        is_check = result is None and node.op == "call_function"  # check_tensor(x) & co
        self.graph.erase_node(node)
        if is_check:  # it raised nothing on the fakes: nothing to keep
            return ConstantVariable(None)
        if isinstance(result, Tensor):
            raise Unsupported(
                f"{what} made a tensor from data instead of from its inputs "
                "(tensor factories are not captured yet)"
            )
        raise Unsupported(
            f"{what} returned a {type(result).__name__}; only tensor results are captured"
        )

    # ---- finishing ---------------------------------------------------------------------------

    def begin_instruction(self) -> tuple[bool, int]:
        """The root frame starts an instruction: what undo_mode_changes goes back to."""
        self.side_effects.begin_instruction()
        return is_grad_enabled(), len(self.mode_changes)

    def undo_mode_changes(self, start: tuple[bool, int]) -> None:
        """An instruction failed (a call inlined into it): the grad mode blocks it entered
        are left, in the graph and in tracing, as if it had not run."""
        mode, count = start
        for node in self.mode_changes[count:]:
            self.graph.erase_node(node)
        del self.mode_changes[count:]
        set_grad_enabled_now(mode)

    def compile_subgraph(self, value: VariableTracker, reason: str) -> None:
        """Finish the graph that computes the tensors of `value`, and the code around it.

        The backend runs later, in `call_backend`, once the guards are known: the walkthrough
        shows the captured graph and its guards before what the backend makes of them.
        """
        computed, sources, has_graph = self._finish_graph([value])
        # Raises Unsupported for a value it cannot rebuild (then no backend compiles anything).
        # The mode the frame leaves, if it changed it (set_grad_enabled(False), or the end of
        # a block a resume function started in): a compiled graph does not leave it.
        mode = is_grad_enabled() if is_grad_enabled() != self.grad_mode else None
        self.transformed = generate_transformed_code(
            self.frame.code, value, computed, sources, has_graph, self.side_effects, mode
        )
        self._make_graph_module(has_graph, reason)

    def compile_subgraph_with_break(self, plan: BreakPlan, reason: str) -> None:
        """Finish the graph at a graph break (graph_break.py): its outputs are every tensor the
        rest of the frame can see; the code around it runs the break and resumes."""
        computed, sources, has_graph = self._finish_graph(plan.values())
        self.transformed = generate_break_code(
            self.frame.code, plan, computed, sources, has_graph, self.side_effects
        )
        self._make_graph_module(has_graph, reason)

    def _finish_graph(self, values: list[VariableTracker]):
        """Output the tensors of `values` that the graph computed; drop what nothing needs."""
        values = [*values, *self.side_effects.values()]  # what the replay writes, too
        computed = [t for t in _unique_tensors(values) if t.node.op != "placeholder"]
        for t in computed:
            if t.node in self.views_of_written:
                raise Unsupported(
                    f"a view of {self.views_of_written[t.node]}, which this graph "
                    "mutates in place, outlives the graph (it must share the "
                    "caller's memory)"
                )
        self.graph.output(tuple(t.node for t in computed))
        self.graph.eliminate_dead_code()  # ops whose results the frame never returned
        self._remove_unused_inputs()
        has_graph = any(n.op not in ("placeholder", "output") for n in self.graph.nodes)
        return computed, [inp.source for inp in self.graph_inputs], has_graph

    def _make_graph_module(self, has_graph: bool, reason: str) -> None:
        if has_graph:  # else nothing to compute: constants and the frame's own tensors
            self.graph_module = GraphModule({}, self.graph)
            self.graph_module.compile_subgraph_reason = reason
            lint_after("capture", self.graph_module, name=self.frame.code.co_name)

    def call_backend(self) -> None:
        """Compile the captured graph with the backend; bind it into the transformed code."""
        if self.graph_module is None:
            self.transformed.finish(None)
            return
        examples = [inp.example for inp in self.graph_inputs]
        # which dims of each input the guards leave free: the compiled graph must serve them
        dynamic_dims = [set(self.dynamic_dims.get(inp.source, ())) for inp in self.graph_inputs]
        self.transformed.finish(self.compiler.compile(self.graph_module, examples, dynamic_dims))

    def _remove_unused_inputs(self) -> None:
        """Drop placeholders no op reads (a tensor only looked at for its shape)."""
        kept = []
        for inp in self.graph_inputs:
            if inp.node.users:
                kept.append(inp)
            else:
                self.graph.erase_node(inp.node)  # its guards stay: tracing relied on them
        self.graph_inputs = kept


def _unique_tensors(values: list[VariableTracker]) -> list[TensorVariable]:
    """The tensors inside (nested) values, each once, in order."""
    found: dict[Node, TensorVariable] = {}
    seen: set[int] = set()  # containers already visited (a list may hold itself)

    def visit(v: VariableTracker) -> None:
        if isinstance(v, TensorVariable):
            found.setdefault(v.node, v)
        elif isinstance(v, TupleVariable) and id(v) not in seen:
            seen.add(id(v))
            for item in v.items:
                visit(item)
        elif isinstance(v, DictViewVariable):  # d.values(), returned: the dict's tensors
            visit(v.dict)
        elif isinstance(v, TensorMethodVariable):  # x.item, waiting for its call at a break
            visit(v.tensor)

    for value in values:
        visit(value)
    return list(found.values())


def _is_result_tuple(result: Any) -> bool:
    """A tuple of fake tensors, plain or named (`return_types.max(values, indices)`)."""
    named = isinstance(result, tuple) and hasattr(type(result), "_fields")
    return (type(result) is tuple or named) and all(
        isinstance(r, Tensor) and is_fake(r) for r in result
    )


def _ancestors(node: Node) -> list[Node]:
    """`node` and every node it was computed from."""
    seen, todo = {node: None}, [node]
    while todo:
        for arg in todo.pop().all_input_nodes:
            if arg not in seen:
                seen[arg] = None
                todo.append(arg)
    return list(seen)


def _placeholder_name(source: Source) -> str:
    """x for L['x'], G_w for G['w'], and a Python name made from any other source."""
    if isinstance(source, LocalSource):
        return source.local_name
    if isinstance(source, GlobalSource):
        return f"G_{source.global_name}"
    return re.sub(r"\W+", "_", source.name()).strip("_")


def _target_name(op: str, target: Any) -> str:
    if op == "call_method":
        return f"Tensor.{target}()"
    name = getattr(target, "__name__", repr(target))
    module = getattr(target, "__module__", "") or ""
    return f"{module.lstrip('_').split('.')[0]}.{name}()" if module else f"{name}()"
