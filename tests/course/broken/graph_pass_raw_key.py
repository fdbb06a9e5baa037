"""Broken on purpose: keys on the raw arguments, so x * 1 and x * 1.0 merge (1 == 1.0)."""

from minitorch.compile.hooks import register_graph_pass


def merge_repeats(gm):
    seen = {}
    for node in list(gm.graph.nodes):
        if node.op not in ("call_function", "call_method"):
            continue
        name = node.target if isinstance(node.target, str) else node.target.__name__
        if "rand" in name or "dropout" in name:
            continue
        try:
            key = (node.op, node.target, node.args, tuple(node.kwargs.items()))
            hash(key)
        except TypeError:
            continue
        if key in seen:
            node.replace_all_uses_with(seen[key])
            gm.graph.erase_node(node)
        else:
            seen[key] = node
    gm.recompile()


register_graph_pass("merge_repeats", merge_repeats, stage="captured")
