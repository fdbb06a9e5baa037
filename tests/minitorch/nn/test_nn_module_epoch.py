"""The module epoch ([Note: the module epoch] in minitorch/nn/epoch.py): every change of any
module's state moves it on; a tensor's values and metadata do not."""

from __future__ import annotations

import copy
import pickle

import pytest

import minitorch
from minitorch import nn
from minitorch.nn import epoch
from minitorch.nn.epoch import Table


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.layers = nn.ModuleList([nn.ReLU(), nn.Tanh()])
        self.seq = nn.Sequential(nn.ReLU(), nn.Tanh())
        self.heads = nn.ModuleDict({"a": nn.ReLU()})
        self.register_buffer("steps", minitorch.zeros(1))
        self.scale = 2.0


def _delete_first(container):
    del container[0]


MOVES = {
    "plain attribute set": lambda m: setattr(m.fc, "note", 1),
    "plain attribute reset": lambda m: setattr(m, "scale", 2.0),  # even to the same value
    "plain attribute deleted": lambda m: delattr(m, "scale"),
    "class swapped": lambda m: setattr(m.layers[0], "__class__", nn.Sigmoid),
    "instance forward": lambda m: setattr(m.fc, "forward", lambda x: x),
    "parameter replaced": lambda m: setattr(m.fc, "weight", nn.Parameter(minitorch.ones(3, 3))),
    "parameter set to None": lambda m: setattr(m.fc, "bias", None),
    "parameter registered": lambda m: m.register_parameter("p", None),
    "parameter deleted": lambda m: delattr(m.fc, "bias"),
    "buffer replaced": lambda m: setattr(m, "steps", minitorch.ones(1)),
    "buffer registered": lambda m: m.register_buffer("b", minitorch.ones(1)),
    "submodule replaced": lambda m: setattr(m, "fc", nn.Linear(3, 3)),
    "submodule added": lambda m: m.add_module("extra", nn.ReLU()),
    "submodule deleted": lambda m: delattr(m, "fc"),
    "table written": lambda m: m._modules.__setitem__("fc", nn.ReLU()),
    "table popped": lambda m: m._parameters.pop("missing", None),
    "table cleared": lambda m: m.fc._parameters.clear(),
    "table updated": lambda m: m.fc._buffers.update(x=None),
    "table setdefault": lambda m: m.fc._buffers.setdefault("y", None),
    "module list appended": lambda m: m.layers.append(nn.ReLU()),
    "module list item deleted": lambda m: _delete_first(m.layers),
    "module list item set": lambda m: m.layers.__setitem__(0, nn.ReLU()),
    "module list inserted": lambda m: m.layers.insert(0, nn.ReLU()),
    "sequential item deleted": lambda m: _delete_first(m.seq),
    "module dict item set": lambda m: m.heads.__setitem__("b", nn.ReLU()),
    "module dict item popped": lambda m: m.heads.pop("a"),
    "module dict cleared": lambda m: m.heads.clear(),
    "train": lambda m: m.train(),
    "eval deep": lambda m: m.layers[1].eval(),
    "forward hook added": lambda m: m.fc.register_forward_hook(lambda *a: None),
    "forward pre hook added": lambda m: m.seq[0].register_forward_pre_hook(lambda *a: None),
    "apply": lambda m: m.apply(lambda mod: setattr(mod, "tag", 1)),
}


@pytest.mark.parametrize("name", sorted(MOVES))
def test_a_change_of_a_module_moves_the_epoch(name):
    m = Net()
    before = epoch.current
    MOVES[name](m)
    assert epoch.current > before


def test_removing_a_hook_moves_the_epoch():
    m = Net()
    handle = m.fc.register_forward_hook(lambda *a: None)
    before = epoch.current
    handle.remove()
    assert epoch.current > before


def test_a_failed_assignment_still_moves_the_epoch():
    """_forget may run before the check that fails: the epoch moves whatever happened."""
    m = Net()
    before = epoch.current
    with pytest.raises(minitorch.MinitorchError):
        m.fc.weight = minitorch.ones(3, 3)  # a plain tensor where a Parameter is
    assert epoch.current > before


STAYS = {
    "values in place": lambda m: m.fc.weight.data.mul_(2),
    "optimizer step": lambda m: minitorch.optim.SGD(m.parameters(), lr=0.1).step(),
    "requires_grad_": lambda m: m.fc.weight.requires_grad_(False),
    "requires_grad set": lambda m: setattr(m.fc.weight, "requires_grad", False),
    "data replaced": lambda m: setattr(m.fc.weight, "data", minitorch.ones(4, 3)),
    "to float64": lambda m: m.to(minitorch.float64),
    "zero_grad": lambda m: m.zero_grad(),
    "load_state_dict": lambda m: m.load_state_dict(m.state_dict()),
    "reads": lambda m: (m.fc, m.layers[0], list(m.parameters()), m.state_dict(), repr(m)),
    "eager forward": lambda m: m.fc(minitorch.ones(2, 3)),
}


@pytest.mark.parametrize("name", sorted(STAYS))
def test_a_tensor_change_or_a_read_leaves_the_epoch(name):
    m = Net()
    for p in m.parameters():
        p.grad = minitorch.ones(p.shape)
    before = epoch.current
    STAYS[name](m)
    assert epoch.current == before


def test_every_table_of_a_module_is_a_table():
    m = Net()
    for table in ("_parameters", "_buffers", "_modules", "_forward_pre_hooks", "_forward_hooks"):
        assert type(m.__dict__[table]) is Table


def test_copies_and_pickles_keep_tables():
    m = Net()
    for other in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(other._modules) is Table and type(other.fc._parameters) is Table
        assert list(other.state_dict()) == list(m.state_dict())
