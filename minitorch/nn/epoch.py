"""The module epoch: one number that moves whenever any Module anywhere changes.

    >>> from minitorch.nn import epoch
    >>> before = epoch.current
    >>> net = Linear(2, 3)         # its __init__ sets attributes: the epoch moves
    >>> net.eval()                 # so does the training flag
    >>> epoch.current > before
    True
    >>> net.weight.mul_(2)         # a tensor's values are not the module's state: it stays

[Note: the module epoch]
A compiled frame's guard reads the modules it traced through: each submodule's class and
training flag, their attributes, hooks and tables, the keys of a Sequential (guards.py). A
model's guard used to walk all of it on every call. Instead, the state of every module is
summed up by one process-wide counter, `current`, that every change of any module's
structure moves on:

- setting or deleting an attribute (Module.__setattr__ / __delattr__, `m.__class__ = C` too),
- registering, replacing or removing a parameter, buffer or submodule: the tables
  `_parameters`, `_buffers` and `_modules` are `Table`s, dicts that move the epoch on every
  write, so the containers' direct edits (`del seq[0]`, `insert`) count as well,
- the training flag (train() / eval()),
- forward hooks added or removed (their tables are Tables too).

So a guard that found the module tree as the trace saw it at epoch 41 knows it is still so
while the epoch is 41 and the root is the same object (tracer/dynamo/epoch_guard.py): one
comparison instead of a walk. One global number is the simplest design that is right: a
change deep in the tree (`model.h[3].attn.dropout.p = 0.5`) moves the number the root's guard
reads, with no parent pointers to maintain. Its cost is that a change to *any* module (even
one in another model, or one just being built) sends every guard back to its full walk once,
which then records the new epoch.

What the epoch does not count, on purpose: a tensor's values or metadata. An optimizer step
writes parameters in place every iteration, and `p.requires_grad_(False)`, `p.data = other`
and `model.to(float64)` change a parameter without changing which tensor the module holds;
the guard checks every tensor it reads on every call, one comparison each. Nor does it count
what is not a Module: a class (`Linear.forward = f`), a function's code, a plain object held
by a module (a config): the guard keeps checking those on every call. Writes that bypass the
Module's own methods (`object.__setattr__(m, ...)`, `m.__dict__[name] = ...`) are not seen.

The count moves *after* the change: a guard reads the epoch before it walks, so a change that
races with the walk leaves the guard with an epoch older than the change. Two threads moving
it at once may move it once; it still moves past any epoch a guard could have recorded.
"""

from __future__ import annotations

current = 0  # moves on at every change of any Module's state


def advance() -> None:
    """Count one change of some module's state (after making it)."""
    global current
    current += 1


class Table(dict):
    """A module's table of parameters, buffers, submodules or hooks: a dict whose every
    write moves the module epoch on. Reads are a dict's."""

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        advance()

    def __delitem__(self, key) -> None:
        super().__delitem__(key)
        advance()

    def __ior__(self, other):
        super().__ior__(other)
        advance()
        return self

    def clear(self) -> None:
        super().clear()
        advance()

    def pop(self, *args):
        try:
            return super().pop(*args)
        finally:
            advance()

    def popitem(self):
        try:
            return super().popitem()
        finally:
            advance()

    def setdefault(self, key, default=None):
        try:
            return super().setdefault(key, default)
        finally:
            advance()

    def update(self, *args, **kwargs) -> None:
        try:
            super().update(*args, **kwargs)
        finally:
            advance()
