"""`minitorch._dynamo`: controls of bytecode capture (implemented in tracer/dynamo)."""

from __future__ import annotations


def reset() -> None:
    """Forget every compiled function, guard and cache entry."""
    from tracer.dynamo import reset as _reset

    _reset()
