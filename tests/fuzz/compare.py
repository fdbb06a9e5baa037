"""What a call did, observed the same way for eager and compiled, and the first difference.

A compiled function promises more than its return values. `observe` records everything eager
mode defines for one call:

    values, dtypes, shapes and requires_grad of the outputs (nested tuples flattened)
    the inputs after the call             in-place ops on inputs must reach the caller
    which outputs share memory with which inputs and other outputs   (a view stays a view)
    the inputs' .grad after backward() of the outputs' sum            (None stays None)
    the exception, if the call or backward raised one                 (the same class)

and `difference` compares two observations. Floats agree within a tolerance relative to the
largest value of the tensor (a fused kernel rounds differently, not wrongly), with NaN in the
same places and infinities of the same sign; integers and bools agree exactly. Strides are not
compared: eager leaves them unspecified for most ops, and so does PyTorch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

import minitorch

# A chain of a few ops, fused and reordered, stays within this of eager, relative to the
# tensor's largest value; a wrong op or a wrong element is far outside it.
RTOL = {"float32": 1e-3, "float64": 1e-9}
# Beyond this the value has overflowed in one order of evaluation and may not have in another
# (exp of a large value): count it as the infinity of its sign.
SATURATED = {"float32": 1e35, "float64": 1e305}


@dataclass
class Tensor:
    """A tensor output, copied when it was returned."""

    value: np.ndarray
    dtype: str
    requires_grad: bool


@dataclass
class Observation:
    """Everything one call did that eager mode defines."""

    error: BaseException | None = None
    error_stage: str = ""  # "call" or "backward"
    structure: str = ""  # the nesting of the result: "tuple(Tensor, int)"
    outputs: list = field(default_factory=list)  # Tensor, or a Python value as it was
    inputs_after: list[np.ndarray] = field(default_factory=list)
    aliases: list[list[str]] = field(default_factory=list)  # per output: what it overlaps
    grads: list[np.ndarray | None] = field(default_factory=list)


def observe(fn: Callable, inputs: list[minitorch.Tensor]) -> Observation:
    """Call fn(*inputs), then backward() of the sum of its float outputs that require grad.

    The random generator is seeded first: dropout compiled must draw what eager draws.
    """
    seen = Observation()
    minitorch.manual_seed(0)
    try:
        with np.errstate(all="ignore"):
            result = fn(*inputs)
    except Exception as e:
        seen.error, seen.error_stage = e, "call"
        return seen
    leaves, seen.structure = _flatten(result)
    seen.aliases = _aliases(leaves, inputs)
    seen.outputs = [_copy(leaf) for leaf in leaves]
    seen.inputs_after = [_array(x).copy() for x in inputs]
    differentiable = [
        leaf
        for leaf in leaves
        if isinstance(leaf, minitorch.Tensor)
        and leaf.requires_grad
        and leaf.dtype.is_floating_point
    ]
    if differentiable:
        try:
            with np.errstate(all="ignore"):
                sum(leaf.sum() for leaf in differentiable).backward()
        except Exception as e:
            seen.error, seen.error_stage = e, "backward"
            return seen
    seen.grads = [None if x.grad is None else _array(x.grad).copy() for x in inputs]
    return seen


def difference(
    want: Observation, got: Observation, precision: str = "float64"
) -> tuple[str, str] | None:
    """(kind, what differs) for the first way `got` is not `want`, or None when it is.

    `precision`: the least precise float dtype the program computed in. A float64 output of
    float32 math (`x.sin().double()`) carries float32's rounding, and gets its tolerance.
    """
    if want.error is not None or got.error is not None:
        return _error_difference(want, got)
    if got.structure != want.structure:
        return "structure", f"returned {got.structure}, eager {want.structure}"
    for k, (w, g) in enumerate(zip(want.outputs, got.outputs)):
        found = _output_difference(w, g, precision)
        if found is not None:
            return found[0], f"output {k}: {found[1]}"
    for k, (w, g) in enumerate(zip(want.inputs_after, got.inputs_after)):
        found = _values_difference(w, g, precision)
        if found is not None:
            return "input mutation", f"input {k} after the call: {found}"
    for k, (w, g) in enumerate(zip(want.aliases, got.aliases)):
        if w != g:
            return (
                "aliasing",
                f"output {k} shares memory with {g or 'nothing'}, eager: {w or 'nothing'}",
            )
    for k, (w, g) in enumerate(zip(want.grads, got.grads)):
        if (w is None) != (g is None):
            return "grad", f"input {k}'s .grad is {_none_or_tensor(g)}, eager {_none_or_tensor(w)}"
        found = None if w is None else _values_difference(w, g, precision)
        if found is not None:
            return "grad", f"input {k}'s .grad: {found}"
    return None


def _error_difference(want: Observation, got: Observation) -> tuple[str, str] | None:
    if want.error is None:
        return "crash", f"{got.error_stage} raised {_describe(got.error)}; eager did not"
    if got.error is None:
        return (
            "missing error",
            f"eager's {want.error_stage} raised {_describe(want.error)}, compiled did not",
        )
    if not isinstance(got.error, type(want.error)) or got.error_stage != want.error_stage:
        return (
            "wrong error",
            f"{got.error_stage} raised {_describe(got.error)}; eager's "
            f"{want.error_stage} raised {_describe(want.error)}",
        )
    return None


def _output_difference(want: object, got: object, precision: str) -> tuple[str, str] | None:
    if not isinstance(want, Tensor):
        return None if _same_python_value(want, got) else ("value", f"{got!r}, eager {want!r}")
    if got.dtype != want.dtype:
        return "dtype", f"dtype {got.dtype}, eager {want.dtype}"
    if got.value.shape != want.value.shape:
        return "shape", f"shape {got.value.shape}, eager {want.value.shape}"
    if got.requires_grad != want.requires_grad:
        return "requires_grad", f"requires_grad={got.requires_grad}, eager {want.requires_grad}"
    found = _values_difference(want.value, got.value, precision)
    return None if found is None else ("value", found)


def _values_difference(want: np.ndarray, got: np.ndarray, precision: str) -> str | None:
    """Where `got` is not close to `want` (same dtype and shape), as a sentence, or None."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{got.dtype}{list(got.shape)}, eager {want.dtype}{list(want.shape)}"
    if want.dtype.kind not in "fc":
        bad = got != want
    else:
        limit = SATURATED[str(want.dtype)]
        with np.errstate(all="ignore"):  # sign(0) * inf, discarded by the where
            w, g = (np.where(np.abs(a) > limit, np.sign(a) * np.inf, a) for a in (want, got))
        finite = np.isfinite(w)
        scale = max(1.0, float(np.abs(w[finite]).max(initial=0.0)))
        with np.errstate(all="ignore"):
            rtol = max(RTOL[str(want.dtype)], RTOL[precision])
            close = np.abs(g - w) <= rtol * scale
        bad = np.where(finite, ~close, ~((g == w) | (np.isnan(g) & np.isnan(w))))
    if not bad.any():
        return None
    where = tuple(int(i) for i in np.argwhere(bad)[0])
    return (
        f"{int(bad.sum())} of {bad.size} elements differ, e.g. at {list(where)}: "
        f"{got[where].item()!r}, eager {want[where].item()!r}"
    )


def _same_python_value(want: object, got: object) -> bool:
    if type(want) is not type(got):
        return False
    if isinstance(want, float):
        return want == got or (want != want and got != got) or abs(want - got) <= 1e-6 * abs(want)
    return want == got


def _flatten(result: object) -> tuple[list, str]:
    """The leaves of nested tuples and lists, and a description of the nesting."""
    if isinstance(result, (tuple, list)):
        parts = [_flatten(item) for item in result]
        leaves = [leaf for part, _ in parts for leaf in part]
        return leaves, f"{type(result).__name__}({', '.join(text for _, text in parts)})"
    return [result], type(result).__name__


def _aliases(leaves: list, inputs: list[minitorch.Tensor]) -> list[list[str]]:
    """For each output, the inputs and other outputs whose memory it overlaps."""
    named = [(f"input {k}", x) for k, x in enumerate(inputs)]
    named += [(f"output {k}", t) for k, t in enumerate(leaves)]
    result = []
    for k, leaf in enumerate(leaves):
        if not isinstance(leaf, minitorch.Tensor):
            result.append([])
            continue
        result.append(
            [
                name
                for name, other in named
                if isinstance(other, minitorch.Tensor)
                and name != f"output {k}"
                and np.shares_memory(_array(leaf), _array(other))
            ]
        )
    return result


def _array(tensor: minitorch.Tensor) -> np.ndarray:
    return tensor.detach().numpy()


def _copy(leaf: object) -> object:
    if isinstance(leaf, minitorch.Tensor):
        return Tensor(_array(leaf).copy(), str(leaf.dtype), leaf.requires_grad)
    return leaf


def _none_or_tensor(value: np.ndarray | None) -> str:
    return "None" if value is None else "a tensor"


def _describe(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text[:200]}"
