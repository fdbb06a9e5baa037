"""`OptimizedModule`: what `minitorch.compile(model)` returns for an nn.Module.

A training script keeps using the compiled model as it used the model itself, so the wrapper
must look like it, as PyTorch's does:

    compiled = minitorch.compile(model)
    compiled(x)                       the compiled forward (the only compiled path)
    compiled.fc, compiled.configure_optimizers()     read from the model: forwarded
    compiled.dropout_p = 0.2          written to the model: forwarded
    compiled.parameters(), .train(), .eval(), .zero_grad()    the model's (its only child)
    compiled.state_dict()             keys '_orig_mod.fc.weight', ... (the child's name)
    compiled._orig_mod                the model itself
    compiled.training                 the model's flag, read and written

The model is registered as the one submodule `_orig_mod`, so everything that walks the module
tree (parameters, state_dict, train) reaches it, with PyTorch's key names; any other name the
wrapper does not have itself is read from and written to the model.

[Note: a module's call is looked up on every call]
`model(x)` is `type(model).__call__(model, x)`, and Module.__call__ runs `model.forward(x)`,
both looked up anew on each call. So after compiling, a user may change what the call runs:

    model.forward = f           an instance attribute shadows the class's forward
    del model.forward           ... and deleting it uncovers it again
    Model.forward = g           the class's function is replaced
    model.__class__ = Other     another class: its __call__ and forward
    Model.__call__ = h          the call no longer goes through forward at all

PyTorch's OptimizedModule compiles `model.__call__`, whose frame reads `self.forward`, and
Dynamo guards on the module's type and on what `forward` was. Ours compiles the function the
call runs: each call first looks the target up as CPython would (`module_call_target` in
eval_frame.py: three dictionary reads), runs the compiled `model.forward` while that is still
the target, and otherwise captures the new target with the same backend, in its own cache
(its own code object). Inside a trace the same lookup is guarded instead: calling a module
guards its class's `__call__` and `forward` by identity and that the instance has no
`forward` of its own (nn_module.py).
"""

from __future__ import annotations

from collections.abc import Callable

from minitorch.nn.module import Module

# Names the wrapper keeps for itself; every other attribute lives on the model.
_OWN_ATTRIBUTES = frozenset({"_orig_mod", "_compiled_forward", "_call"})


class OptimizedModule(Module):
    """A compiled module: calls go through the compiled forward; everything else is the
    model's (see the module docstring)."""

    def __init__(self, orig_mod: Module, compiled_forward: Callable) -> None:
        super().__init__()
        self._orig_mod = orig_mod  # registered as a submodule, so parameters() finds them
        object.__setattr__(self, "_compiled_forward", compiled_forward)
        # NOTE: imported here, as eval_frame.py imports this module.
        from tracer.dynamo.eval_frame import module_dispatcher

        object.__setattr__(self, "_call", module_dispatcher(compiled_forward))

    def forward(self, *args, **kwargs):
        # What the model's call runs now ([Note: a module's call is looked up on every call])
        return self._call(self._orig_mod, args, kwargs)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails: the wrapper's own tables, then the model.
        orig = self.__dict__.get("_modules", {}).get("_orig_mod")
        if name == "_orig_mod" or orig is None:
            return super().__getattr__(name)
        return getattr(orig, name)

    def __setattr__(self, name: str, value) -> None:
        if name in _OWN_ATTRIBUTES or hasattr(type(self), name):  # training: the property
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if name in _OWN_ATTRIBUTES:
            super().__delattr__(name)
        else:
            delattr(self._orig_mod, name)

    @property
    def training(self) -> bool:
        return self._orig_mod.training

    @training.setter
    def training(self, mode: bool) -> None:
        orig = self.__dict__.get("_modules", {}).get("_orig_mod")
        if orig is not None:  # Module.__init__ sets it before the model is registered
            object.__setattr__(orig, "training", mode)
