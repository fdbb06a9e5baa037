"""`TensorVariable`: a tensor in the graph being built, as a node plus its fake value.

The fake value (minitorch/fake.py) has the real tensor's shape, dtype and strides and no data.
Every op on a TensorVariable runs the *real* minitorch function on the fake values to learn
the result's shape and dtype (and to reject bad shapes exactly as eager would), then records
the call as a graph node (output_graph.py, `record_call`).

    x.shape            -> a tuple of constants, sources L['x'].shape[i] (guarded by TENSOR_MATCH;
                          a dynamic dim read this way is specialised: [Note: dynamic shapes])
    x.dtype, x.ndim    -> constants
    x.sum(dim=0)       -> call_method[target=sum](args = (%x,), kwargs = {dim: 0})
    x.T, x.mT          -> the property's getter, inlined: call_function[permute] & co
    x.item()           -> Unsupported: the value exists only at run time
    x[idx], x[mask]    -> operator.getitem, whose fake run says the shape (a mask read's shape
                          depends on its values: a DataDependentError, so a graph break)
    x[idx] = v         -> call_function[indexing.setitem](%x, idx, %v), x rebound to it
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import minitorch
from tracer.dynamo.exc import Unsupported
from tracer.dynamo.source import AttrSource, Source
from tracer.dynamo.variables.base import VariableTracker
from tracer.dynamo.variables.constant import constant

if TYPE_CHECKING:
    from tracer.dynamo.output_graph import OutputGraph
    from tracer.dynamo.symbolic_convert import InstructionTranslator
    from tracer.fx import Node

# Attributes the fake value knows exactly; anything else (.grad, .data, ...) is not traced.
_METADATA_ATTRS = (
    "shape",
    "dtype",
    "device",
    "ndim",
    "requires_grad",
    "is_cuda",
    "is_cpu",
    "is_xpu",
    "is_mps",
    "is_meta",
    "is_sparse",
    "is_quantized",
    "is_nested",
    "itemsize",
    "layout",
)
# Properties written in minitorch ops (x.T is a permute): their getter is inlined.
_VIEW_PROPERTIES = ("T", "mT", "H", "mH")
# Methods that only read metadata: folded into constants.
_METADATA_METHODS = ("size", "dim", "numel", "is_floating_point")
# Strides are exact for graph inputs (guarded) but an intermediate's strides depend on how
# the backend computes it, so these fold only on tensors that have a source.
_LAYOUT_METHODS = ("stride", "is_contiguous")
# Methods that need the tensor's values, which do not exist while tracing.
_DATA_METHODS = ("item", "tolist", "numpy", "__bool__", "__float__", "__int__", "__len__")


class TensorVariable(VariableTracker):
    """A tensor value: the fx node that computes it and a fake tensor that describes it."""

    def __init__(
        self,
        node: Node,
        example: Any,
        source: Source | None = None,
        output: OutputGraph | None = None,
    ) -> None:
        super().__init__(source)
        self.node = node  # placeholder or call node of the graph being built
        self._example = example  # the fake tensor: shape, dtype, strides, requires_grad
        self.output = output  # the graph it belongs to, told when its sizes are read
        self.input_type: type | None = None  # a graph input's class (Parameter), guarded

    @property
    def example(self) -> Any:
        """The fake tensor, for code outside this file that may read its sizes (`len(x)`):
        reading it specialises every dynamic dim behind this tensor ([Note: dynamic shapes]).
        Over-cautious, never wrong; this file reads `_example` and specialises precisely."""
        if self.output is not None:
            self.output.specialize(self, None, "read while tracing")
        return self._example

    @example.setter
    def example(self, value: Any) -> None:
        self._example = value

    def python_type(self) -> type:
        return self.input_type or type(self._example)

    def as_graph_arg(self) -> Any:
        return self.node

    def as_example(self) -> Any:
        return self._example

    def var_getattr(self, tx: InstructionTranslator, name: str) -> VariableTracker:
        if name in _METADATA_ATTRS and hasattr(type(self._example), name):
            if name == "shape":
                tx.output.specialize(self, None, "read by .shape")
            source = None if self.source is None else AttrSource(self.source, name)
            return constant(getattr(self._example, name), source)
        if callable(getattr(type(self._example), name, None)):
            return TensorMethodVariable(self, name)
        prop = inspect.getattr_static(type(self._example), name, None)
        if name in _VIEW_PROPERTIES and isinstance(prop, property):
            from tracer.dynamo.variables.functions import UserFunctionVariable

            getter = UserFunctionVariable(prop.fget, inline=True)
            return getter.call_function(tx, [self], {})  # inlined
        raise Unsupported(
            f"tensor attribute .{name} (only {', '.join(_METADATA_ATTRS)} are known while tracing)"
        )

    def setitem(
        self, tx: InstructionTranslator, key: VariableTracker, value: VariableTracker
    ) -> VariableTracker:
        """`x[key] = value` (STORE_SUBSCR): recorded as its out-of-place form, a call of
        minitorch.functional.indexing.setitem, and x rebound to the result (inplace.py)."""
        from minitorch.functional.indexing import setitem
        from tracer.dynamo.variables.inplace import functionalize

        return functionalize(
            tx,
            self,
            "__setitem__",
            lambda: tx.output.record_call("call_function", setitem, [self, key, value], {}),
        )

    def unpack_sequence(self, tx: InstructionTranslator) -> list[VariableTracker]:
        """`for row in x`, `a, b = x`: its rows, `x[0]`, `x[1]`, ... (as Tensor.__iter__)."""
        import operator

        from tracer.dynamo.variables.functions import BuiltinVariable

        if self._example.ndim == 0:
            raise Unsupported("iterating over a 0-d tensor (a TypeError)")
        rows = self.example.shape[0]  # the count of rows is fixed by the trace
        getitem = BuiltinVariable(operator.getitem)
        return [getitem.call_function(tx, [self, constant(i)], {}) for i in range(rows)]

    def describe(self) -> str:
        shape = list(self._example.shape)
        where = f" {self.source.name()}" if self.source is not None else ""
        return f"the tensor{where} of shape {shape} and dtype {self._example.dtype.name}"


class TensorMethodVariable(VariableTracker):
    """`x.name` of a tracked tensor, waiting for its call."""

    def __init__(self, tensor: TensorVariable, name: str) -> None:
        super().__init__(None)
        self.tensor = tensor
        self.name = name

    def python_type(self) -> type:
        return type(getattr(self.tensor._example, self.name))

    def call_function(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> VariableTracker:
        name = self.name
        if name in _DATA_METHODS:
            raise Unsupported(
                f"Tensor.{name}() reads the tensor's values, which do not exist "
                "while tracing (a data-dependent operation)"
            )
        if name in _METADATA_METHODS or (name in _LAYOUT_METHODS and self.tensor.source):
            self._specialize(tx, args, kwargs)
            return self._fold(args, kwargs)
        if name in _LAYOUT_METHODS:
            raise Unsupported(
                f"Tensor.{name}() of an intermediate tensor: its layout is "
                "decided by the backend, not known while tracing"
            )
        if name.endswith("_") or name == "backward":
            raise Unsupported(
                f"Tensor.{name}() changes a tensor in place; mutation is not supported yet"
            )
        return tx.output.record_call("call_method", name, [self.tensor, *args], kwargs)

    def _specialize(
        self,
        tx: InstructionTranslator,
        args: list[VariableTracker],
        kwargs: dict[str, VariableTracker],
    ) -> None:
        """The sizes this call folds into a constant are guarded exactly from now on."""
        if self.name in ("dim", "is_floating_point"):
            return  # the rank and the dtype are always guarded
        dims = None
        if self.name == "size" and (args or "dim" in kwargs):
            dim = (args[0] if args else kwargs["dim"]).as_python_constant()
            ndim = self.tensor._example.ndim
            if isinstance(dim, int) and -ndim <= dim < ndim:
                dims = [dim % ndim]
        tx.output.specialize(self.tensor, dims, f"read by .{self.name}()")

    def _fold(self, args: list[VariableTracker], kwargs: dict[str, VariableTracker]):
        method = getattr(self.tensor._example, self.name)
        values = [a.as_python_constant() for a in args]
        kw_values = {k: v.as_python_constant() for k, v in kwargs.items()}
        return constant(method(*values, **kw_values))

    def describe(self) -> str:
        return f"the method Tensor.{self.name}"


def reads_a_copy(node: Node) -> bool:
    """Is `node`, an operator.getitem, a read of a tensor with an advanced key (`x[idx]`,
    `x[:, [0, 2]]`)? That is a gather into new memory; a basic key (`x[1:]`) makes a view."""
    from minitorch.functional.indexing import is_advanced
    from tracer.fx import map_arg

    tensor, key = node.args
    if not isinstance(getattr(tensor, "meta", {}).get("val"), minitorch.Tensor):
        return False  # an item of a tuple: max(dim=...)[0]
    return is_advanced(map_arg(key, lambda n: n.meta.get("val")))
