"""The nn additions compiled: with the eager, aot_eager and inductor
backends, minitorch.compile gives eager's values, dtypes, shapes and gradients, in one graph
(explain) except where the function reads data (one_hot checks its indices), and the layers,
DataParallel and nn.init.orthogonal_ behave as PyTorch's."""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch import nn

F = nn.functional
pytestmark = pytest.mark.capture
BACKENDS = ["eager", "aot_eager", "inductor"]


def _x(*shape):
    return minitorch.randn(*shape, requires_grad=True)


CASES = {  # name -> (function, a maker of its arguments)
    "conv_transpose2d": (
        lambda x, w, b: F.conv_transpose2d(
            x, w, b, stride=2, padding=1, output_padding=1, groups=2, dilation=(1, 2)
        ),
        lambda: (_x(2, 4, 3, 4), _x(4, 3, 3, 2), _x(6)),
    ),
    "pad_constant": (lambda x: F.pad(x, (1, 2, -1, 3, 0, 1), value=2.0), lambda: (_x(2, 3, 4),)),
    "pad_reflect": (lambda x: F.pad(x, (1, 2, 3, 0), mode="reflect"), lambda: (_x(2, 3, 4, 5),)),
    "pad_replicate": (
        lambda x: F.pad(x, (2, 1, 0, 3, 1, 1), mode="replicate"),
        lambda: (_x(1, 2, 3, 4, 2),),
    ),
    "pad_circular": (lambda x: F.pad(x, (1, 2), mode="circular"), lambda: (_x(2, 3, 4),)),
    "pixel_shuffle": (
        lambda x: F.pixel_unshuffle(F.pixel_shuffle(x, 2) * 2, 2),
        lambda: (_x(2, 8, 3, 2),),
    ),
    "nearest": (lambda x: F.interpolate(x, scale_factor=(1.7, 0.6)), lambda: (_x(1, 2, 5, 6),)),
    "bilinear": (
        lambda x: F.interpolate(x, size=(7, 4), mode="bilinear"),
        lambda: (_x(2, 2, 5, 6),),
    ),
    "bilinear_aligned": (
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
        lambda: (_x(1, 2, 3, 4),),
    ),
    "trilinear": (
        lambda x: F.interpolate(x, size=(3, 5, 2), mode="trilinear"),
        lambda: (_x(1, 2, 2, 3, 4),),
    ),
    "area": (lambda x: F.interpolate(x, size=(2, 3), mode="area"), lambda: (_x(2, 2, 5, 6),)),
    "instance_norm": (
        lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
        lambda: (_x(2, 3, 4, 5), _x(3), _x(3)),
    ),
    "elu": (lambda x: F.elu(x, 0.5), lambda: (_x(3, 4),)),
    "silu": (lambda x: F.silu(x), lambda: (_x(3, 4),)),
    "attention_causal": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        lambda: (_x(2, 2, 4, 3), _x(2, 2, 4, 3), _x(2, 2, 4, 5)),
    ),
    "attention_masks": (
        lambda q, k, v, m, f: (
            F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=0.5)
            + F.scaled_dot_product_attention(q, k, v, attn_mask=f)
        ),
        lambda: (
            _x(2, 3, 4),
            _x(2, 5, 4),
            _x(2, 5, 2),
            minitorch.tensor(
                [[True, False, True, True, False], [False] * 5, [False, True, False, False, False]]
            ),  # row 1: no key
            minitorch.randn(3, 5),
        ),
    ),
}


def _grads(out, inputs):
    leaves = [x for x in inputs if x.requires_grad]
    weights = minitorch.tensor(
        np.random.default_rng(0).uniform(-1, 1, tuple(out.shape)), dtype=out.dtype
    )
    return minitorch.autograd.grad(out, leaves, grad_outputs=weights)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(CASES))
def test_compiled_equals_eager_in_one_graph(name, backend):
    fn, make = CASES[name]
    minitorch.manual_seed(0)
    inputs = make()
    explained = minitorch._dynamo.explain(fn)(*inputs)
    assert explained.graph_count == 1 and explained.graph_break_count == 0, explained.break_reasons
    eager = fn(*inputs)
    compiled = minitorch.compile(fn, backend=backend)(*inputs)
    assert compiled.shape == eager.shape and compiled.dtype is eager.dtype
    np.testing.assert_allclose(
        compiled.detach().numpy(), eager.detach().numpy(), rtol=1e-5, atol=1e-6
    )
    for got, want in zip(_grads(compiled, inputs), _grads(eager, inputs)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_hot_compiles_with_its_check_run_eagerly(backend):
    labels = minitorch.tensor([[0, 3], [2, 1]])

    def f(labels):
        return F.one_hot(labels, 5) * 2

    got = minitorch.compile(f, backend=backend)(labels)
    assert got.dtype is minitorch.int64
    np.testing.assert_array_equal(got.numpy(), f(labels).numpy())
    with pytest.raises(minitorch.ShapeError, match="smaller than num_classes"):
        minitorch.compile(f, backend=backend)(minitorch.tensor([7]))
    assert minitorch._dynamo.explain(lambda x: F.one_hot(x))(labels).break_reasons


class Generator(nn.Module):
    """A small image-to-image net of the new layers (DCGAN / style-transfer shaped)."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.ReflectionPad2d(1),
            nn.Conv2d(3, 8, 3),
            nn.InstanceNorm2d(8, affine=True),
            nn.ELU(),
            nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1),
            nn.SiLU(),
            nn.ReplicationPad2d((0, 1, 1, 0)),
            nn.ZeroPad2d((1, 0, 0, 1)),
            nn.PixelUnshuffle(2),
            nn.Upsample(scale_factor=2, mode="bilinear"),
            nn.PixelShuffle(2),
            nn.ConstantPad2d(1, 0.5),
        )

    def forward(self, x):
        return self.body(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_model_of_the_new_layers_compiles_and_trains_as_eager(backend):
    minitorch.manual_seed(0)
    net = nn.DataParallel(Generator())
    x = minitorch.randn(2, 3, 6, 6)

    def step(x):
        return (net(x) ** 2).mean()

    explained = minitorch._dynamo.explain(step)(x)
    assert explained.graph_break_count == 0, explained.break_reasons
    eager = step(x)
    net.zero_grad()
    eager.backward()
    eager_grads = [p.grad.numpy().copy() for p in net.parameters()]
    net.zero_grad()
    compiled = minitorch.compile(step, backend=backend)(x)
    compiled.backward()
    np.testing.assert_allclose(compiled.item(), eager.item(), rtol=1e-5)
    for p, want in zip(net.parameters(), eager_grads):
        np.testing.assert_allclose(p.grad.numpy(), want, rtol=1e-4, atol=1e-6)


def test_data_parallel_is_a_pass_through_with_pytorchs_state_dict_keys():
    minitorch.manual_seed(0)
    inner = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    wrapped = nn.parallel.DataParallel(inner)
    assert nn.DataParallel is nn.parallel.DataParallel and wrapped.module is inner
    assert list(wrapped.state_dict()) == [
        "module.0.weight",
        "module.0.bias",
        "module.1.weight",
        "module.1.bias",
        "module.1.running_mean",
        "module.1.running_var",
        "module.1.num_batches_tracked",
    ]
    x = minitorch.randn(4, 2)
    np.testing.assert_array_equal(wrapped(x).detach().numpy(), inner(x).detach().numpy())
    fresh = nn.DataParallel(nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)))
    fresh.load_state_dict(wrapped.state_dict())
    np.testing.assert_array_equal(
        fresh.module[0].weight.detach().numpy(), inner[0].weight.detach().numpy()
    )
    assert [id(p) for p in wrapped.parameters()] == [id(p) for p in inner.parameters()]
    with pytest.raises(minitorch.MinitorchError, match="one device"):
        nn.DataParallel(inner, device_ids=[0, 1])


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3), (6, 2, 2)])
def test_orthogonal_init(shape):
    minitorch.manual_seed(0)
    w = minitorch.empty(*shape)
    assert nn.init.orthogonal_(w, gain=1.5) is w
    rows = shape[0]
    flat = w.numpy().reshape(rows, -1) / 1.5
    small = min(flat.shape)
    gram = flat @ flat.T if rows <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)
    minitorch.manual_seed(0)
    again = nn.init.orthogonal_(minitorch.empty(*shape), gain=1.5)
    np.testing.assert_array_equal(again.numpy(), w.numpy())  # from the seeded generator
    with pytest.raises(minitorch.ShapeError, match="2 or more dimensions"):
        nn.init.orthogonal_(minitorch.empty(3))
