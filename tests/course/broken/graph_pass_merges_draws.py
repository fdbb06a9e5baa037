"""Broken on purpose: merges repeats, random draws included (two dropouts become one)."""

from minitorch.compile.hooks import register_graph_pass


def merge_everything(gm):
    seen = {}
    for node in list(gm.graph.nodes):
        if node.op not in ("call_function", "call_method"):
            continue
        key = (node.target, repr(node.args), repr(sorted(node.kwargs.items())))
        if key in seen:
            node.replace_all_uses_with(seen[key])
            gm.graph.erase_node(node)
        else:
            seen[key] = node


register_graph_pass("merge_everything", merge_everything, stage="captured")
