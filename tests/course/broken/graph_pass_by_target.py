"""Broken on purpose: merges nodes by target alone, ignoring their arguments (wrong values)."""

from minitorch.compile.hooks import register_graph_pass


def merge_by_target(gm):
    first = {}
    for node in list(gm.graph.nodes):
        if node.op != "call_function" or getattr(node.target, "kind", "") == "random":
            continue
        if node.target in first:
            node.replace_all_uses_with(first[node.target])
            gm.graph.erase_node(node)
        else:
            first[node.target] = node


register_graph_pass("merge_by_target", merge_by_target, stage="captured")
