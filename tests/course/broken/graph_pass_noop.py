"""Broken on purpose: registered, and does nothing (it claims to merge repeats)."""

from minitorch.compile.hooks import register_graph_pass

register_graph_pass("noop", lambda gm: None, stage="captured")
