"""Containers: `Sequential` (a pipeline of layers), `ModuleList` (a list of layers) and
`ModuleDict` (layers by name).

Sequential and ModuleList register their members as submodules named '0', '1', ..., so
parameters get names like '0.weight'; a ModuleDict's keys are its submodules' names
('encoder.weight'), as in PyTorch.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping

from minitorch.nn.module import Module
from minitorch.tensor import Tensor


def _index(container: Module, idx: int) -> int:
    """idx as a position in 0..len-1; negative counts from the end (an IndexError otherwise,
    the sequence protocol's error)."""
    size = len(container._modules)
    if not -size <= idx < size:
        raise IndexError(
            f"index {idx} is out of range for {type(container).__name__} of length {size}"
        )
    return idx % size


class Sequential(Module):
    """Runs its layers in order, each on the previous one's output.

    >>> net = Sequential(Linear(2, 8), ReLU(), Linear(8, 1))
    >>> net[0], len(net), net[-1], net[1:]
    """

    def __init__(self, *args) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input: Tensor) -> Tensor:
        for module in self:
            input = module(input)
        return input

    def __getitem__(self, idx: int | slice):
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(self, idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(self, idx)]
        setattr(self, key, module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [keys[_index(self, idx)]]:
            del self._modules[key]
        # Renumber, so the names stay '0', '1', ... as PyTorch does.
        items = list(self._modules.items())
        self._modules.clear()
        for i, (name, module) in enumerate(items):
            self._modules[str(i) if name.isdigit() else name] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        modules = list(self._modules.values())
        position = index % (len(modules) + 1) if index < 0 else min(index, len(modules))
        modules.insert(position, module)
        self._modules.clear()
        for i, m in enumerate(modules):
            self.add_module(str(i), m)
        return self


class ModuleList(Module):
    """A list of submodules: indexable and iterable, with no forward of its own.

    >>> layers = ModuleList([Linear(4, 4) for _ in range(3)])
    >>> for layer in layers: x = layer(x)
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice):
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(self, idx))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_index(self, idx)), module)

    def __delitem__(self, idx: int | slice) -> None:
        modules = list(self._modules.values())
        del modules[idx if isinstance(idx, slice) else _index(self, idx)]
        self._renumber(modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return type(self)([*self, *other])

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        modules = list(self._modules.values())
        modules.insert(index, module)
        self._renumber(modules)

    def _renumber(self, modules: list[Module]) -> None:
        self._modules.clear()
        for i, module in enumerate(modules):
            self.add_module(str(i), module)


class ModuleDict(Module):
    """An ordered dict of submodules, keyed by name, with no forward of its own.

    >>> heads = ModuleDict({"cls": Linear(8, 3), "box": Linear(8, 4)})
    >>> heads["cls"](x); "box" in heads; list(heads.keys())
    ['cls', 'box']
    """

    def __init__(self, modules: Mapping[str, Module] | Iterable | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def update(self, modules: Mapping[str, Module] | Iterable) -> None:
        """Add (or replace) entries from a mapping, in its order, or from (key, module) pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleDict.update should be called with an iterable of key/value "
                f"pairs, but got {type(modules).__name__}"
            )
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, pair in enumerate(modules):
            if not isinstance(pair, Iterable):
                raise TypeError(
                    f"ModuleDict update sequence element #{j} should be Iterable; "
                    f"is {type(pair).__name__}"
                )
            pair = tuple(pair)
            if len(pair) != 2:
                raise ValueError(
                    f"ModuleDict update sequence element #{j} has length {len(pair)}; 2 is required"
                )
            self[pair[0]] = pair[1]
