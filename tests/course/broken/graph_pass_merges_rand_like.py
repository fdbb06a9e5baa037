"""Broken on purpose: keeps dropouts apart, and merges two rand_like(x) draws into one."""

from minitorch.compile.hooks import register_graph_pass


def merge_repeats(gm):
    seen = {}
    for node in list(gm.graph.nodes):
        if node.op not in ("call_function", "call_method"):
            continue
        name = node.target if isinstance(node.target, str) else node.target.__name__
        if "dropout" in name:
            continue
        key = (node.op, node.target, repr(node.args), repr(sorted(node.kwargs.items())))
        if key in seen:
            node.replace_all_uses_with(seen[key])
            gm.graph.erase_node(node)
        else:
            seen[key] = node


register_graph_pass("merge_repeats", merge_repeats, stage="captured")
