"""`Unsupported`: the one way the capture frontend says "I cannot trace this".

It is internal: convert_frame.py catches it and runs the frame eagerly, recording the reason
(`fallback_reasons(fn)`), or, with `fullgraph=True`, turns it into the user-facing
`minitorch.errors.CompileError` that names the reason and the user's source line. A later issue
will catch it at the instruction instead and compile a graph break there.

    raise Unsupported("call to a Python function (inlining user code is not supported yet)")
"""

from __future__ import annotations


class Unsupported(Exception):
    """Symbolic interpretation cannot continue; `reason` says why, in words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        # Filled in by the interpreter when the exception passes the failing instruction.
        self.filename: str | None = None
        self.lineno: int | None = None
        self.opname: str | None = None
        # Raised inside a traced `with no_grad():` block, where no break can go: convert_frame
        # traces the frame again, breaking the graph at the block instead (grad_mode.py).
        self.in_with_block = False

    def where(self) -> str:
        """'file.py:12' of the instruction that failed, or '' if unknown."""
        if self.filename is None or self.lineno is None:
            return ""
        return f"{self.filename}:{self.lineno}"
