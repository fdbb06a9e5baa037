"""`minitorch.fx.passes`, as `torch.fx.passes` (implemented in tracer/fx/passes/), plus the
passes every user of fx reaches for, each one call on a GraphModule (or a module, traced first):

    fuse_conv_bn(gm)                       fold each BatchNorm2d into its Conv2d (eval mode)
    remove_dropout(gm)                     drop Dropout layers and calls (for inference)
    eliminate_common_subexpressions(gm)    compute each repeated pure expression once
    fold_constants(gm)                     precompute what depends on no input
"""

from minitorch.fx.passes import graph_drawer, shape_prop
from tracer.fx.passes.const_fold import fold_constants
from tracer.fx.passes.cse import eliminate_common_subexpressions
from tracer.fx.passes.fuse_conv_bn import fuse_conv_bn
from tracer.fx.passes.remove_dropout import remove_dropout

__all__ = [
    "eliminate_common_subexpressions",
    "fold_constants",
    "fuse_conv_bn",
    "graph_drawer",
    "remove_dropout",
    "shape_prop",
]
