"""ModuleDict: ordered, registered submodules (state_dict keys by name), the dict methods,
update from a mapping or pairs, and PyTorch's errors."""

from __future__ import annotations

from collections import OrderedDict

import pytest

import minitorch
from minitorch import nn


def _heads() -> nn.ModuleDict:
    return nn.ModuleDict({"cls": nn.Linear(4, 3), "act": nn.ReLU(), "box": nn.Linear(4, 2)})


def test_keeps_insertion_order_and_registers_submodules():
    heads = _heads()
    assert list(heads) == list(heads.keys()) == ["cls", "act", "box"]
    assert [type(m) for m in heads.values()] == [nn.Linear, nn.ReLU, nn.Linear]
    assert [k for k, _ in heads.items()] == ["cls", "act", "box"]
    assert list(heads.state_dict()) == ["cls.weight", "cls.bias", "box.weight", "box.bias"]
    assert len(list(heads.parameters())) == 4
    assert heads["cls"] is heads.cls and len(heads) == 3
    assert "box" in heads and "nope" not in heads


def test_nested_in_a_model_names_parameters_by_key():
    class Model(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.heads = _heads()

        def forward(self, x):
            return {name: head(x) for name, head in self.heads.items()}

    model = Model()
    assert [n for n, _ in model.named_parameters()][:2] == ["heads.cls.weight", "heads.cls.bias"]
    out = model(minitorch.randn(5, 4))
    assert out["cls"].shape == (5, 3) and out["box"].shape == (5, 2)


def test_set_delete_pop_clear_and_update():
    heads = _heads()
    heads["extra"] = nn.Linear(1, 1)
    assert list(heads)[-1] == "extra"
    del heads["act"]
    popped = heads.pop("cls")
    assert isinstance(popped, nn.Linear) and list(heads) == ["box", "extra"]
    heads.update([("a", nn.ReLU()), ["box", nn.Tanh()]])  # pairs; an old key keeps its place
    assert list(heads) == ["box", "extra", "a"] and isinstance(heads["box"], nn.Tanh)
    heads.update(OrderedDict(z=nn.ReLU(), y=nn.ReLU()))
    assert list(heads)[-2:] == ["z", "y"]
    heads.update(nn.ModuleDict({"w": nn.ReLU()}))
    assert list(heads)[-1] == "w"
    heads.clear()
    assert len(heads) == 0 and list(heads.state_dict()) == []


def test_errors_as_in_pytorch():
    heads = nn.ModuleDict()
    with pytest.raises(TypeError, match="iterable of key/value pairs, but got int"):
        heads.update(3)
    with pytest.raises(TypeError, match="element #0 should be Iterable; is int"):
        heads.update([3])
    with pytest.raises(ValueError, match="element #0 has length 3; 2 is required"):
        heads.update([("a", nn.ReLU(), 1)])
    with pytest.raises(KeyError):
        heads["missing"]
    with pytest.raises(minitorch.MinitorchError, match="is not a Module subclass"):
        heads["x"] = 3
    assert repr(nn.ModuleDict({"a": nn.ReLU()})) == "ModuleDict(\n  (a): ReLU()\n)"
