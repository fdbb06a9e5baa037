"""tracer: graphs and the ways to capture them (fx IR, bytecode capture, AOT autograd)."""
