"""`wrap`: keep a module-level function opaque to symbolic tracing, as `torch.fx.wrap`.

    def sigmoid_lowp(x):                    # traced through, it would record float() etc.
        return x.float().sigmoid().double()

    minitorch.fx.wrap("sigmoid_lowp")       # or wrap(sigmoid_lowp), at the module's top level

A call of a wrapped function on Proxies becomes one node, call_function[target=sigmoid_lowp]
(the original function), which a pass can later inline or replace (pytorch/examples'
fx/primitive_library.py). `wrap` only remembers the name and the globals it lives in; while
a trace runs, symbolic_trace.py swaps each remembered global for a stand-in that records when
a Proxy is among its arguments and calls the original otherwise, and puts the original back
after ([Note: how tracing sees everything] in symbolic_trace.py). Outside tracing the name
is the function itself, so `node.target is sigmoid_lowp` holds.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from minitorch.errors import MinitorchError, at_user_line
from tracer.fx.node import map_aggregate
from tracer.fx.proxy import Proxy

_wrapped: list[tuple[dict[str, Any], str]] = []  # (a module's globals, a name in them)


def wrap(fn_or_name: str | Callable) -> str | Callable:
    """Record calls of the module-level function `fn_or_name` as leaves; returns it as given."""
    caller = inspect.currentframe().f_back
    if caller.f_code.co_name != "<module>":
        raise MinitorchError(
            at_user_line(
                "wrap must be called at the top level of a module (it patches the module's globals)"
            )
        )
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    _wrapped.append((caller.f_globals, name))
    return fn_or_name


def patch_wrapped() -> Callable[[], None]:
    """Swap each wrapped global for its recording stand-in; returns the undo."""
    originals = [
        (globals_, name, globals_[name])
        for globals_, name in _wrapped
        if callable(globals_.get(name))
    ]
    for globals_, name, fn in originals:
        globals_[name] = _recording(fn)

    def undo() -> None:
        for globals_, name, fn in originals:
            globals_[name] = fn

    return undo


def _recording(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def stand_in(*args: Any, **kwargs: Any) -> Any:
        proxies = []
        map_aggregate((args, kwargs), lambda a: proxies.append(a) if isinstance(a, Proxy) else None)
        if not proxies:
            return fn(*args, **kwargs)
        return Proxy.__torch_function__(fn, (), args, kwargs)  # call_function[target=fn]

    return stand_in
