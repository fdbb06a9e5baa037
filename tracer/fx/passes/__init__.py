"""Passes over fx graphs, one per file, each imported by its own path:

    shape_prop.ShapeProp                 run the graph once; record shapes and dtypes in meta
    graph_drawer.FxGraphDrawer           draw the graph: Graphviz DOT text, or SVG through `dot`
    fuse_conv_bn.fuse_conv_bn            fold each BatchNorm2d into the Conv2d before it
    remove_dropout.remove_dropout        drop Dropout layers and calls (for inference)
    cse.eliminate_common_subexpressions  compute each repeated pure expression once
    const_fold.fold_constants            precompute what depends on no input
    fuse_attention.fuse_attention        nanoGPT's attention as one op (config.fused_attention)

Nothing is imported here, so that importing one pass does not load the others.
"""
