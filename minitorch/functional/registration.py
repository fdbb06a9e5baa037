"""The public names of an op a plugin adds: `minitorch.<name>`, `Tensor.<name>`, `F.<name>`.

The table's own ops get theirs in a family module (pointwise.py: the function, and its Tensor
method in the family's mixin) and in minitorch/nn/functional.py. An op added by a plugin
([Note: adding an op from a plugin] in minitorch/ops/registry.py) gets them from one call:

    def softplus(input, beta=1.0, threshold=20.0):       # PyTorch's signature
        check_tensor("softplus", input)
        return ops.softplus(input, beta=beta, threshold=threshold)

    softplus = register_function(softplus, nn_functional=True)
    minitorch.softplus(x); x.softplus(beta=2.0); minitorch.nn.functional.softplus(x)

The function is made overridable, as every public function is ([Note: __torch_function__] in
minitorch/overrides.py), so torch.fx's Proxies see it; and it is named as one of minitorch's
own (its module is this one), so bytecode capture records `minitorch.softplus` in its graphs
as it records `minitorch.sin`, instead of tracing into the plugin's code.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from minitorch.overrides import overridable


def register_function(
    fn: Callable, *, tensor_method: bool = True, nn_functional: bool = False
) -> Callable:
    """Make `fn` public as `minitorch.<fn.__name__>`; with `tensor_method`, also the Tensor
    method `x.<name>(...)` (`fn(x, ...)`); with `nn_functional`, also
    `minitorch.nn.functional.<name>` (give it where PyTorch has one). Returns the public
    function, the one to call from then on."""
    import minitorch

    name = fn.__name__
    if hasattr(minitorch, name):
        raise ValueError(f"minitorch.{name} exists already")
    public = overridable(fn)
    public.__module__ = __name__  # one of minitorch's functions: capture records the call
    minitorch.__all__.append(name)
    setattr(minitorch, name, public)
    if tensor_method:
        tensor = minitorch.Tensor
        if hasattr(tensor, name):
            raise ValueError(f"Tensor.{name} exists already")

        def method(self, *args, **kwargs):
            return public(self, *args, **kwargs)

        method.__name__ = method.__qualname__ = name
        method.__doc__ = fn.__doc__
        setattr(tensor, name, method)
    if nn_functional:
        functional = importlib.import_module("minitorch.nn.functional")
        if hasattr(functional, name):
            raise ValueError(f"minitorch.nn.functional.{name} exists already")
        functional.__all__.append(name)
        setattr(functional, name, public)
    return public
