"""The nn.functional additions against references: numpy written
element by element, PyTorch's documented examples, adjointness, and finite differences.

conv_transpose2d, pad, pixel_shuffle/unshuffle, interpolate, instance_norm, elu, silu,
one_hot, scaled_dot_product_attention; their compiled forms are in
test_api_nn_extras_compiled.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from nn_testing import check_gradients, t

import minitorch
from minitorch import nn
from minitorch.ops.nn_meta import pair

F = nn.functional
RNG = np.random.default_rng(0)

# ---- conv_transpose2d --------------------------------------------------------------------


def np_conv_transpose2d(x, w, bias, stride, padding, output_padding, groups, dilation):
    """Every input pixel adds its value times the filter onto its output window."""
    n, c_in, h, wd = x.shape
    c_out_g, kh, kw = w.shape[1:]
    (sh, sw), (ph, pw), (oph, opw), (dh, dw) = stride, padding, output_padding, dilation
    out_h = (h - 1) * sh - 2 * ph + dh * (kh - 1) + oph + 1
    out_w = (wd - 1) * sw - 2 * pw + dw * (kw - 1) + opw + 1
    out = np.zeros((n, c_out_g * groups, out_h, out_w))
    per_group = c_in // groups
    for b, c, i, j, o, ki, kj in np.ndindex(n, c_in, h, wd, c_out_g, kh, kw):
        r, q = i * sh + ki * dh - ph, j * sw + kj * dw - pw
        if 0 <= r < out_h and 0 <= q < out_w:
            out[b, (c // per_group) * c_out_g + o, r, q] += x[b, c, i, j] * w[c, o, ki, kj]
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1)
    return out


CONV_T = [  # stride, padding, output_padding, groups, dilation
    ((1, 1), (0, 0), (0, 0), 1, (1, 1)),
    ((2, 2), (1, 1), (1, 1), 1, (1, 1)),
    ((2, 3), (0, 2), (1, 0), 2, (1, 1)),
    ((1, 2), (2, 1), (0, 1), 1, (2, 2)),  # output_padding < dilation, not < stride (dim 0)
    ((3, 1), (0, 0), (2, 0), 2, (1, 3)),  # output_padding > padding: zeros at the end
]


@pytest.mark.parametrize("stride,padding,output_padding,groups,dilation", CONV_T)
def test_conv_transpose2d_matches_scatter_reference_and_finite_differences(
    stride, padding, output_padding, groups, dilation
):
    x = RNG.standard_normal((2, 4, 3, 4))
    w = RNG.standard_normal((4, 3, 2, 3))
    bias = RNG.standard_normal(3 * groups)
    args = (stride, padding, output_padding, groups, dilation)
    got = F.conv_transpose2d(t(x), t(w), t(bias), *args)
    want = np_conv_transpose2d(x, w, bias, *args)
    assert got.shape == want.shape and got.dtype is minitorch.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    check_gradients(
        lambda a, b, c: F.conv_transpose2d(a, b, c, *args),
        lambda a, b, c: np_conv_transpose2d(a, b, c, *args),
        [x, w, bias],
    )


@pytest.mark.parametrize(
    "stride,padding,dilation,groups",
    [(1, 0, 1, 1), (2, 1, 1, 1), (3, 2, 2, 2), ((2, 1), (0, 1), (1, 2), 4)],
)
def test_conv_transpose2d_is_the_adjoint_of_conv2d(stride, padding, dilation, groups):
    # <conv2d(x, w), y> == <x, conv_transpose2d(y, w)>, output_padding restoring x's size
    x = RNG.standard_normal((2, 4, 7, 8))
    w = RNG.standard_normal((8, 4 // groups, 3, 2))
    y_shape = F.conv2d(t(x), t(w), None, stride, padding, dilation, groups).shape
    y = RNG.standard_normal(tuple(y_shape))
    s, p, d = (pair("conv", "arg", v) for v in (stride, padding, dilation))
    extra = tuple(
        x.shape[2 + k] - ((y.shape[2 + k] - 1) * s[k] - 2 * p[k] + d[k] * (w.shape[2 + k] - 1) + 1)
        for k in range(2)
    )
    left = np.sum(F.conv2d(t(x), t(w), None, stride, padding, dilation, groups).numpy() * y)
    back = F.conv_transpose2d(t(y), t(w), None, stride, padding, extra, groups, dilation)
    assert tuple(back.shape) == x.shape
    np.testing.assert_allclose(left, np.sum(x * back.numpy()), rtol=1e-10)


def test_conv_transpose2d_unbatched_and_module():
    minitorch.manual_seed(0)
    layer = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2)
    assert tuple(layer.weight.shape) == (4, 3, 3, 3)
    bound = 1 / math.sqrt(3 * 9)  # fan_in = out_channels / groups * kh * kw, as PyTorch
    assert float(layer.bias.abs().max()) <= bound
    x = minitorch.randn(4, 5, 5)
    assert tuple(layer(x).shape) == (6, 9, 9)
    assert tuple(layer(x.unsqueeze(0), output_size=(10, 10)).shape) == (1, 6, 10, 10)
    np.testing.assert_allclose(
        layer(x).detach().numpy(), layer(x.unsqueeze(0))[0].detach().numpy(), rtol=1e-6
    )
    with pytest.raises(minitorch.MinitorchError, match="valid sizes"):
        layer(x.unsqueeze(0), output_size=(11, 11))
    assert repr(layer) == (
        "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), groups=2)"
    )


def test_conv_transpose2d_errors_name_the_op():
    x, w = minitorch.randn(1, 4, 3, 3), minitorch.randn(4, 2, 3, 3)
    with pytest.raises(minitorch.ShapeError, match="output padding must be smaller"):
        F.conv_transpose2d(x, w, stride=2, output_padding=2)
    with pytest.raises(minitorch.ShapeError, match="expected input.* to have 4 channels"):
        F.conv_transpose2d(minitorch.randn(1, 3, 3, 3), w)
    with pytest.raises(minitorch.ShapeError, match="bias of shape"):
        F.conv_transpose2d(x, w, minitorch.randn(3))
    with pytest.raises(minitorch.MinitorchError, match="padding mode"):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")


# ---- pad ---------------------------------------------------------------------------------

NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def np_pad(x, pad, mode, value=0.0):
    widths = [(0, 0)] * x.ndim
    for k in range(len(pad) // 2):
        widths[x.ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    if mode == "constant":
        return np.pad(x, widths, constant_values=value)
    return np.pad(x, widths, mode=NP_MODE[mode])


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize(
    "shape,pad",
    [
        ((2, 5), (1, 3)),
        ((2, 3, 5), (2, 1)),
        ((2, 3, 4, 5), (1, 2, 3, 0)),
        ((3, 4, 5), (0, 2, 1, 1)),
        ((1, 2, 3, 4, 5), (1, 1, 2, 0, 1, 2)),
    ],
)
def test_pad_matches_numpy_and_finite_differences(mode, shape, pad):
    x = RNG.standard_normal(shape)
    got = F.pad(t(x), pad, mode)
    np.testing.assert_array_equal(got.numpy(), np_pad(x, pad, mode))
    check_gradients(lambda a: F.pad(a, pad, mode), lambda a: np_pad(a, pad, mode), [x])


def test_constant_pad_any_number_of_dims_a_value_and_negative_crops():
    x = RNG.standard_normal((2, 3, 4))
    got = F.pad(t(x), (1, 1, 0, 2, 1, 0), value=-2.5)
    np.testing.assert_array_equal(got.numpy(), np_pad(x, (1, 1, 0, 2, 1, 0), "constant", -2.5))
    np.testing.assert_array_equal(
        F.pad(t(x), (-1, 2, 1, -2)).numpy(), np.pad(x[:, :1, 1:], ((0, 0), (1, 0), (0, 2)))
    )
    ints = minitorch.tensor([[1, 2]])
    assert F.pad(ints, (1, 0), value=7).tolist() == [[7, 1, 2]]


def test_pad_errors_are_pytorchs():
    x = minitorch.randn(1, 2, 3, 3)
    with pytest.raises(minitorch.ShapeError, match="divisible by 2"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(minitorch.ShapeError, match="less than or equal to two times"):
        F.pad(x, (1,) * 10)
    with pytest.raises(minitorch.ShapeError, match="resulted in a negative output size"):
        F.pad(x, (-2, -2))
    with pytest.raises(minitorch.ShapeError, match="at most 2"):
        F.pad(x, (3, 0, 0, 0), mode="reflect")
    with pytest.raises(minitorch.MinitorchError, match="last 1, 2 or 3 dims"):
        F.pad(minitorch.randn(3), (1, 1), mode="replicate")
    with pytest.raises(minitorch.MinitorchError, match="doesn't take in value"):
        F.pad(x, (1, 1, 1, 1), mode="reflect", value=1.0)
    with pytest.raises(minitorch.MinitorchError, match="mode must be one of"):
        F.pad(x, (1, 1), mode="symmetric")


def test_padding_layers():
    x = RNG.standard_normal((2, 3, 4, 5))
    cases = [
        (nn.ZeroPad2d(2), np_pad(x, (2,) * 4, "constant")),
        (nn.ConstantPad2d((1, 0, 2, 1), 3.5), np_pad(x, (1, 0, 2, 1), "constant", 3.5)),
        (nn.ReflectionPad2d((3, 1, 0, 2)), np_pad(x, (3, 1, 0, 2), "reflect")),
        (nn.ReplicationPad2d(1), np_pad(x, (1,) * 4, "replicate")),
    ]
    for layer, want in cases:
        np.testing.assert_array_equal(layer(t(x)).numpy(), want)
        np.testing.assert_array_equal(layer(t(x[0])).numpy(), want[0])  # unbatched
    assert repr(nn.ReflectionPad2d(1)) == "ReflectionPad2d((1, 1, 1, 1))"
    one, three = RNG.standard_normal((2, 3, 5)), RNG.standard_normal((1, 2, 3, 4, 5))
    for name, mode in (
        ("Zero", "constant"),
        ("Reflection", "reflect"),
        ("Replication", "replicate"),
        ("Circular", "circular"),
    ):
        layer1 = getattr(nn, f"{name}Pad1d")((2, 1))
        np.testing.assert_array_equal(layer1(t(one)).numpy(), np_pad(one, (2, 1), mode))
        layer3 = getattr(nn, f"{name}Pad3d")((1, 2, 0, 1, 2, 0))
        np.testing.assert_array_equal(
            layer3(t(three)).numpy(), np_pad(three, (1, 2, 0, 1, 2, 0), mode)
        )
        np.testing.assert_array_equal(
            getattr(nn, f"{name}Pad2d")(1)(t(x)).numpy(), np_pad(x, (1,) * 4, mode)
        )
    np.testing.assert_array_equal(
        nn.ConstantPad1d(2, -1.0)(t(one)).numpy(), np_pad(one, (2, 2), "constant", -1.0)
    )
    np.testing.assert_array_equal(
        nn.ConstantPad3d(1, 0.5)(t(three)).numpy(), np_pad(three, (1,) * 6, "constant", 0.5)
    )
    with pytest.raises(minitorch.ShapeError, match="expected 2D or 3D input"):
        nn.ZeroPad1d(1)(t(x))
    with pytest.raises(minitorch.ShapeError, match="6-tuple"):
        nn.ReflectionPad3d((1, 2))


# ---- pixel shuffle -----------------------------------------------------------------------


def np_pixel_shuffle_2(x):
    """pixel_shuffle by 2 as numpy reshapes (the loop above checks the same layout)."""
    n, c, h, w = x.shape
    x = x.reshape(n, c // 4, 2, 2, h, w).transpose(0, 1, 4, 2, 5, 3)
    return x.reshape(n, c // 4, 2 * h, 2 * w)


def test_pixel_shuffle_moves_each_channel_to_its_sub_pixel_and_unshuffle_undoes_it():
    r, x = 3, RNG.standard_normal((2, 2 * 9, 2, 4))
    got = F.pixel_shuffle(t(x), r).numpy()
    assert got.shape == (2, 2, 6, 12)
    for n, c, h, w, i, j in np.ndindex(2, 2, 2, 4, r, r):
        assert got[n, c, h * r + i, w * r + j] == x[n, c * r * r + i * r + j, h, w]
    np.testing.assert_array_equal(F.pixel_unshuffle(t(got), r).numpy(), x)
    np.testing.assert_array_equal(nn.PixelShuffle(r)(t(x[0])).numpy(), got[0])
    np.testing.assert_array_equal(nn.PixelUnshuffle(r)(t(got)).numpy(), x)
    check_gradients(
        lambda a: F.pixel_shuffle(a, 2), np_pixel_shuffle_2, [RNG.standard_normal((1, 4, 2, 2))]
    )
    with pytest.raises(minitorch.ShapeError, match="divisible by the square"):
        F.pixel_shuffle(minitorch.randn(1, 5, 2, 2), 2)
    with pytest.raises(minitorch.ShapeError, match="at least 3 dimensions"):
        F.pixel_shuffle(minitorch.randn(4, 2), 2)


# ---- interpolate -------------------------------------------------------------------------

ONE_TO_FOUR = [[1.0, 2.0], [3.0, 4.0]]


def test_interpolate_matches_pytorchs_documented_examples():
    # the examples of torch.nn.Upsample's documentation
    x = minitorch.tensor(ONE_TO_FOUR).reshape(1, 1, 2, 2)
    assert nn.Upsample(scale_factor=2, mode="nearest")(x)[0, 0].tolist() == [
        [1.0, 1.0, 2.0, 2.0],
        [1.0, 1.0, 2.0, 2.0],
        [3.0, 3.0, 4.0, 4.0],
        [3.0, 3.0, 4.0, 4.0],
    ]
    np.testing.assert_allclose(
        nn.Upsample(scale_factor=2, mode="bilinear")(x)[0, 0].numpy(),
        [
            [1.0, 1.25, 1.75, 2.0],
            [1.5, 1.75, 2.25, 2.5],
            [2.5, 2.75, 3.25, 3.5],
            [3.0, 3.25, 3.75, 4.0],
        ],
        rtol=1e-6,
    )
    aligned = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)(x)[0, 0]
    np.testing.assert_allclose(
        aligned.numpy(),
        [
            [1.0, 1.3333, 1.6667, 2.0],
            [1.6667, 2.0, 2.3333, 2.6667],
            [2.3333, 2.6667, 3.0, 3.3333],
            [3.0, 3.3333, 3.6667, 4.0],
        ],
        atol=1e-4,
    )
    np.testing.assert_array_equal(
        nn.UpsamplingBilinear2d(scale_factor=2)(x)[0, 0].numpy(), aligned.numpy()
    )
    np.testing.assert_array_equal(
        nn.UpsamplingNearest2d(size=(4, 4))(x).numpy(), nn.Upsample(scale_factor=2)(x).numpy()
    )


def _source(i, n_in, n_out, scale, align_corners):
    """Input coordinate of output i for the linear modes, as PyTorch's kernels compute it."""
    if align_corners:
        return i * (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return max((i + 0.5) * scale - 0.5, 0.0)


def np_bilinear(x, out_size, scales, align_corners):
    """Each output pixel mixes its four neighbours by distance."""
    (h, w), (oh, ow) = x.shape[2:], out_size
    out = np.empty(x.shape[:2] + (oh, ow))
    for i, j in np.ndindex(oh, ow):
        y = _source(i, h, oh, scales[0], align_corners)
        z = _source(j, w, ow, scales[1], align_corners)
        y0, z0 = min(int(y), h - 1), min(int(z), w - 1)
        y1, z1 = min(y0 + 1, h - 1), min(z0 + 1, w - 1)
        a, b = y - y0, z - z0
        out[:, :, i, j] = (1 - a) * ((1 - b) * x[:, :, y0, z0] + b * x[:, :, y0, z1]) + a * (
            (1 - b) * x[:, :, y1, z0] + b * x[:, :, y1, z1]
        )
    return out


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize(
    "size,scale_factor", [((7, 3), None), ((2, 9), None), (None, 1.5), (None, (0.6, 2.5))]
)
def test_bilinear_matches_reference_and_finite_differences(align_corners, size, scale_factor):
    x = RNG.standard_normal((2, 2, 4, 5))
    if size is not None:
        out_size, scales = size, (4 / size[0], 5 / size[1])
    else:
        f = scale_factor if isinstance(scale_factor, tuple) else (scale_factor,) * 2
        out_size, scales = (math.floor(4 * f[0]), math.floor(5 * f[1])), (1 / f[0], 1 / f[1])
    want = np_bilinear(x, out_size, scales, align_corners)
    got = F.interpolate(t(x), size, scale_factor, "bilinear", align_corners)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    check_gradients(
        lambda a: F.interpolate(a, size, scale_factor, "bilinear", align_corners),
        lambda a: np_bilinear(a, out_size, scales, align_corners),
        [x],
    )


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest_in_one_two_and_three_spatial_dims(mode):
    offset = 0.5 if mode == "nearest-exact" else 0.0
    for shape, size in (((1, 2, 5), (8,)), ((1, 1, 3, 4), (7, 2)), ((1, 1, 2, 3, 4), (3, 5, 2))):
        x = RNG.standard_normal(shape)
        got = F.interpolate(t(x), size=size, mode=mode).numpy()
        index = [
            [min(int(math.floor((i + offset) * n / o)), n - 1) for i in range(o)]
            for n, o in zip(shape[2:], size)
        ]
        np.testing.assert_array_equal(got, x[np.ix_(range(shape[0]), range(shape[1]), *index)])
    # with scale_factor, the scale is 1 / scale_factor unless recompute_scale_factor
    x = t(np.arange(5.0).reshape(1, 1, 5))
    assert F.interpolate(x, scale_factor=1.7)[0, 0].tolist() == [
        0.0,
        0.0,
        1.0,
        1.0,
        2.0,
        2.0,
        3.0,
        4.0,
    ]
    assert F.interpolate(x, scale_factor=1.7, recompute_scale_factor=True)[0, 0].tolist() == [
        0.0,
        0.0,
        1.0,
        1.0,
        2.0,
        3.0,
        3.0,
        4.0,
    ]


def test_trilinear_is_linear_along_each_dim_and_area_is_adaptive_pooling():
    x = RNG.standard_normal((1, 2, 3, 4, 5))
    got = F.interpolate(t(x), size=(5, 2, 7), mode="trilinear", align_corners=True)
    step = x
    for dim, size in zip((2, 3, 4), (5, 2, 7)):  # align_corners: src = i * (n - 1) / (m - 1)
        n = step.shape[dim]
        src = np.arange(size) * (n - 1) / (size - 1)
        low = np.minimum(src.astype(int), n - 1)
        high = np.minimum(low + 1, n - 1)
        w = (src - low).reshape([-1 if d == dim else 1 for d in range(5)])
        step = np.take(step, low, dim) * (1 - w) + np.take(step, high, dim) * w
    np.testing.assert_allclose(got.numpy(), step, rtol=1e-12, atol=1e-12)
    image = RNG.standard_normal((2, 3, 6, 4))
    np.testing.assert_allclose(
        F.interpolate(t(image), size=(3, 2), mode="area").numpy(),
        image.reshape(2, 3, 3, 2, 2, 2).mean((3, 5)),
        rtol=1e-12,
    )
    signal = RNG.standard_normal((2, 3, 6))
    np.testing.assert_allclose(
        F.interpolate(t(signal), scale_factor=0.5, mode="area").numpy(),
        signal.reshape(2, 3, 3, 2).mean(-1),
        rtol=1e-12,
    )


def test_interpolate_errors():
    x = minitorch.randn(1, 1, 2, 2)
    with pytest.raises(minitorch.MinitorchError, match="only one of size or scale_factor"):
        F.interpolate(x, size=3, scale_factor=2)
    with pytest.raises(minitorch.MinitorchError, match="either size or scale_factor"):
        F.interpolate(x)
    with pytest.raises(minitorch.MinitorchError, match="align_corners option can only be set"):
        F.interpolate(x, scale_factor=2, align_corners=True)
    with pytest.raises(minitorch.ShapeError, match="expects a 4D input"):
        F.interpolate(minitorch.randn(1, 1, 2), scale_factor=2, mode="bilinear")
    with pytest.raises(minitorch.MinitorchError, match="'bicubic' is not supported"):
        F.interpolate(x, scale_factor=2, mode="bicubic")


# ---- instance_norm -----------------------------------------------------------------------


def np_instance_norm(x, weight, bias, eps=1e-5):
    axes = tuple(range(2, x.ndim))
    out = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return out * weight.reshape(shape) + bias.reshape(shape)


def test_instance_norm_values_gradients_and_running_statistics():
    x, w, b = RNG.standard_normal((3, 2, 3, 4)), RNG.standard_normal(2), RNG.standard_normal(2)
    np.testing.assert_allclose(
        F.instance_norm(t(x), weight=t(w), bias=t(b)).numpy(), np_instance_norm(x, w, b), rtol=1e-10
    )
    check_gradients(
        lambda a, c, d: F.instance_norm(a, weight=c, bias=d),
        np_instance_norm,
        [x, w, b],
        rtol=1e-5,
        atol=1e-6,
    )
    layer = nn.InstanceNorm2d(2, track_running_stats=True, momentum=0.2)
    assert layer.weight is None and nn.InstanceNorm2d(2).running_mean is None
    layer(t(x.astype(np.float32)))
    want_mean = 0.8 * 0 + 0.2 * x.mean((2, 3)).mean(0)
    want_var = 0.8 * 1 + 0.2 * x.var((2, 3), ddof=1).mean(0)
    np.testing.assert_allclose(layer.running_mean.numpy(), want_mean, rtol=1e-5)
    np.testing.assert_allclose(layer.running_var.numpy(), want_var, rtol=1e-5)
    layer.eval()  # now the running statistics normalise
    y = layer(t(x.astype(np.float32))).numpy()
    shape = (1, 2, 1, 1)
    np.testing.assert_allclose(
        y,
        (x - want_mean.reshape(shape)) / np.sqrt(want_var.reshape(shape) + 1e-5),
        rtol=1e-4,
        atol=1e-5,
    )
    for layer, shape in ((nn.InstanceNorm1d(2), (3, 2, 5)), (nn.InstanceNorm3d(2), (2, 3, 4, 2))):
        z = RNG.standard_normal(shape)
        batched = z if z.ndim == layer.dims + 2 else z[None]
        want = np_instance_norm(batched, np.ones(2), np.zeros(2))
        np.testing.assert_allclose(layer(t(z)).numpy(), want.reshape(z.shape), rtol=1e-9)
    with pytest.raises(minitorch.ShapeError, match="more than 1 spatial element"):
        F.instance_norm(minitorch.randn(2, 3, 1, 1))
    with pytest.raises(minitorch.ShapeError, match="to match num_features"):
        nn.InstanceNorm2d(3, affine=True)(minitorch.randn(1, 2, 3, 3))


# ---- activations, one_hot ----------------------------------------------------------------


def test_elu_and_silu_values_gradients_and_layers():
    x = np.array([-3.0, -0.5, 0.0, 0.5, 2.0])
    elu = np.where(x > 0, x, 0.7 * np.expm1(x))
    np.testing.assert_allclose(F.elu(t(x), 0.7).numpy(), elu, rtol=1e-12)
    np.testing.assert_allclose(nn.ELU(0.7)(t(x)).numpy(), elu, rtol=1e-12)
    silu = x / (1 + np.exp(-x))
    np.testing.assert_allclose(nn.SiLU()(t(x)).numpy(), silu, rtol=1e-12)
    y = RNG.standard_normal(6)
    check_gradients(lambda a: F.elu(a, 0.7), lambda a: np.where(a > 0, a, 0.7 * np.expm1(a)), [y])
    check_gradients(F.silu, lambda a: a / (1 + np.exp(-a)), [y])
    inplace = t(x)
    assert F.elu(inplace, 0.7, inplace=True) is inplace
    np.testing.assert_allclose(inplace.numpy(), elu, rtol=1e-12)
    for fn in (lambda a, inplace: F.elu(a, 0.7, inplace), F.silu):
        leaf = t(y, requires_grad=True)
        fn(leaf * 2, inplace=True).sum().backward()  # in place on a non-leaf: same gradient
        in_place = leaf.grad.numpy()
        leaf.grad = None
        fn(leaf * 2, inplace=False).sum().backward()
        np.testing.assert_allclose(in_place, leaf.grad.numpy(), rtol=1e-12)
    with pytest.raises(minitorch.DTypeError, match="elu"):
        F.elu(minitorch.tensor([1, 2]))


def test_one_hot():
    labels = minitorch.tensor([[0, 3], [2, 1]])
    got = F.one_hot(labels)
    assert got.dtype is minitorch.int64 and tuple(got.shape) == (2, 2, 4)
    np.testing.assert_array_equal(got.numpy(), np.eye(4, dtype=np.int64)[labels.numpy()])
    assert F.one_hot(minitorch.tensor([1]), 3).tolist() == [[0, 1, 0]]
    with pytest.raises(minitorch.ShapeError, match="smaller than num_classes"):
        F.one_hot(labels, 3)
    with pytest.raises(minitorch.ShapeError, match="non-negative"):
        F.one_hot(minitorch.tensor([-1, 0]))
    with pytest.raises(minitorch.DTypeError, match="LongTensor"):
        F.one_hot(minitorch.tensor([1.0]))
    with pytest.raises(minitorch.ShapeError, match="empty tensor"):
        F.one_hot(minitorch.tensor([], dtype=minitorch.int64))


# ---- scaled_dot_product_attention --------------------------------------------------------


def np_attention(q, k, v, mask=None, causal=False, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores, -np.inf)
    if mask is not None and mask.dtype == bool:
        scores = np.where(mask, scores, -np.inf)
    elif mask is not None:
        scores = scores + mask
    dead = np.all(scores == -np.inf, axis=-1, keepdims=True)  # PyTorch gives such rows 0
    scores = np.where(dead, 0.0, scores)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return np.where(dead, 0.0, weights / weights.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("kind", ["plain", "causal", "bool", "float", "scale"])
def test_attention_matches_reference_and_finite_differences(kind):
    q, k = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 5, 4))
    v = RNG.standard_normal((2, 5, 2))
    mask = {
        "bool": RNG.standard_normal((3, 5)) > -0.5,
        "float": RNG.standard_normal((2, 3, 5)),
    }.get(kind)
    if kind == "bool":
        mask[1] = False  # a query that may attend to nothing: zeros, and gradients of 0
    kwargs = {"is_causal": kind == "causal", "scale": 0.3 if kind == "scale" else None}
    reference_args = {"causal": kwargs["is_causal"], "scale": kwargs["scale"]}
    mask_t = None if mask is None else t(mask)
    got = F.scaled_dot_product_attention(t(q), t(k), t(v), attn_mask=mask_t, **kwargs)
    np.testing.assert_allclose(
        got.numpy(), np_attention(q, k, v, mask, **reference_args), rtol=1e-10
    )
    check_gradients(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=mask_t, **kwargs),
        lambda a, b, c: np_attention(a, b, c, mask, **reference_args),
        [q, k, v],
    )


def test_attention_dropout_grouped_query_and_errors():
    q, k, v = minitorch.randn(1, 4, 3, 2), minitorch.randn(1, 2, 3, 2), minitorch.randn(1, 2, 3, 2)
    assert (
        float(F.scaled_dot_product_attention(q, k, v, dropout_p=1.0, enable_gqa=True).abs().sum())
        == 0.0
    )
    grouped = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    repeated = F.scaled_dot_product_attention(
        q, k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1)
    )
    np.testing.assert_allclose(grouped.numpy(), repeated.numpy(), rtol=1e-6)
    with pytest.raises(minitorch.MinitorchError, match="should not be set when is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=minitorch.ones(3, 3), is_causal=True)
    with pytest.raises(minitorch.ShapeError, match="scaled_dot_product_attention"):
        F.scaled_dot_product_attention(q, minitorch.randn(1, 4, 3, 5), v)
