"""nn.Module: registration, traversal with PyTorch's dotted names, state dicts, modes, to()."""

from __future__ import annotations

import copy

import numpy as np
import pytest

import minitorch
from minitorch import MinitorchError, ShapeError, nn


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.register_buffer("steps", minitorch.zeros(1))
        self.register_buffer("scratch", minitorch.zeros(2), persistent=False)

    def forward(self, x):
        return self.bn(self.fc(x))


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(minitorch.ones(1))
        self.block = Block()
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(4, 2))

    def forward(self, x):
        return self.head(self.block(x)) * self.scale


# ---- registration and traversal ------------------------------------------------------------


def test_named_parameters_use_dotted_names_in_registration_order():
    names = [name for name, _ in Net().named_parameters()]
    assert names == [
        "scale",
        "block.fc.weight",
        "block.fc.bias",
        "block.bn.weight",
        "block.bn.bias",
        "head.1.weight",
        "head.1.bias",
    ]


def test_named_buffers_and_modules():
    net = Net()
    assert [n for n, _ in net.named_buffers()] == [
        "block.steps",
        "block.scratch",
        "block.bn.running_mean",
        "block.bn.running_var",
        "block.bn.num_batches_tracked",
    ]
    assert [n for n, _ in net.named_modules()] == [
        "",
        "block",
        "block.fc",
        "block.bn",
        "head",
        "head.0",
        "head.1",
    ]
    assert [type(m).__name__ for m in net.children()] == ["Block", "Sequential"]
    assert len(list(net.parameters())) == 7
    assert len(list(net.parameters(recurse=False))) == 1
    assert net.get_submodule("head.1") is net.head[1]


def test_a_shared_parameter_or_module_is_listed_once():
    net = nn.Module()
    layer = nn.Linear(2, 2)
    net.a, net.b = layer, layer
    assert [n for n, _ in net.named_parameters()] == ["a.weight", "a.bias"]
    assert [n for n, _ in net.named_modules()] == ["", "a"]
    assert list(net.state_dict()) == ["a.weight", "a.bias", "b.weight", "b.bias"]


def test_assignment_registers_and_reassignment_moves_between_tables():
    m = nn.Module()
    m.w = nn.Parameter(minitorch.zeros(2))
    assert "w" in m._parameters
    with pytest.raises(MinitorchError, match="cannot assign 'Linear' as parameter 'w'"):
        m.w = nn.Linear(1, 1)  # as in PyTorch: a parameter's name takes Parameters or None
    del m.w
    m.w = nn.Linear(1, 1)
    assert "w" not in m._parameters and "w" in m._modules
    m.w = None  # a registered submodule can be set to None and stays registered
    assert "w" in m._modules and m.w is None
    m.register_buffer("b", minitorch.zeros(1))
    m.b = minitorch.ones(1)  # a tensor assigned to a buffer's name updates the buffer
    assert m._buffers["b"].tolist() == [1.0]


def test_wrong_kinds_of_assignment_are_clear_errors():
    m = nn.Linear(2, 2)
    with pytest.raises(MinitorchError, match="cannot assign 'Tensor' as parameter 'weight'"):
        m.weight = minitorch.zeros(2, 2)
    with pytest.raises(MinitorchError, match="already exists"):
        m.register_buffer("weight", minitorch.zeros(1))
    with pytest.raises(MinitorchError, match="can't be empty or contain"):
        m.register_parameter("a.b", None)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        _ = m.nope
    with pytest.raises(AttributeError, match="before Module.__init__"):

        class Forgot(nn.Module):
            def __init__(self) -> None:
                self.x = 1

        Forgot()


def test_a_module_without_forward_says_so():
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(1)


def test_apply_visits_children_first_then_self():
    seen = []
    Net().apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Linear", "BatchNorm1d", "Block", "ReLU", "Linear", "Sequential", "Net"]


# ---- state dicts -----------------------------------------------------------------------------


def test_state_dict_holds_parameters_and_persistent_buffers_detached():
    net = Net()
    sd = net.state_dict()
    assert list(sd) == [
        "scale",
        "block.steps",
        "block.fc.weight",
        "block.fc.bias",
        "block.bn.weight",
        "block.bn.bias",
        "block.bn.running_mean",
        "block.bn.running_var",
        "block.bn.num_batches_tracked",
        "head.1.weight",
        "head.1.bias",
    ]
    assert "block.scratch" not in sd  # persistent=False
    assert all(not v.requires_grad for v in sd.values())
    # The values share memory with the module's tensors, as PyTorch's do.
    assert np.shares_memory(sd["block.fc.weight"].numpy(), net.block.fc.weight.detach().numpy())
    assert sd["block.bn.num_batches_tracked"].dtype is minitorch.int64


def test_load_state_dict_copies_values_in_place():
    src, dst = Net(), Net()
    weight = dst.block.fc.weight
    result = dst.load_state_dict(src.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert dst.block.fc.weight is weight  # same Parameter object (optimizers keep working)
    for (name, a), b in zip(src.state_dict().items(), dst.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)


def test_load_state_dict_strict_lists_missing_and_unexpected_keys():
    net = nn.Linear(2, 3)
    sd = net.state_dict()
    del sd["bias"]
    sd["extra"] = minitorch.zeros(1)
    before = net.weight.detach().numpy().copy()
    with pytest.raises(MinitorchError) as info:
        net.load_state_dict({k: v * 0 for k, v in sd.items()})
    message = str(info.value)
    assert "Error(s) in loading state_dict for Linear" in message
    assert 'Missing key(s) in state_dict: "bias"' in message
    assert 'Unexpected key(s) in state_dict: "extra"' in message
    np.testing.assert_array_equal(net.weight.detach().numpy(), before)  # nothing was copied


def test_load_state_dict_not_strict_returns_the_keys():
    net = nn.Linear(2, 3)
    sd = {"weight": minitorch.ones(3, 2), "extra": minitorch.zeros(1)}
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert repr(result) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['extra'])"
    assert net.weight.tolist() == [[1.0, 1.0]] * 3


def test_load_state_dict_shape_mismatch_names_both_shapes_and_changes_nothing():
    net = nn.Linear(2, 3)
    sd = net.state_dict()
    sd = {"weight": minitorch.zeros(4, 2), "bias": minitorch.zeros(3)}
    before = net.bias.detach().numpy().copy()
    with pytest.raises(
        ShapeError,
        match=r"size mismatch for weight: copying a param with shape "
        r"minitorch.Size\(\[4, 2\]\) from checkpoint, the shape in current model "
        r"is minitorch.Size\(\[3, 2\]\)",
    ):
        net.load_state_dict(sd, strict=False)
    np.testing.assert_array_equal(net.bias.detach().numpy(), before)


# ---- modes, conversions, grads ---------------------------------------------------------------


def test_train_and_eval_reach_every_submodule():
    net = Net()
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    with pytest.raises(MinitorchError, match="boolean"):
        net.train("yes")


def test_to_dtype_converts_floating_tensors_in_place():
    net = Net()
    weight = net.block.fc.weight
    net(minitorch.randn(5, 3)).sum().backward()
    assert net.to(minitorch.float64) is net
    assert net.block.fc.weight is weight and weight.dtype is minitorch.float64
    assert weight.grad.dtype is minitorch.float64
    assert net.block.bn.running_mean.dtype is minitorch.float64
    assert net.block.bn.num_batches_tracked.dtype is minitorch.int64  # not a float: unchanged
    assert net(minitorch.randn(5, 3, dtype=minitorch.float64)).dtype is minitorch.float64
    net.float()
    assert weight.dtype is minitorch.float32 and weight.requires_grad and weight.is_leaf
    with pytest.raises(MinitorchError, match="floating point"):
        net.to(minitorch.int64)


def test_to_an_unavailable_device_is_a_clear_error():
    if minitorch.device("cuda") and _cuda():
        pytest.skip("a GPU is present")
    with pytest.raises(minitorch.DeviceError, match="cuda"):
        nn.Linear(2, 2).to("cuda")


def _cuda() -> bool:
    from minitorch.device import cuda_is_available

    return cuda_is_available()


def test_zero_grad_sets_grads_to_none_or_zero():
    net = nn.Linear(2, 2)
    net(minitorch.ones(1, 2)).sum().backward()
    net.zero_grad(set_to_none=False)
    assert net.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    net.zero_grad()
    assert net.weight.grad is None and net.bias.grad is None


def test_requires_grad_freezes_parameters():
    net = nn.Linear(2, 2).requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_deepcopy_gives_independent_parameters():
    net = nn.Linear(2, 2)
    twin = copy.deepcopy(net)
    twin.load_state_dict({"weight": minitorch.zeros(2, 2), "bias": minitorch.zeros(2)})
    assert net.weight.abs().sum().item() > 0
    assert isinstance(twin.weight, nn.Parameter)


# ---- printing --------------------------------------------------------------------------------


def test_repr_matches_pytorch_layout():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 1, bias=False)))
    assert repr(net) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): ReLU()\n"
        "  (2): Sequential(\n"
        "    (0): Linear(in_features=3, out_features=1, bias=False)\n"
        "  )\n"
        ")"
    )
    assert (
        repr(nn.Conv2d(3, 16, 3, padding=1))
        == "Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    )
    assert (
        repr(nn.Conv2d(3, 4, (2, 3), stride=2, dilation=2, groups=1, bias=False))
        == "Conv2d(3, 4, kernel_size=(2, 3), stride=(2, 2), dilation=(2, 2), bias=False)"
    )
    assert (
        repr(nn.BatchNorm2d(4))
        == "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)"
    )
    assert repr(nn.LayerNorm(4)) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"
    assert repr(nn.Embedding(10, 3, padding_idx=0)) == "Embedding(10, 3, padding_idx=0)"
    assert (
        repr(nn.MaxPool2d(2))
        == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    )
    assert repr(nn.AvgPool2d(2)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"
    assert repr(nn.Dropout()) == "Dropout(p=0.5, inplace=False)"
    assert repr(nn.Flatten()) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(nn.GELU()) == "GELU(approximate='none')"
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    assert (
        repr(nn.Parameter(minitorch.zeros(2)))
        == "Parameter containing:\ntensor([0., 0.], requires_grad=True)"
    )
