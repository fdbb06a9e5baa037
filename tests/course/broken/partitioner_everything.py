"""Broken on purpose: saves every forward value, read by the backward or not."""

from minitorch.compile.hooks import register_partitioner

register_partitioner(
    "everything", lambda joint: [n for n in joint.gm.graph.nodes if n in joint.forward_nodes]
)
