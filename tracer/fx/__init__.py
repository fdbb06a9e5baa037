"""A torch.fx-like graph IR: Graph, Node, GraphModule, Interpreter."""

from tracer.fx.graph import Graph, GraphLintError
from tracer.fx.graph_module import GraphModule
from tracer.fx.interpreter import Interpreter
from tracer.fx.node import Node, map_arg

__all__ = ["Graph", "GraphLintError", "GraphModule", "Interpreter", "Node", "map_arg"]
