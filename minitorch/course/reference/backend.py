"""The reference solution of the assignment `backend`: the numpy source backend, registered
under a name of its own, as a student's plugin registers theirs.

    python -m minitorch.course grade backend --plugin minitorch.course.reference.backend

codegen/numpy_source.py is the worked answer ([Note: the numpy source backend]): each kernel
becomes a Python function of whole-array numpy statements, compiled with `exec`.
"""

from __future__ import annotations

from codegen.numpy_source import NumpySourceBackend
from codegen.registry import register_backend


class NumpyReference(NumpySourceBackend):
    """The numpy source backend, named so that the conformance suite and
    `minitorch.compile(f, backend="numpy_reference")` find it."""

    name = "numpy_reference"


register_backend(NumpyReference())
