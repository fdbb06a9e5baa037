"""`ShapeProp`: run a GraphModule on example inputs and record each value's shape and dtype.

    gm = symbolic_trace(lambda x: minitorch.sum(x * 2, dim=0))
    ShapeProp(gm).propagate(minitorch.randn(3, 4))
    for node in gm.graph.nodes:
        meta = node.meta["tensor_meta"]
        print(node.name, list(meta.shape), meta.dtype, meta.stride)
    x [3, 4] minitorch.float32 (4, 1)
    mul [3, 4] minitorch.float32 (4, 1)
    sum_1 [4] minitorch.float32 (1,)
    output [4] minitorch.float32 (1,)

A node whose value holds several tensors (a tuple) gets the same structure of TensorMetadata;
a node with no tensor in its value (a shape, an int) gets no 'tensor_meta'.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from minitorch.dtype import DType
from minitorch.tensor import Tensor
from tracer.fx.interpreter import Interpreter
from tracer.fx.node import Node, map_aggregate


@dataclass(frozen=True)
class TensorMetadata:
    """What a pass may know about a tensor without holding it."""

    shape: tuple[int, ...]  # a minitorch.Size
    dtype: DType
    requires_grad: bool
    stride: tuple[int, ...]  # in elements, as Tensor.stride()


def tensor_metadata(t: Tensor) -> TensorMetadata:
    return TensorMetadata(t.shape, t.dtype, t.requires_grad, t.stride())


class ShapeProp(Interpreter):
    """An Interpreter that also stores `node.meta['tensor_meta']` for every node it runs."""

    def propagate(self, *args) -> Any:
        """Run the graph on `args`; returns what the module returns."""
        return self.run(*args)

    def run_node(self, node: Node) -> Any:
        result = super().run_node(node)
        tensors: list[Tensor] = []
        map_aggregate(result, lambda v: tensors.append(v) if isinstance(v, Tensor) else None)
        if tensors:
            node.meta["tensor_meta"] = map_aggregate(result, _metadata_or_none)
        return result


def _metadata_or_none(value: Any) -> TensorMetadata | None:
    return tensor_metadata(value) if isinstance(value, Tensor) else None
