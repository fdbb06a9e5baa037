"""float16 and bfloat16: values, PyTorch's promotion, rounding after every op, autograd,
saving, printing and compile.

References: numpy's float16 for float16; for bfloat16, a scalar reference of PyTorch's
round-to-nearest-even written with struct on one float at a time (`_bf16`), independent of the
array code in minitorch/dtype.py.
"""

import io
import math
import struct

import numpy as np
import pytest

import minitorch
from minitorch.dtype import promote_types, result_type

F16, BF16, F32, F64 = minitorch.float16, minitorch.bfloat16, minitorch.float32, minitorch.float64


def _bf16(value: float) -> float:
    """PyTorch's float -> bfloat16 -> float, for one number (c10::round_to_nearest_even)."""
    (bits,) = struct.unpack("<I", struct.pack("<f", value))
    if math.isnan(value):
        return math.nan
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0]


def _bf16_array(values) -> np.ndarray:
    flat = np.asarray(values, np.float32).ravel()
    return np.array([_bf16(float(v)) for v in flat], np.float32).reshape(np.shape(values))


def _values(t: minitorch.Tensor) -> np.ndarray:
    return t.detach().float().numpy()


# ---- the dtypes and promotion ----------------------------------------------------------------


def test_names_sizes_and_aliases():
    assert minitorch.half is F16 and F16.itemsize == 2 and BF16.itemsize == 2
    assert F16.is_floating_point and BF16.is_floating_point
    assert minitorch.ones(2).half().type() == "torch.HalfTensor"
    assert minitorch.ones(2).bfloat16().type() == "torch.BFloat16Tensor"


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (F16, BF16, F32),
        (BF16, F16, F32),
        (F16, F32, F32),
        (BF16, F32, F32),
        (BF16, F64, F64),
        (F16, minitorch.int64, F16),
        (minitorch.bool, BF16, BF16),
        (F16, F16, F16),
    ],
)
def test_promote_types_is_pytorchs(a, b, expected):
    assert promote_types(a, b) is expected


def test_result_type_with_scalars_and_zero_dim_tensors():
    h = minitorch.ones(3, dtype=F16)
    i = minitorch.ones(3, dtype=minitorch.int32)
    assert result_type(h, 2.5) is F16  # float16 tensor * python float -> float16
    assert result_type(i, minitorch.tensor(1.0, dtype=F16)) is F16  # int + 0-d half -> half
    assert result_type(minitorch.ones(3), minitorch.tensor(1.0, dtype=BF16)) is F32
    assert result_type(minitorch.ones(3, dtype=BF16), minitorch.tensor(1.0)) is BF16
    assert (h + minitorch.ones(3, dtype=BF16)).dtype is F32
    assert (i + h).dtype is F16 and (h * 2.5).dtype is F16


# ---- values --------------------------------------------------------------------------------


def test_bfloat16_rounds_to_nearest_even_as_pytorch():
    cases = [
        1.0,
        1.00390625,
        1.01171875,
        3.14159265,
        -2.71828,
        3.4e38,
        -3.4e38,
        1e-40,
        -0.0,
        float("inf"),
        65504.0,
        0.1,
        1 + 2**-8 + 2**-20,
    ]
    got = _values(minitorch.tensor(cases).bfloat16())
    np.testing.assert_array_equal(got, _bf16_array(cases))
    nan = minitorch.tensor([float("nan"), -float("nan")]).bfloat16()
    assert np.isnan(_values(nan)).all()


def test_factories_make_bfloat16_values():
    made = [
        minitorch.tensor([0.1, 0.2, 0.3], dtype=BF16),
        minitorch.full((3,), 0.1, dtype=BF16),
        minitorch.randn(50, dtype=BF16),
        minitorch.arange(0, 1, 0.1, dtype=BF16),
        minitorch.linspace(0, 1, 7, dtype=BF16),
        minitorch.rand(50, dtype=BF16),
    ]
    for t in made:
        assert t.dtype is BF16
        np.testing.assert_array_equal(_values(t), _bf16_array(_values(t)))
    np.testing.assert_array_equal(_values(made[0]), _bf16_array([0.1, 0.2, 0.3]))


def test_random_values_round_as_the_scalar_reference():
    x = np.random.default_rng(0).standard_normal(500).astype(np.float32) * 1000
    np.testing.assert_array_equal(_values(minitorch.from_numpy(x).bfloat16()), _bf16_array(x))


@pytest.mark.parametrize(
    "name, fn",
    [
        ("add", lambda a, b: a + b),
        ("mul", lambda a, b: a * b),
        ("div", lambda a, b: a / b),
        ("sin", lambda a, b: a.sin()),
        ("exp", lambda a, b: (a / 4).exp()),
        ("sum", lambda a, b: a.sum(0)),
        ("mean", lambda a, b: a.mean(1)),
        ("matmul", lambda a, b: a @ b.t()),
        ("relu", lambda a, b: a.relu() - b),
    ],
)
def test_every_op_result_is_rounded_like_pytorchs(name, fn):
    """PyTorch on the CPU computes each bfloat16 op in float32 and rounds the result once."""
    rng = np.random.default_rng(1)
    a32, b32 = (_bf16_array(rng.standard_normal((3, 4))) for _ in range(2))
    a, b = minitorch.from_numpy(a32).bfloat16(), minitorch.from_numpy(b32).bfloat16()
    out = fn(a, b)
    assert out.dtype is BF16
    exact = fn(minitorch.from_numpy(a32), minitorch.from_numpy(b32)).numpy()
    np.testing.assert_array_equal(_values(out), _bf16_array(exact))


def test_float16_ops_are_numpys_float16():
    rng = np.random.default_rng(2)
    a, b = (rng.standard_normal((4, 5)).astype(np.float16) for _ in range(2))
    ta, tb = minitorch.from_numpy(a), minitorch.from_numpy(b)
    assert ta.dtype is F16
    np.testing.assert_array_equal((ta * tb + 1.5).numpy(), a * b + np.float16(1.5))
    assert (ta * tb).numpy().dtype == np.float16
    assert minitorch.tensor([70000.0]).half().item() == math.inf  # overflows as IEEE half


def test_in_place_writes_and_optimizer_steps_round():
    b = minitorch.ones(3, dtype=BF16)
    b.add_(minitorch.tensor([0.01, 0.02, 0.03]))  # float32 operand: computed, then rounded
    np.testing.assert_array_equal(_values(b), _bf16_array([1.01, 1.02, 1.03]))
    b[0] = 1.001
    b.copy_(minitorch.tensor([2.01, 3.01, 4.01]))
    np.testing.assert_array_equal(_values(b), _bf16_array([2.01, 3.01, 4.01]))
    p = minitorch.nn.Parameter(minitorch.ones(3, dtype=BF16))
    p.grad = minitorch.full((3,), 0.01, dtype=BF16)
    minitorch.optim.SGD([p], lr=1.0).step()
    np.testing.assert_array_equal(_values(p), _bf16_array(1 - _bf16_array(0.01)))


def test_gradients_keep_the_half_dtypes_and_match_finite_differences():
    for dtype in (F16, BF16):
        x = minitorch.tensor([0.5, -1.25, 2.0], dtype=dtype, requires_grad=True)
        (x * x * 3).sum().backward()
        assert x.grad.dtype is dtype
        np.testing.assert_allclose(_values(x.grad), 6 * _values(x), rtol=1e-2)
    w = minitorch.tensor([1.5, 2.5], requires_grad=True)  # float32 leaf through a cast
    (w.to(BF16) * 3).sum().backward()
    assert w.grad.dtype is F32
    np.testing.assert_array_equal(w.grad.numpy(), [3.0, 3.0])


def test_numpy_of_bfloat16_refuses_as_pytorch_does():
    with pytest.raises(minitorch.DTypeError, match="numpy has no bfloat16"):
        minitorch.ones(2, dtype=BF16).numpy()
    assert minitorch.ones(2, dtype=BF16).tolist() == [1.0, 1.0]
    assert minitorch.ones(2, dtype=F16).numpy().dtype == np.float16


def test_a_big_endian_float32_array_is_not_taken_for_bfloat16():
    with pytest.raises(minitorch.DTypeError, match=">f4"):
        minitorch.from_numpy(np.ones(2, ">f4"))


# ---- printing and saving -------------------------------------------------------------------


def test_printing_names_the_dtype():
    assert (
        repr(minitorch.tensor([1.0, 2.5]).half())
        == "tensor([1.0000, 2.5000], dtype=minitorch.float16)"
    )
    assert (
        repr(minitorch.tensor([3.14159]).bfloat16()) == "tensor([3.1406], dtype=minitorch.bfloat16)"
    )
    assert "dtype=minitorch.float16" in repr(minitorch.tensor([65504.0, 1e-7]).half())


def test_save_and_load_keep_the_dtypes_and_bits():
    b = minitorch.tensor([1.0, 3.14159, -0.0, float("inf"), float("nan")]).bfloat16()
    h = minitorch.tensor([1.0, 65504.0, 6e-8]).half()
    buf = io.BytesIO()
    minitorch.save({"b": b, "h": h}, buf)
    as_float32 = io.BytesIO()
    minitorch.save({"b": b.float(), "h": h.float()}, as_float32)
    assert len(as_float32.getvalue()) - len(buf.getvalue()) == 2 * (5 + 3)  # 2 bytes, not 4
    buf.seek(0)
    back = minitorch.load(buf)
    assert back["b"].dtype is BF16 and back["h"].dtype is F16
    np.testing.assert_array_equal(_values(back["b"]), _values(b))
    np.testing.assert_array_equal(back["h"].numpy(), h.numpy())


# ---- compile -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_compiled_equals_eager_in_half_precision(dtype):
    def f(x, y):
        return ((x * y + 1.3).sin().sum(0) * 2.7, (x @ y.t()).relu(), x.float() * 1.1)

    rng = np.random.default_rng(3)
    x, y = (
        minitorch.from_numpy(rng.standard_normal((4, 5)).astype(np.float32)).to(dtype)
        for _ in range(2)
    )
    for eager, compiled in zip(f(x, y), minitorch.compile(f)(x, y)):
        assert compiled.dtype is eager.dtype
        np.testing.assert_array_equal(_values(compiled), _values(eager))


def test_compiled_gradients_through_a_bfloat16_cast_equal_eager():
    def f(w):
        return ((w.to(BF16) * 3.1).sin().float() * w).sum()

    w1 = minitorch.tensor([0.3, -1.7, 2.2], requires_grad=True)
    w2 = minitorch.tensor([0.3, -1.7, 2.2], requires_grad=True)
    f(w1).backward()
    minitorch.compile(f)(w2).backward()
    np.testing.assert_array_equal(w2.grad.numpy(), w1.grad.numpy())


def test_a_graph_compiled_for_float32_is_not_reused_for_bfloat16():
    f = minitorch.compile(lambda x: x * 1.01)
    x = minitorch.tensor([1.0, 2.0, 3.0])
    assert f(x).dtype is F32
    out = f(x.bfloat16())
    assert out.dtype is BF16
    np.testing.assert_array_equal(_values(out), _bf16_array(_bf16_array([1, 2, 3]) * 1.01))


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_the_compiler_records_why_half_ops_run_eagerly(dtype):
    """The half ops run as extern steps (the eager kernels), with the reason in the report."""

    def f(x):
        return (x * 2.5).sin() + 1

    x = minitorch.randn(3, 4).to(dtype)
    minitorch._dynamo.reset()
    with minitorch._logging.Recorder() as recorder:
        out = minitorch.compile(f, fullgraph=True)(x)
    text = "\n".join(a.text for a in recorder.artifacts if a.stage == "loop_ir")
    assert f"the code generator does not compile {dtype.name}" in text
    np.testing.assert_array_equal(_values(out), _values(f(x)))


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_a_half_model_trains_the_same_compiled_and_eager(dtype):
    def make():
        minitorch.manual_seed(0)
        return minitorch.nn.Sequential(
            minitorch.nn.Linear(4, 8), minitorch.nn.ReLU(), minitorch.nn.Linear(8, 2)
        ).to(dtype)

    def step(model, x):
        loss = model(x).float().pow(2).mean()
        loss.backward()
        return loss

    eager, compiled = make(), make()
    assert eager[0].weight.dtype is dtype and compiled[2].bias.dtype is dtype
    spare = make().float()
    assert spare.half() is spare and spare[0].weight.dtype is F16
    assert spare.bfloat16() is spare and spare[2].bias.dtype is BF16
    x = minitorch.randn(5, 4).to(dtype)
    compiled_step = minitorch.compile(step)
    for _ in range(2):
        for model, run in ((eager, step), (compiled, compiled_step)):
            model.zero_grad()
            run(model, x)
            minitorch.optim.SGD(model.parameters(), lr=0.1).step()
    for pe, pc in zip(eager.parameters(), compiled.parameters()):
        assert pc.dtype is dtype and pc.grad.dtype is dtype
        np.testing.assert_array_equal(_values(pc.grad), _values(pe.grad))
        np.testing.assert_array_equal(_values(pc), _values(pe))
    if dtype is BF16:
        w = _values(eager[0].weight)
        np.testing.assert_array_equal(w, _bf16_array(w))  # the step's writes were rounded


def test_assert_close_uses_pytorchs_half_tolerances():
    a = minitorch.tensor([1.0, 100.0])
    b = minitorch.tensor([1.0078125, 100.5])  # one bfloat16 ulp apart at 1
    minitorch.testing.assert_close(a.bfloat16(), b.bfloat16())  # rtol 1.6e-2
    with pytest.raises(AssertionError, match="not close"):
        minitorch.testing.assert_close(a.half(), b.half())  # rtol 1e-3
    minitorch.testing.assert_close(a.half(), (a * (1 + 5e-4)).half())


def test_grad_scaler_refuses_float16_gradients_as_pytorch():
    p = minitorch.nn.Parameter(minitorch.ones(2, dtype=F16))
    scaler = minitorch.amp.GradScaler("cpu")
    scaler.scale(p.sum()).backward()
    with pytest.raises(minitorch.DTypeError, match="unscale float16 gradients"):
        scaler.step(minitorch.optim.SGD([p], lr=0.1))


def test_float16_reductions_accumulate_in_float32_as_pytorch():
    """numpy would accumulate a float16 cumsum in float16: 0.1 added 5000 times stops at 256."""
    c = np.full(5000, 0.1, np.float16)
    got = minitorch.from_numpy(c).cumsum(0)
    expected = np.cumsum(c.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(got.numpy(), expected)
    assert got.dtype is F16
    rng = np.random.default_rng(5)
    a, b = (
        rng.standard_normal((16, 300)).astype(np.float16),
        rng.standard_normal((300, 8)).astype(np.float16),
    )
    mm = (minitorch.from_numpy(a) @ minitorch.from_numpy(b)).numpy()
    np.testing.assert_array_equal(
        mm, (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    )
    assert minitorch.from_numpy(a).sum().item() == float(np.float16(a.astype(np.float32).sum()))


def test_tensor_of_a_float16_array_is_a_copy():
    a = np.ones(3, np.float16)
    t = minitorch.tensor(a)
    a[0] = 5
    assert t.dtype is F16 and t.tolist() == [1.0, 1.0, 1.0]


@pytest.mark.parametrize("dtype", [F16, BF16])
def test_views_share_memory_and_writes_through_them_round(dtype):
    """A view of a half tensor is its base's memory (no rounding copy), and a write into a
    transposed or strided view is rounded like any other."""
    base = minitorch.zeros(2, 3, dtype=dtype)
    head = base[0]
    head.fill_(5.0)
    assert base.tolist() == [[5.0, 5.0, 5.0], [0.0, 0.0, 0.0]]
    base.t()[0] = 1.3  # a non-contiguous view
    expected = float(np.float16(1.3)) if dtype is F16 else _bf16(1.3)
    assert base[:, 0].tolist() == [expected, expected]
    assert base.t().dtype is dtype and base.view(6).data_ptr() == base.data_ptr()
    out = base.t() * 1.1  # an op on a transposed view rounds every element
    np.testing.assert_array_equal(_values(out), _values(base.t().contiguous() * 1.1))
    if dtype is BF16:
        exact = _values(base).T * np.float32(1.1)
        np.testing.assert_array_equal(_values(out), _bf16_array(exact))


def test_finfo_and_iinfo_report_pytorchs_limits():
    h, b = minitorch.finfo(F16), minitorch.finfo(BF16)
    assert (h.bits, h.eps, h.max, h.min, h.tiny, h.resolution) == (
        16,
        2.0**-10,
        65504.0,
        -65504.0,
        2.0**-14,
        0.001,
    )
    assert (b.bits, b.eps, b.tiny, b.resolution, b.dtype) == (
        16,
        2.0**-7,
        2.0**-126,
        0.01,
        "bfloat16",
    )
    assert b.max == 3.3895313892515355e38 and b.min == -b.max
    # the limits are bfloat16 numbers: max survives rounding, 1 + eps is the next one after 1
    assert _bf16(b.max) == b.max and _bf16(1 + b.eps) == 1 + b.eps and _bf16(1 + b.eps / 2) == 1
    assert minitorch.tensor([b.max]).bfloat16().item() == b.max
    assert minitorch.finfo().eps == float(np.finfo(np.float32).eps)
    assert minitorch.finfo(F64).max == float(np.finfo(np.float64).max)
    assert minitorch.iinfo(minitorch.int32).min == -(2**31)
    assert minitorch.iinfo(minitorch.int64).max == 2**63 - 1
    with pytest.raises(minitorch.DTypeError, match="use iinfo"):
        minitorch.finfo(minitorch.int64)
    with pytest.raises(minitorch.DTypeError, match="use finfo"):
        minitorch.iinfo(F16)
    assert "dtype=float16" in repr(h)
