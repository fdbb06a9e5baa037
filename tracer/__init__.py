"""tracer: graphs and the ways to capture them (fx IR, bytecode capture, AOT autograd)."""

import minitorch  # noqa: E402, F401 - tracer builds on minitorch: load it first
