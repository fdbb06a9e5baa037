"""Forward hooks: functions a module's call runs before and after its `forward`, as PyTorch's.

    handle = m.register_forward_pre_hook(pre)    pre(m, args) -> None | new args
    handle = m.register_forward_hook(post)       post(m, args, output) -> None | new output
    m(x)                                         pre hooks, forward, hooks, in order
    handle.remove()                              the hook is gone

With `with_kwargs=True` a pre hook is called as pre(m, args, kwargs) and returns None or
(args, kwargs), and a forward hook as post(m, args, kwargs, output). `prepend=True` puts the
hook first. A pre hook that returns a value that is not a tuple gives the single argument
`(value,)`, as in PyTorch.

    >>> import minitorch, minitorch.nn as nn
    >>> m = nn.Identity()
    >>> h = m.register_forward_hook(lambda mod, args, out: out * 2)
    >>> m(minitorch.tensor([1.0])).tolist()
    [2.0]
    >>> h.remove(); m(minitorch.tensor([1.0])).tolist()
    [1.0]

A compiled module (tracer/dynamo/optimized_module.py) runs the hooks around its compiled
forward; a module with hooks called inside a compiled function is called for real, at a
graph break, and a hook added later is noticed by a guard (`not ___has_hooks(L['m'])`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

_ids = itertools.count()


class RemovableHandle:
    """What register_forward_hook returns: `remove()` takes the hook out again (also as a
    context manager: the hook is there for the `with` block only)."""

    def __init__(self, table: dict) -> None:
        self.table = table
        self.id = next(_ids)

    def remove(self) -> None:
        self.table.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info) -> None:
        self.remove()


def register(table: dict, hook: Callable, prepend: bool, with_kwargs: bool) -> RemovableHandle:
    """Add `hook` to `table` (id -> (hook, with_kwargs)), last or first."""
    handle = RemovableHandle(table)
    entry = (hook, with_kwargs)
    if prepend:
        rest = dict(table)
        table.clear()
        table[handle.id] = entry
        table.update(rest)
    else:
        table[handle.id] = entry
    return handle


def has_hooks(module: Any) -> bool:
    """Does calling `module` run hooks? (Read from __dict__: a module made without
    Module.__init__ has none.)"""
    own = module.__dict__
    return bool(own.get("_forward_pre_hooks") or own.get("_forward_hooks"))


def call_with_hooks(module: Any, forward: Callable, args: tuple, kwargs: dict) -> Any:
    """`forward(*args, **kwargs)` with the module's pre hooks before it and hooks after it."""
    own = module.__dict__
    for hook, with_kwargs in list(own.get("_forward_pre_hooks", {}).values()):
        if with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    output = forward(*args, **kwargs)
    for hook, with_kwargs in list(own.get("_forward_hooks", {}).values()):
        result = hook(module, args, kwargs, output) if with_kwargs else hook(module, args, output)
        if result is not None:
            output = result
    return output
