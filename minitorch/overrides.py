"""`__torch_function__`: how a value that is not a tensor takes over a call of a public function.

[Note: __torch_function__]
torch.fx traces by calling the model on Proxies, stand-ins that record what is done with them.
Operators find the Proxy by themselves (`x + 1` calls `Proxy.__add__`), but `minitorch.cat([x,
y])` is our function, which would check its arguments and fail on a Proxy. PyTorch's answer is a
protocol, and we follow it: a class that defines

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None): ...

takes over any call of a public function to which one of its instances is passed, at any depth
of lists and tuples (`cat([x, y])`) or as a keyword. The call becomes
`cls.__torch_function__(minitorch.cat, (Proxy,), ([x, y],), {})`, and what that returns is the
call's result; a Proxy records a node and returns a new Proxy (tracer/fx/proxy.py).

    call                          has_torch_function?   what runs
    minitorch.sin(tensor)         no                    sin itself
    minitorch.sin(proxy)          yes                   Proxy.__torch_function__(minitorch.sin, ...)
    tensor.sum(dim=proxy)         yes (a method calls the function, so the same hook sees it)

The hook is one wrapper, `overridable`, put around every public function by the module that
defines it, with one line at its end: `make_overridable(globals(), __all__)`. A function added to
that `__all__` later is covered with nothing more to do; tests/tracer/test_fx_torch_function.py
checks that every function of `minitorch.__all__` and `nn.functional.__all__` is covered.
Tensor methods mostly call those functions, and so are covered through them; the few that do
not (`view`, `__getitem__`, `to`, ...) carry `@overridable` themselves, and a Proxy records them
as call_method. In-place methods are not covered: a graph would mutate a constant.

Several classes may take part in one call: they are asked in the order their instances appear,
a subclass before its base, and one that returns `NotImplemented` passes the call to the next.
When all decline, the call is an error, as in PyTorch. Tensors define no `__torch_function__`,
so in eager code the hook costs one pass over the arguments, with one set lookup per argument.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Iterable
from typing import Any

from minitorch.errors import ArgumentTypeError, at_user_line

# Types seen to have no __torch_function__ (tensors, numbers, None, dtypes, ...): the fast path.
# Lists and tuples never go in: the hook looks inside them.
_NO_HOOK: set[type] = set()
_COVERED: set[Callable] = set()  # what `overridable` made: never wrapped twice


def _overloaded_args(values: Iterable, found: list) -> None:
    """Append to `found` each argument in `values` (or in their lists and tuples) whose type
    defines __torch_function__, one per type, a subclass before its base."""
    for a in values:
        kind = type(a)
        if kind in _NO_HOOK:
            continue
        if isinstance(a, (list, tuple)):
            _overloaded_args(a, found)
        elif getattr(kind, "__torch_function__", None) is None:
            _NO_HOOK.add(kind)
        elif all(type(f) is not kind for f in found):
            before = [i for i, f in enumerate(found) if issubclass(kind, type(f))]
            found.insert(before[0] if before else len(found), a)


def has_torch_function(args: Iterable) -> bool:
    """Whether any of `args` (looking inside lists and tuples) defines __torch_function__."""
    found: list = []
    _overloaded_args(args, found)
    return bool(found)


def handle_torch_function(public_api: Callable, relevant_args: Iterable, *args, **kwargs) -> Any:
    """Call `public_api(*args, **kwargs)` through the __torch_function__ of `relevant_args`."""
    overloaded: list = []
    _overloaded_args(relevant_args, overloaded)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        result = a.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    raise ArgumentTypeError(
        at_user_line(
            f"no implementation found for '{_public_name(public_api)}' on types that implement "
            f"__torch_function__: {[t.__name__ for t in types]}"
        )
    )


def _public_name(fn: Callable) -> str:
    """The name a user calls `fn` by: minitorch.cat, not minitorch.functional.views.cat."""
    module = fn.__module__
    if module.startswith(("minitorch.functional", "minitorch.factories")):
        module = "minitorch"
    return f"{module}.{fn.__qualname__}"


def overridable(fn: Callable) -> Callable:
    """`fn`, except that an argument defining __torch_function__ takes the call over."""

    @functools.wraps(fn)
    def public_api(*args, **kwargs):
        # NOTE: eager code runs this on every call, so the common case is one set lookup per
        # argument; only a list, a tuple or a type not seen before takes the longer look.
        values = (*args, *kwargs.values()) if kwargs else args
        for a in values:
            if type(a) not in _NO_HOOK:
                if has_torch_function(values):
                    return handle_torch_function(public_api, values, *args, **kwargs)
                break
        return fn(*args, **kwargs)

    _COVERED.add(public_api)
    return public_api


def make_overridable(namespace: dict[str, Any], names: Iterable[str]) -> None:
    """Replace each function `names` lists in a module's `namespace` by `overridable(it)`
    (classes and names brought in from another module that covered them already stay).

    Called once, at the end of the module (`make_overridable(globals(), __all__)`), so that
    every later reference, its own Tensor methods included, reaches the covered function.
    """
    for name in names:
        fn = namespace[name]
        if isinstance(fn, types.FunctionType) and fn not in _COVERED:
            namespace[name] = overridable(fn)


def original(fn: Callable) -> Callable:
    """The function `overridable` wrapped, else `fn`: for code that runs a function's body where
    no __torch_function__ argument can reach it (bytecode capture, inlining the call)."""
    return fn.__wrapped__ if fn in _COVERED else fn
