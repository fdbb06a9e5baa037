"""The exceptions minitorch raises, and where in the user's code they came from.

Every error a user can trigger is a `MinitorchError`, so `except minitorch.MinitorchError`
catches all of them; each also derives from the builtin a Python user would expect
(`ShapeError` is a `ValueError`, `DTypeError` a `TypeError`), as PyTorch's errors do.
"""

from __future__ import annotations

import os
import sys

# Files inside these folders are ours; the first frame outside them is the user's line.
_PACKAGE_ROOTS = tuple(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep + name + os.sep
    for name in ("minitorch", "tracer", "ir", "codegen")
)


class MinitorchError(Exception):
    """Base class of every error minitorch raises on bad input."""


class ShapeError(MinitorchError, ValueError):
    """Shapes that an op cannot combine (names the op and every shape)."""


class IndexOutOfRangeError(ShapeError, IndexError):
    """An index past the end of a dimension (an IndexError, as in PyTorch)."""


class InvalidArgumentError(MinitorchError, ValueError):
    """A value outside what a function accepts (a negative learning rate, say)."""


class DTypeError(MinitorchError, TypeError):
    """A dtype an op does not accept (names the op and the dtype)."""


class ArgumentTypeError(MinitorchError, TypeError):
    """An argument of the wrong Python type: a float where a size is wanted, a str dtype, ..."""


class OutOfMemoryError(MinitorchError, MemoryError, RuntimeError):
    """An allocation the machine cannot hold (names the op, the shape and the bytes).

    A MemoryError, as numpy's, and a RuntimeError, as PyTorch's `torch.OutOfMemoryError`.
    """


class DataDependentError(MinitorchError, RuntimeError):
    """A value was needed that only exists at run time (reading a fake tensor's data)."""


class CompileError(MinitorchError, RuntimeError):
    """Compilation failed; the eager path is untouched and still runs."""


class DeviceError(MinitorchError, RuntimeError):
    """A device that cannot be used here (no cupy, no GPU), or tensors on different devices."""


class AutogradError(MinitorchError, RuntimeError):
    """Misuse of autograd: backward through a freed graph, a non-scalar without a gradient, ..."""


class SerializationError(MinitorchError, ValueError):
    """A program that cannot be saved, or a file that is not a valid saved program (names it)."""


# Code that minitorch generates and runs in place of the user's (the transformed code of a
# captured frame, an fx graph's forward): its filename -> {its line -> 'file.py:12', the user's
# line it stands for}. A generated frame with no such line is skipped like our own files, as
# are those of a compiled graph's wrapper, a numpy kernel's source and a guard function.
_GENERATED_LINES: dict[str, dict[int, str]] = {}
_GENERATED_PREFIXES = (
    "<__transformed_",
    "<fx-generated",
    "<frozen",
    "<wrapper>",
    "<numpy source of",
    "<guard>",
)


def register_generated_lines(filename: str, lines: dict[int, str]) -> None:
    """Errors raised on `lines` of the generated `filename` name the user's lines instead."""
    _GENERATED_LINES[filename] = lines


def user_location() -> str | None:
    """'file.py:12' of the innermost frame outside minitorch's own packages, if any."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        generated = _GENERATED_LINES.get(filename, {}).get(frame.f_lineno)
        if generated is not None:
            return generated
        if not (
            os.path.abspath(filename).startswith(_PACKAGE_ROOTS)
            or filename.startswith(_GENERATED_PREFIXES)
        ):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def at_user_line(message: str) -> str:
    """Append the user's source line to an error message."""
    where = user_location()
    return f"{message} (at {where})" if where else message
