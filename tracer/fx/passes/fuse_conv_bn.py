"""Conv-BatchNorm fusion: fold each eval-mode BatchNorm into the convolution before it.

    >>> model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU()).eval()
    >>> print(fuse_conv_bn(symbolic_trace(model)).code)
    def forward(self, input_1):
        _0 = getattr(self, '0')(input_1);  input_1 = None
        _2 = getattr(self, '2')(_0);  _0 = None
        return _2

`bn(conv(x))` becomes `conv'(x)` with conv' = fuse_conv_bn_eval(conv, bn): the BatchNorm's
per-channel affine map folded into the convolution's weight and bias (the math is in
minitorch/nn/utils/fusion.py). One layer instead of two and the same numbers, in eval mode
only: a training-mode BatchNorm normalizes with each batch's own statistics, which no fixed
weight can reproduce, so a pair in training mode is an error, as in `fuse_conv_bn_eval`.

A pair is fused only where the rewrite cannot change another result:
  - the BatchNorm node is the convolution node's only user (others need the unfused output);
  - the convolution module is called by that node only (its fused copy replaces it for all);
  - the BatchNorm keeps running statistics (without them, eval mode uses the batch's own).
This works on symbolic_trace graphs, where layers are call_module nodes. A jit.trace graph
holds the ops a convolution decomposes to (im2col, mm, ...): there is no layer to match.
"""

from __future__ import annotations

import copy
from collections import Counter

from minitorch.errors import MinitorchError, at_user_line
from minitorch.nn.conv import Conv2d
from minitorch.nn.module import Module
from minitorch.nn.normalization import BatchNorm2d
from minitorch.nn.utils.fusion import fuse_conv_bn_eval
from tracer.fx.graph_module import GraphModule
from tracer.fx.node import Node
from tracer.fx.symbolic_trace import symbolic_trace

# (convolution, batch norm) layer types that fuse. PyTorch also pairs Conv1d with BatchNorm1d
# and Conv3d with BatchNorm3d; minitorch has Conv2d only.
PATTERNS = [(Conv2d, BatchNorm2d)]


def fuse_conv_bn(gm: Module) -> GraphModule:
    """A new GraphModule in which each Conv2d -> BatchNorm2d pair is one fused Conv2d.

    The model must be in eval mode. `gm` itself and its layers are left as they were (the
    fused convolutions are copies); a plain Module is traced with symbolic_trace first.
    """
    gm = gm if isinstance(gm, GraphModule) else symbolic_trace(gm)
    fused = copy.deepcopy(gm)
    modules = dict(fused.named_modules())
    calls = Counter(n.target for n in fused.graph.nodes if n.op == "call_module")
    for bn_node in fused.graph.nodes:
        conv_node = _conv_feeding(bn_node, modules)
        if conv_node is None or len(conv_node.users) > 1 or calls[conv_node.target] > 1:
            continue
        conv, bn = modules[conv_node.target], modules[bn_node.target]
        if bn.running_mean is None or bn.running_var is None:
            continue
        if conv.training or bn.training:
            raise MinitorchError(
                at_user_line(
                    f"fuse_conv_bn: '{conv_node.target}' -> '{bn_node.target}' is in training "
                    "mode; "
                    "fusion uses the running statistics of eval mode: call model.eval() first"
                )
            )
        _set_submodule(fused, conv_node.target, fuse_conv_bn_eval(conv, bn))
        bn_node.replace_all_uses_with(conv_node)
        fused.graph.erase_node(bn_node)
    # A new GraphModule copies only the layers its graph calls: the fused BatchNorms drop out.
    return GraphModule(fused, fused.graph, fused._class_name)


def _conv_feeding(node: Node, modules: dict[str, Module]) -> Node | None:
    """The convolution node whose output is this batch-norm node's only input, if any."""
    if node.op != "call_module" or len(node.args) != 1 or node.kwargs:
        return None
    conv_node = node.args[0]
    if not isinstance(conv_node, Node) or conv_node.op != "call_module":
        return None
    pair = (type(modules[conv_node.target]), type(modules[node.target]))
    return conv_node if pair in PATTERNS else None


def _set_submodule(root: Module, target: str, module: Module) -> None:
    """root.<target> = module, for a dotted path ('layer1.0.conv')."""
    parent, _, name = target.rpartition(".")
    setattr(root.get_submodule(parent) if parent else root, name, module)
