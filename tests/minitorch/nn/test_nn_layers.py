"""The layers against hand-written numpy references (forward, and backward where it matters)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_testing import check_gradients, t

import minitorch
from minitorch import DTypeError, MinitorchError, ShapeError, nn

RNG = np.random.default_rng(0)


def rand(*shape) -> np.ndarray:
    return RNG.uniform(-2, 2, size=shape)


# ---- Linear ----------------------------------------------------------------------------------


def test_linear_is_x_times_w_transpose_plus_b():
    layer = nn.Linear(4, 3).double()
    x = rand(5, 4)
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    np.testing.assert_allclose(layer(t(x)).detach().numpy(), x @ w.T + b, rtol=1e-12)
    x3 = rand(2, 5, 4)  # any number of leading dims
    np.testing.assert_allclose(layer(t(x3)).detach().numpy(), x3 @ w.T + b, rtol=1e-12)


def test_linear_gradients():
    layer = nn.Linear(3, 2, bias=False).double()
    x = rand(4, 3)
    layer(t(x)).sum().backward()
    np.testing.assert_allclose(layer.weight.grad.numpy(), np.ones((4, 2)).T @ x)
    check_gradients(
        lambda x, w, b: nn.functional.linear(x, w, b),
        lambda x, w, b: x @ w.T + b,
        [rand(4, 3), rand(2, 3), rand(2)],
    )


def test_linear_starts_uniform_within_one_over_sqrt_fan_in():
    minitorch.manual_seed(0)
    layer = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = layer.weight.detach().numpy(), layer.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.99 * bound  # spread over the whole interval
    np.testing.assert_allclose(w.std(), bound / math.sqrt(3), rtol=0.02)  # U(-a, a): a/sqrt 3
    assert layer.weight.dtype is minitorch.float32 and layer.weight.requires_grad


def test_linear_without_bias_and_in_another_dtype():
    layer = nn.Linear(2, 3, bias=False, dtype=minitorch.float64)
    assert layer.bias is None and [n for n, _ in layer.named_parameters()] == ["weight"]
    assert layer.weight.dtype is minitorch.float64


def test_linear_shape_mismatch_names_both_shapes():
    with pytest.raises(ShapeError, match=r"\(2, 5\).*\(4, 3\)|\(4, 3\).*\(2, 5\)|5 != 4"):
        nn.Linear(4, 3)(minitorch.randn(2, 5))


# ---- Conv2d ----------------------------------------------------------------------------------


def _np_conv(x, w, b, stride, padding, dilation, groups):
    """The definition: out[n, o, r, q] = sum_{c, i, j} x_pad[...] * w[o, c, i, j] + b[o]."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c, h, wd = xp.shape
    o, cg, kh, kw = w.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (wd - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow))
    per_group = o // groups
    for f in range(o):
        g = f // per_group
        for r in range(oh):
            for q in range(ow):
                for i in range(kh):
                    for j in range(kw):
                        pixel = xp[:, g * cg : (g + 1) * cg, r * sh + i * dh, q * sw + j * dw]
                        out[:, f, r, q] += pixel @ w[f, :, i, j]
        out[:, f] += 0 if b is None else b[f]
    return out


@pytest.mark.parametrize(
    "stride, padding, dilation, groups",
    [
        (1, 0, 1, 1),
        (2, 1, 1, 1),
        ((1, 2), (2, 0), 2, 1),
        (1, 1, 1, 2),
    ],
)
def test_conv2d_matches_the_definition(stride, padding, dilation, groups):
    conv = nn.Conv2d(4, 6, 3, stride, padding, dilation, groups).double()
    x = rand(2, 4, 7, 8)
    w, b = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    pair = lambda v: (v, v) if isinstance(v, int) else v  # noqa: E731
    expected = _np_conv(x, w, b, pair(stride), pair(padding), pair(dilation), groups)
    np.testing.assert_allclose(conv(t(x)).detach().numpy(), expected, rtol=1e-10, atol=1e-12)


def test_conv2d_default_init_and_gradient_shapes():
    minitorch.manual_seed(1)
    conv = nn.Conv2d(8, 16, 5)
    bound = 1 / math.sqrt(8 * 5 * 5)
    assert np.abs(conv.weight.detach().numpy()).max() <= bound
    assert np.abs(conv.bias.detach().numpy()).max() <= bound
    out = conv(minitorch.randn(2, 8, 9, 9))
    assert out.shape == minitorch.Size([2, 16, 5, 5])
    out.sum().backward()
    assert conv.weight.grad.shape == conv.weight.shape and conv.bias.grad.shape == (16,)
    np.testing.assert_allclose(conv.bias.grad.numpy(), np.full(16, 2 * 5 * 5))


def test_conv2d_same_padding_keeps_the_size_and_valid_shrinks_it():
    x = minitorch.randn(1, 2, 6, 5)
    assert nn.Conv2d(2, 3, (2, 3), padding="same")(x).shape == (1, 3, 6, 5)
    assert nn.Conv2d(2, 3, 3, padding="valid")(x).shape == (1, 3, 4, 3)
    with pytest.raises(MinitorchError, match="strided"):
        nn.Conv2d(2, 3, 3, stride=2, padding="same")


def test_conv2d_errors_name_the_shapes_and_dtypes():
    conv = nn.Conv2d(3, 4, 3)
    with pytest.raises(ShapeError, match=r"\(1, 2, 5, 5\).*\(4, 3, 3, 3\)"):
        conv(minitorch.randn(1, 2, 5, 5))
    with pytest.raises(ShapeError, match="3-d .* or 4-d"):
        conv(minitorch.randn(5, 5))
    with pytest.raises(ShapeError, match="does not fit"):
        conv(minitorch.randn(1, 3, 2, 2))
    with pytest.raises(DTypeError, match="float64"):
        conv(minitorch.randn(1, 3, 5, 5, dtype=minitorch.float64))
    with pytest.raises(MinitorchError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)


# ---- pooling ---------------------------------------------------------------------------------


def test_max_pool_and_avg_pool_match_window_by_window_references():
    x = rand(2, 3, 6, 7)
    windows = np.stack(
        [x[:, :, r : r + 2, q : q + 2] for r in range(0, 5, 2) for q in range(0, 5, 2)], axis=-1
    )  # (N, C, 2, 2, 9)
    want_max = windows.max(axis=(2, 3)).reshape(2, 3, 3, 3)
    want_avg = windows.mean(axis=(2, 3)).reshape(2, 3, 3, 3)
    np.testing.assert_allclose(nn.MaxPool2d(2)(t(x)).numpy(), want_max)
    np.testing.assert_allclose(nn.AvgPool2d(2)(t(x)).numpy(), want_avg, rtol=1e-12)


def test_max_pool_gradient_goes_to_each_window_maximum_once_per_window():
    x = t([[[[1.0, 2.0, 0.0], [4.0, 3.0, 0.0], [0.0, 0.0, 5.0]]]], requires_grad=True)
    nn.MaxPool2d(2, stride=1)(x).sum().backward()
    # windows' maxima: 4 (top-left), 3 (top-right), 4 (bottom-left), 5 (bottom-right)
    assert x.grad.tolist() == [[[[0.0, 0.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]]


def test_max_pool_return_indices_points_into_the_flattened_plane():
    x = minitorch.randn(1, 2, 4, 4)
    values, indices = nn.MaxPool2d(2, return_indices=True)(x)
    flat = x.reshape(1, 2, 16)
    np.testing.assert_array_equal(
        values.numpy(),
        np.take_along_axis(flat.numpy(), indices.numpy().reshape(1, 2, 4), 2).reshape(1, 2, 2, 2),
    )
    assert indices.dtype is minitorch.int64


def test_pool_padding_larger_than_half_the_kernel_is_refused():
    with pytest.raises(ShapeError, match="half of kernel_size"):
        nn.MaxPool2d(2, padding=2)(minitorch.randn(1, 1, 4, 4))


# ---- BatchNorm -------------------------------------------------------------------------------


def test_batchnorm2d_training_normalises_per_channel_and_updates_running_stats():
    bn = nn.BatchNorm2d(3).double()
    x = rand(4, 3, 2, 5) * 3 + 1
    out = bn(t(x)).detach().numpy()
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    expected = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-12)
    n = 4 * 2 * 5
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.9 * 0 + 0.1 * mean)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 * 1 + 0.1 * var * n / (n - 1))
    assert bn.num_batches_tracked.item() == 1
    bn(t(x))
    assert bn.num_batches_tracked.item() == 2


def test_batchnorm_eval_uses_running_stats_and_affine_parameters():
    bn = nn.BatchNorm1d(3).double()
    bn.load_state_dict(
        {
            "weight": t([1.0, 2.0, 3.0]),
            "bias": t([0.0, 1.0, -1.0]),
            "running_mean": t([0.5, -0.5, 0.0]),
            "running_var": t([1.0, 4.0, 0.25]),
            "num_batches_tracked": minitorch.tensor(7),
        }
    )
    bn.eval()
    x = rand(5, 3)
    expected = (x - [0.5, -0.5, 0.0]) / np.sqrt(np.array([1.0, 4.0, 0.25]) + 1e-5) * [
        1.0,
        2.0,
        3.0,
    ] + [0.0, 1.0, -1.0]
    np.testing.assert_allclose(bn(t(x)).detach().numpy(), expected, rtol=1e-12)
    assert bn.num_batches_tracked.item() == 7  # eval changes nothing
    np.testing.assert_allclose(bn.running_mean.numpy(), [0.5, -0.5, 0.0])


def test_batchnorm1d_on_sequences_and_cumulative_average_without_momentum():
    bn = nn.BatchNorm1d(2, momentum=None, affine=False).double()
    batches = [rand(3, 2, 4), rand(3, 2, 4) + 5]
    for b in batches:
        bn(t(b))
    means = [b.mean(axis=(0, 2)) for b in batches]
    np.testing.assert_allclose(bn.running_mean.numpy(), (means[0] + means[1]) / 2)
    assert [n for n, _ in bn.named_parameters()] == []


def test_batchnorm_without_running_stats_always_uses_the_batch():
    bn = nn.BatchNorm1d(2, track_running_stats=False).double().eval()
    x = rand(6, 2)
    expected = (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5)
    np.testing.assert_allclose(bn(t(x)).detach().numpy(), expected, rtol=1e-10)
    assert list(bn.state_dict()) == ["weight", "bias"]


def test_batchnorm_errors():
    with pytest.raises(ShapeError, match="expected 4D input"):
        nn.BatchNorm2d(3)(minitorch.randn(2, 3))
    with pytest.raises(ShapeError, match="more than 1 value per channel"):
        nn.BatchNorm1d(3)(minitorch.randn(1, 3))


def test_batch_norm_gradients():
    F = nn.functional

    def reference(x, w, b):
        mean, var = x.mean(axis=(0, 2), keepdims=True), x.var(axis=(0, 2), keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * w[None, :, None] + b[None, :, None]

    check_gradients(
        lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
        reference,
        [rand(3, 2, 4), rand(2), rand(2)],
        rtol=1e-5,
        atol=1e-6,
    )


# ---- LayerNorm -------------------------------------------------------------------------------


def test_layernorm_normalises_the_last_dims_of_each_sample():
    ln = nn.LayerNorm((3, 4)).double()
    x = rand(2, 3, 4) * 2 + 3
    mean = x.mean(axis=(1, 2), keepdims=True)
    var = x.var(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(
        ln(t(x)).detach().numpy(), (x - mean) / np.sqrt(var + 1e-5), rtol=1e-10, atol=1e-12
    )
    assert ln.weight.shape == (3, 4) and ln.bias.shape == (3, 4)


def test_layer_norm_gradients_and_shape_error():
    def reference(x, w, b):
        mean, var = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * w + b

    check_gradients(
        lambda x, w, b: nn.functional.layer_norm(x, (4,), w, b),
        reference,
        [rand(3, 4), rand(4), rand(4)],
        rtol=1e-5,
        atol=1e-6,
    )
    with pytest.raises(ShapeError, match=r"normalized_shape=\[4\].*\[2, 3\]"):
        nn.LayerNorm(4)(minitorch.randn(2, 3))


# ---- Embedding -------------------------------------------------------------------------------


def test_embedding_looks_up_rows_and_padding_row_gets_no_gradient():
    minitorch.manual_seed(3)
    emb = nn.Embedding(5, 2, padding_idx=1)
    assert emb.weight.detach().numpy()[1].tolist() == [0.0, 0.0]
    idx = minitorch.tensor([[1, 2], [2, 4]])
    out = emb(idx)
    np.testing.assert_array_equal(out.detach().numpy(), emb.weight.detach().numpy()[idx.numpy()])
    out.sum().backward()
    assert emb.weight.grad.tolist() == [[0, 0], [0, 0], [2, 2], [0, 0], [1, 1]]


def test_embedding_init_is_standard_normal_and_from_pretrained_is_frozen():
    minitorch.manual_seed(0)
    w = nn.Embedding(1000, 20).weight.detach().numpy()
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02
    table = minitorch.tensor([[1.0, 2.0], [3.0, 4.0]])
    frozen = nn.Embedding.from_pretrained(table)
    assert not frozen.weight.requires_grad
    assert frozen(minitorch.tensor([1])).tolist() == [[3.0, 4.0]]


def test_embedding_errors():
    emb = nn.Embedding(3, 2)
    with pytest.raises(DTypeError, match="float32"):
        emb(minitorch.tensor([0.0, 1.0]))
    with pytest.raises(ShapeError, match="out of"):
        emb(minitorch.tensor([0, 3]))
    with pytest.raises(ShapeError, match="padding_idx"):
        nn.Embedding(3, 2, padding_idx=3)


# ---- activations, Flatten, Dropout -----------------------------------------------------------


def test_activations_match_numpy():
    x = rand(3, 4)
    erf = np.vectorize(math.erf)
    cases = [
        (nn.ReLU(), np.maximum(x, 0)),
        (nn.Sigmoid(), 1 / (1 + np.exp(-x))),
        (nn.Tanh(), np.tanh(x)),
        (nn.GELU(), 0.5 * x * (1 + erf(x / math.sqrt(2)))),
        (nn.GELU("tanh"), 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
        (nn.Softmax(dim=1), np.exp(x) / np.exp(x).sum(1, keepdims=True)),
        (nn.LogSoftmax(dim=0), x - np.log(np.exp(x).sum(0, keepdims=True))),
    ]
    for layer, expected in cases:
        np.testing.assert_allclose(
            layer(t(x)).numpy(), expected, rtol=1e-10, atol=1e-12, err_msg=repr(layer)
        )


def test_flatten_keeps_the_batch_dim():
    x = minitorch.randn(2, 3, 4, 5)
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)


def test_dropout_zeroes_about_p_and_scales_the_rest():
    minitorch.manual_seed(0)
    drop = nn.Dropout(p=0.3)
    out = drop(minitorch.ones(200, 100)).numpy()
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.01  # 20,000 draws: the std of the mean is ~0.003
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)
    drop.eval()
    x = minitorch.randn(3, 4)
    assert drop(x) is x


def test_dropout_gradient_uses_the_same_mask_and_seed_repeats_it():
    x = minitorch.ones(4, 5, dtype=minitorch.float64, requires_grad=True)
    minitorch.manual_seed(7)
    out = nn.functional.dropout(x, 0.5)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), out.detach().numpy())  # mask / (1 - p)
    minitorch.manual_seed(7)
    np.testing.assert_array_equal(
        nn.functional.dropout(x, 0.5).detach().numpy(), out.detach().numpy()
    )


def test_dropout_probability_out_of_range():
    with pytest.raises(MinitorchError, match="between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(MinitorchError, match="between 0 and 1"):
        nn.functional.dropout(minitorch.ones(2), -0.1)


# ---- containers ------------------------------------------------------------------------------


def test_sequential_runs_in_order_and_indexes_like_a_list():
    net = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    x = minitorch.randn(3, 2)
    assert net(x).tolist() == net[2](net[1](net[0](x))).tolist()
    assert len(net) == 3 and isinstance(net[-1], nn.Linear)
    assert [type(m).__name__ for m in net] == ["Linear", "ReLU", "Linear"]
    head = net[1:]
    assert isinstance(head, nn.Sequential) and [n for n, _ in head.named_children()] == ["1", "2"]
    net.append(nn.Sigmoid())
    assert len(net) == 4 and [n for n, _ in net.named_children()] == ["0", "1", "2", "3"]
    del net[1]
    assert [n for n, _ in net.named_children()] == ["0", "1", "2"]
    assert [type(m).__name__ for m in net] == ["Linear", "Linear", "Sigmoid"]
    with pytest.raises(IndexError, match="out of range"):
        net[3]


def test_sequential_from_an_ordered_dict_keeps_the_names():
    from collections import OrderedDict

    net = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert [n for n, _ in net.named_parameters()] == ["fc.weight", "fc.bias"]
    assert net.fc is net[0]


def test_module_list_registers_its_members():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    layers.append(nn.Linear(2, 1))
    layers.insert(0, nn.ReLU())
    assert [type(m).__name__ for m in layers] == ["ReLU", "Linear", "Linear", "Linear", "Linear"]
    assert [n for n, _ in layers.named_parameters()][-1] == "4.bias"
    layers += [nn.Tanh()]
    assert isinstance(layers[-1], nn.Tanh) and isinstance(layers[1:3], nn.ModuleList)
    del layers[0]
    assert isinstance(layers[0], nn.Linear) and len(layers) == 5


# ---- in place, unfold/fold -------------------------------------------------------------------


def test_inplace_relu_and_dropout_write_into_their_input_and_still_differentiate():
    x = minitorch.tensor([-1.0, 2.0, -3.0, 4.0], dtype=minitorch.float64, requires_grad=True)
    h = x * 1.0
    out = nn.ReLU(inplace=True)(h)
    assert out is h and h.tolist() == [0.0, 2.0, 0.0, 4.0]
    (out * out).sum().backward()
    assert x.grad.tolist() == [0.0, 4.0, 0.0, 8.0]
    minitorch.manual_seed(2)
    y = minitorch.ones(50, dtype=minitorch.float64, requires_grad=True)
    z = y * 1.0
    dropped = nn.functional.dropout(z, 0.5, inplace=True)
    assert dropped is z and set(z.tolist()) <= {0.0, 2.0}
    z.sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), z.detach().numpy())


def test_unfold_and_fold_are_adjoint():
    F = nn.functional
    x = rand(2, 3, 5, 4)
    cols = F.unfold(t(x), (2, 3), padding=1, stride=(2, 1))
    assert cols.shape == (2, 3 * 2 * 3, 3 * 4)
    g = rand(*cols.shape)
    back = F.fold(t(g), (5, 4), (2, 3), padding=1, stride=(2, 1))
    # <unfold(x), g> == <x, fold(g)>: fold is unfold's transpose
    np.testing.assert_allclose(np.sum(cols.numpy() * g), np.sum(x * back.numpy()), rtol=1e-12)
    assert F.unfold(t(x[0]), 2).shape == (12, 12)  # an unbatched (C, H, W) image
