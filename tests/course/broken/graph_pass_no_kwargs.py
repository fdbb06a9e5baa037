"""Broken on purpose: the key leaves the keyword arguments out (sum(dim=0) becomes sum())."""

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
            key = (node.op, node.target, repr(node.args))
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
