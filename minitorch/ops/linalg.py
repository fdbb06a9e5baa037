"""The op table, linear algebra. See [Note: the op table] in registry.py."""

from __future__ import annotations

__all__: list[str] = []  # the ops this family registers
