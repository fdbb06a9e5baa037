"""`compile(mode=...)` and `compile(options=...)`: PyTorch's presets, checked as PyTorch does.

In PyTorch a mode is a named set of Inductor options:

    "default"                      {}
    "reduce-overhead"              CUDA graphs: replay a whole graph's kernel launches at once
    "max-autotune"                 benchmark kernel variants and keep the fastest; CUDA graphs
    "max-autotune-no-cudagraphs"   the same without CUDA graphs

Training scripts pass them, so `minitorch.compile` accepts the same names and options, and
rejects others with PyTorch's RuntimeError and message. None of these options has a
counterpart in our own backends yet (no CUDA graphs, no autotuning: codegen/ compiles one
kernel per fused group), so with them every mode compiles the same code today. A function
backend gets a mode other than "default", or the options, as keyword arguments, as in PyTorch:
`backend(gm, example_inputs, mode="max-autotune")`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from minitorch.errors import CompileError

# Every option a mode may set, with its default: what `options=` accepts, and of what type.
OPTIONS: dict[str, Any] = {
    "triton.cudagraphs": False,
    "max_autotune": False,
    "coordinate_descent_tuning": False,
}

MODES: dict[str, dict[str, Any]] = {
    "default": {},
    "reduce-overhead": {"triton.cudagraphs": True},
    "max-autotune": {
        "max_autotune": True,
        "triton.cudagraphs": True,
        "coordinate_descent_tuning": True,
    },
    "max-autotune-no-cudagraphs": {"max_autotune": True, "coordinate_descent_tuning": True},
}


def check_one_of(mode: str | None, options: dict[str, Any] | None) -> None:
    if mode is not None and options is not None:
        raise CompileError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )


def compile_options(mode: str | None, options: dict[str, Any] | None) -> dict[str, Any]:
    """The options `mode` or `options` ask for (at most one of the two may be given).

    compile_options("reduce-overhead", None) == {"triton.cudagraphs": True}
    """
    check_one_of(mode, options)
    if options is None:
        if (mode or "default") not in MODES:
            raise CompileError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
        return dict(MODES[mode or "default"])
    chosen = {}
    for key, value in options.items():
        name = key.replace("-", "_")
        if name not in OPTIONS:
            raise CompileError(
                f"Unexpected optimization option {key}, known options are {list(OPTIONS)}"
            )
        if type(value) is not type(OPTIONS[name]):
            raise CompileError(
                f"Unexpected type of attr {key}, got {type(value).__name__} "
                f"should be {type(OPTIONS[name]).__name__}"
            )
        chosen[name] = value
    return chosen


@dataclass(frozen=True)
class BackendWithOptions:
    """A function backend called with the mode or options it was compiled with; equal for
    equal settings, so two compiles with the same ones share cache entries."""

    fn: Callable
    mode: str | None
    options: tuple[tuple[str, Any], ...] | None  # the dict's items: hashable

    @property
    def __name__(self) -> str:
        return getattr(self.fn, "__name__", type(self.fn).__name__)

    def __call__(self, gm, example_inputs):
        kwargs: dict[str, Any] = {}
        if self.mode not in (None, "default"):
            kwargs["mode"] = self.mode
        if self.options:
            kwargs["options"] = dict(self.options)
        return self.fn(gm, example_inputs, **kwargs)
