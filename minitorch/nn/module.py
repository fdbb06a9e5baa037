"""`Module`: a container of parameters, buffers and submodules with a `forward`.

Assigning a Parameter or a Module to an attribute registers it; `register_buffer` registers
a tensor that is state but not learnable (BatchNorm's running mean). Everything else about a
module follows from those three ordered tables:

    parameters() / named_parameters()   'fc1.weight', 'fc1.bias', 'fc2.weight', ...
    buffers() / named_buffers()         'bn.running_mean', ...
    modules() / children()              the tree of submodules, depth first
    state_dict() / load_state_dict()    parameters and persistent buffers by dotted name
    train() / eval() / to() / zero_grad() / apply()

    >>> net = Sequential(Linear(2, 3), ReLU())
    >>> [name for name, _ in net.named_parameters()]
    ['0.weight', '0.bias']

Every change of a module's state (an attribute, a table's entry, the training flag, a hook)
moves the module epoch on ([Note: the module epoch] in epoch.py), which compiled code's guards
read instead of walking the model.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, NamedTuple

from minitorch.errors import MinitorchError, ShapeError, at_user_line
from minitorch.nn._data import copy_into, replace_data
from minitorch.nn.epoch import Table, advance
from minitorch.nn.hooks import RemovableHandle, call_with_hooks, has_hooks, register
from minitorch.nn.parameter import Parameter
from minitorch.tensor import Tensor

# hook(module, args, kwargs) -> the call's result, in place of module.forward(*args, **kwargs).
# Set only by bytecode capture, while a frame it could not capture runs eagerly: the modules
# that frame calls are then captured on their own, as TorchDynamo's frame hook captures every
# frame ([Note: our PEP 523] in tracer/dynamo/eval_frame.py). Per thread, like grad mode.
call_hook: ContextVar[Callable | None] = ContextVar("module_call_hook", default=None)


class _IncompatibleKeys(NamedTuple):  # PyTorch's name, so it prints the same
    """What `load_state_dict` could not match (strict=False returns it instead of raising)."""

    missing_keys: list[str]  # the module has them, the state dict does not
    unexpected_keys: list[str]  # the state dict has them, the module does not

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
            f"unexpected_keys={self.unexpected_keys})"
        )


class Module:
    """Base class of every layer and model."""

    training: bool

    def __init__(self) -> None:
        # NOTE: object.__setattr__, because our own __setattr__ needs these tables to exist.
        # Tables, which move the module epoch on at every write ([Note: the module epoch]).
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", Table())
        object.__setattr__(self, "_buffers", Table())
        object.__setattr__(self, "_non_persistent_buffers", set())
        object.__setattr__(self, "_modules", Table())
        object.__setattr__(self, "_forward_pre_hooks", Table())  # id -> (hook, with_kwargs)
        object.__setattr__(self, "_forward_hooks", Table())  # (hooks.py)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args, **kwargs):
        hook = call_hook.get()
        if hook is not None:
            return hook(self, args, kwargs)
        if has_hooks(self):  # register_forward_hook & co. (hooks.py)
            return call_with_hooks(self, self.forward, args, kwargs)
        return self.forward(*args, **kwargs)

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """`hook(module, args)` before each forward; a value it returns replaces the args."""
        return register(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """`hook(module, args, output)` after each forward; a value it returns replaces
        the output."""
        return register(self._forward_hooks, hook, prepend, with_kwargs)

    # ---- registration --------------------------------------------------------------------

    def __setattr__(self, name: str, value) -> None:
        try:
            self._assign(name, value)
        finally:  # even after a failed check: _forget may have run ([Note: the module epoch])
            advance()

    def _assign(self, name: str, value) -> None:
        """`self.name = value`: into the table its kind goes to, else the instance."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign attributes before Module.__init__() call")
        if isinstance(value, Parameter):
            self._forget(name)
            self.register_parameter(name, value)
        elif name in self._parameters:
            self._check(
                value is None,
                f"cannot assign {_kind(value)} as parameter '{name}' "
                "(minitorch.nn.Parameter or None expected)",
            )
            self._parameters[name] = None
        elif isinstance(value, Module):
            self._forget(name)
            self.add_module(name, value)
        elif name in self._modules:
            self._check(
                value is None,
                f"cannot assign {_kind(value)} as child module "
                f"'{name}' (minitorch.nn.Module or None expected)",
            )
            self._modules[name] = None
        elif name in self._buffers:
            self._check(
                value is None or isinstance(value, Tensor),
                f"cannot assign {_kind(value)} as buffer '{name}' "
                "(minitorch.Tensor or None expected)",
            )
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        # Only called when normal lookup fails: look in the tables.
        for table in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(table, {})
            if name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        try:
            found = self._forget(name)
        finally:
            advance()
        if not found:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._parameters, *self._buffers, *self._modules})

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """State that is not learned (running statistics); in state_dict() if `persistent`."""
        self._check_new_name("buffer", name)
        self._check(
            tensor is None or isinstance(tensor, Tensor),
            f"cannot assign {_kind(tensor)} as buffer '{name}' (minitorch.Tensor or None expected)",
        )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers.discard(name)
        else:
            self._non_persistent_buffers.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        self._check_new_name("parameter", name)
        self._check(
            param is None or isinstance(param, Parameter),
            f"cannot assign {_kind(param)} as parameter '{name}' "
            "(minitorch.nn.Parameter or None expected)",
        )
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        self._check_new_name("module", name)
        self._check(
            module is None or isinstance(module, Module),
            f"{_kind(module)} is not a Module subclass",
        )
        self._modules[name] = module

    register_module = add_module

    def _check_new_name(self, what: str, name: str) -> None:
        self._check(isinstance(name, str), f"{what} name should be a string, got {_kind(name)}")
        self._check(
            name != "" and "." not in name,
            f'{what} name can\'t be empty or contain ".", got {name!r}',
        )
        tables = {"parameter": self._parameters, "buffer": self._buffers, "module": self._modules}
        self._check(
            not hasattr(self, name) or name in tables[what], f"attribute '{name}' already exists"
        )

    def _forget(self, name: str) -> bool:
        """Remove `name` from every table and the plain attributes; True if it was anywhere."""
        found = name in self.__dict__
        self.__dict__.pop(name, None)
        for table in (self._parameters, self._buffers, self._modules):
            found = name in table or found
            table.pop(name, None)
        self._non_persistent_buffers.discard(name)
        return found

    @staticmethod
    def _check(ok: bool, message: str) -> None:
        if not ok:
            raise MinitorchError(at_user_line(message))

    # ---- traversal -----------------------------------------------------------------------

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """Self, then every submodule depth first, with dotted names; a shared one once."""
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                child_prefix = f"{prefix}.{name}" if prefix else name
                yield from child.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_members(
        self, table: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        """(dotted name, entry) of one table over self (and submodules if `recurse`)."""
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        seen = set()
        for module_name, module in modules:
            for name, value in getattr(module, table).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                seen.add(id(value))
                yield (f"{module_name}.{name}" if module_name else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """('fc1.weight', p), ...; a parameter shared by two layers comes once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def get_submodule(self, target: str) -> Module:
        module = self
        for part in filter(None, target.split(".")):
            if not isinstance(module._modules.get(part), Module):
                raise AttributeError(f"{type(module).__name__} has no submodule `{part}`")
            module = module._modules[part]
        return module

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call fn on every submodule (children first), then on self: `net.apply(init_fn)`."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- state ---------------------------------------------------------------------------

    def state_dict(
        self, *, destination: dict | None = None, prefix: str = "", keep_vars: bool = False
    ) -> OrderedDict[str, Tensor]:
        """Parameters and persistent buffers by dotted name, module by module.

        Values share memory with the module's tensors but are detached (unless keep_vars).
        """
        out = OrderedDict() if destination is None else destination
        for name, param in self._parameters.items():
            if param is not None:
                out[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers:
                out[prefix + name] = buffer if keep_vars else buffer.detach()
        for name, child in self._modules.items():
            if child is not None:
                child.state_dict(destination=out, prefix=f"{prefix}{name}.", keep_vars=keep_vars)
        return out

    def load_state_dict(
        self, state_dict: dict[str, Tensor], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy `state_dict`'s tensors into the parameters and buffers, in place.

        Shape mismatches always fail; missing and unexpected keys fail when `strict`, and are
        returned otherwise. Nothing is copied unless everything matches.
        """
        expected = self.state_dict(keep_vars=True)
        missing = [key for key in expected if key not in state_dict]
        unexpected = [key for key in state_dict if key not in expected]
        errors = []
        if strict:  # PyTorch's order: missing, unexpected, then size mismatches
            if missing:
                errors.append(
                    "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". "
                )
            if unexpected:
                errors.append(
                    "Unexpected key(s) in state_dict: "
                    + ", ".join(f'"{k}"' for k in unexpected)
                    + ". "
                )
        mismatched = False
        for key, target in expected.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected a Tensor '
                    f"from checkpoint but received {_kind(value)}"
                )
            elif tuple(value.shape) != tuple(target.shape):
                mismatched = True
                errors.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{value.shape} from checkpoint, the shape in current model is "
                    f"{target.shape}."
                )
        if errors:
            message = (
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
            raise (ShapeError if mismatched else MinitorchError)(at_user_line(message))
        for key, target in expected.items():
            if key in state_dict:
                if assign:
                    replace_data(target, state_dict[key])
                else:
                    copy_into(target, state_dict[key])
        return _IncompatibleKeys(missing, unexpected)

    # ---- modes and conversions -----------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Training mode for self and every submodule (Dropout drops, BatchNorm updates)."""
        self._check(isinstance(mode, bool), "training mode is expected to be boolean")
        object.__setattr__(self, "training", mode)
        advance()  # [Note: the module epoch]
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        for param in self.parameters():
            if param.grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                param.grad.zero_()

    def to(self, *args, **kwargs) -> Module:
        """Move and/or convert every parameter and buffer in place; returns self.

        `to(float64)`, `to("cuda")`, `to(device, dtype)`, `to(tensor)`. A dtype converts
        floating-point tensors only (BatchNorm's integer batch count stays int64).
        """
        from minitorch.conversions import to_arguments

        dtype, device = to_arguments(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise MinitorchError(
                at_user_line(
                    "nn.Module.to only accepts floating point dtypes, but got desired "
                    f"dtype={dtype}"
                )
            )

        def convert(t: Tensor) -> Tensor:
            wanted = dtype if dtype is not None and t.dtype.is_floating_point else None
            return t.detach().to(dtype=wanted, device=device)

        return self._apply(convert)

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Replace the data of every parameter (and its grad) and buffer by fn(data)."""
        for module in self.modules():
            for param in module._parameters.values():
                if param is not None:
                    replace_data(param, fn(param))
                    if param.grad is not None:
                        param.grad = fn(param.grad)
            for buffer in module._buffers.values():
                if buffer is not None:
                    replace_data(buffer, fn(buffer))
        return self

    def cuda(self) -> Module:
        return self.to("cuda")

    def cpu(self) -> Module:
        return self.to("cpu")

    def float(self) -> Module:
        from minitorch.dtype import float32

        return self.to(float32)

    def double(self) -> Module:
        from minitorch.dtype import float64

        return self.to(float64)

    def half(self) -> Module:
        from minitorch.dtype import float16

        return self.to(float16)

    def bfloat16(self) -> Module:
        from minitorch.dtype import bfloat16

        return self.to(bfloat16)

    # ---- printing ------------------------------------------------------------------------

    def extra_repr(self) -> str:
        """The layer's settings, shown inside its repr: 'in_features=2, out_features=3'."""
        return ""

    def __repr__(self) -> str:
        """PyTorch's layout: settings on one line, or one indented line per child."""
        extra = self.extra_repr().split("\n") if self.extra_repr() else []
        children = [
            f"({name}): " + repr(module).replace("\n", "\n  ")
            for name, module in self._modules.items()
        ]
        name = type(self).__name__
        if not extra and not children:
            return f"{name}()"
        if len(extra) == 1 and not children:
            return f"{name}({extra[0]})"
        return f"{name}(\n  " + "\n  ".join(extra + children) + "\n)"


def _kind(value) -> str:
    """How errors name a value: 'Tensor', 'int', ..."""
    return f"'{type(value).__name__}'"
