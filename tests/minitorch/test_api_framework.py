"""Framework flags, autocast, GradScaler and saving whole modules.

References: PyTorch's documented defaults and behaviour on a machine without a GPU; the
GradScaler's algorithm is checked step by step against a hand-run of PyTorch's update rule.
"""

import io
import warnings

import numpy as np
import pytest

import minitorch
from minitorch.errors import DeviceError, InvalidArgumentError, SerializationError

# ---- backends ------------------------------------------------------------------------------


def test_backend_flags_start_at_pytorchs_defaults_and_can_be_set():
    cudnn, cuda = minitorch.backends.cudnn, minitorch.backends.cuda
    assert (cudnn.benchmark, cudnn.deterministic, cudnn.enabled, cudnn.allow_tf32) == (
        False,
        False,
        True,
        True,
    )
    assert cuda.matmul.allow_tf32 is False
    assert cudnn.is_available() is False  # minitorch has no cuDNN
    assert minitorch.backends.mps.is_available() is False
    assert minitorch.backends.mps.is_built() is False
    try:
        cudnn.benchmark = True
        cuda.matmul.allow_tf32 = True
        assert cudnn.benchmark is True and cuda.matmul.allow_tf32 is True
    finally:
        cudnn.benchmark = False
        cuda.matmul.allow_tf32 = False


def test_the_flags_change_no_value():
    x = minitorch.randn(8, 8)
    before = (x @ x).numpy().copy()
    try:
        minitorch.backends.cuda.matmul.allow_tf32 = True
        minitorch.set_float32_matmul_precision("medium")
        np.testing.assert_array_equal((x @ x).numpy(), before)
    finally:
        minitorch.backends.cuda.matmul.allow_tf32 = False
        minitorch.set_float32_matmul_precision("highest")


def test_float32_matmul_precision_is_checked():
    assert minitorch.get_float32_matmul_precision() == "highest"
    minitorch.set_float32_matmul_precision("high")
    assert minitorch.get_float32_matmul_precision() == "high"
    minitorch.set_float32_matmul_precision("highest")
    with pytest.raises(InvalidArgumentError, match="invalid precision 'fast'"):
        minitorch.set_float32_matmul_precision("fast")


def test_accelerator_answers_as_cuda_does():
    acc = minitorch.accelerator
    assert acc.is_available() == minitorch.cuda.is_available()
    assert acc.device_count() == minitorch.cuda.device_count()
    if minitorch.cuda.is_available():
        assert acc.current_accelerator() == minitorch.device("cuda")
    else:
        assert acc.current_accelerator() is None
        assert acc.current_device_index() == -1
        with pytest.raises(DeviceError, match="none here"):
            acc.set_device_index(0)
    acc.synchronize()  # nothing to wait for, and no error


def test_cpu_module():
    assert minitorch.cpu.is_available() and minitorch.cpu.device_count() == 1
    assert minitorch.cpu.current_device() == "cpu"


# ---- autocast ------------------------------------------------------------------------------


def test_autocast_records_the_region_and_nests():
    assert not minitorch.is_autocast_enabled("cpu")
    with minitorch.autocast("cpu"):
        assert minitorch.is_autocast_enabled("cpu")
        assert minitorch.get_autocast_dtype("cpu") is minitorch.bfloat16
        with minitorch.autocast("cpu", enabled=False):
            assert not minitorch.is_autocast_enabled("cpu")
        with minitorch.autocast("cpu", dtype=minitorch.float16):
            assert minitorch.get_autocast_dtype("cpu") is minitorch.float16
        assert minitorch.is_autocast_enabled("cpu")
        assert minitorch.get_autocast_dtype("cpu") is minitorch.bfloat16
    assert not minitorch.is_autocast_enabled("cpu")


def test_autocast_is_a_documented_no_op_on_values():
    x, w = minitorch.randn(4, 3), minitorch.randn(3, 2)
    with minitorch.autocast("cpu"):
        y = x @ w
    assert y.dtype is minitorch.float32
    np.testing.assert_array_equal(y.numpy(), (x @ w).numpy())


def test_autocast_as_a_decorator_restores_on_error():
    @minitorch.amp.autocast("cpu")
    def inside():
        assert minitorch.is_autocast_enabled("cpu")
        raise KeyError("boom")

    with pytest.raises(KeyError):
        inside()
    with pytest.raises(KeyError):  # the same object entered again
        inside()
    assert not minitorch.is_autocast_enabled("cpu")


def test_autocast_disables_itself_where_pytorch_does():
    if not minitorch.cuda.is_available():
        with pytest.warns(UserWarning, match="CUDA is not available"):
            region = minitorch.autocast("cuda")
        with region:
            assert not minitorch.is_autocast_enabled("cuda")
    with pytest.warns(UserWarning, match="target dtype is not supported"):
        region = minitorch.autocast("cpu", dtype=minitorch.float64)
    with region:
        assert not minitorch.is_autocast_enabled("cpu")
    with pytest.raises(DeviceError, match="unsupported device_type 'gpu'"):
        minitorch.autocast("gpu")
    with pytest.raises(TypeError, match="device_type of type str"):
        minitorch.autocast(minitorch.device("cpu"))


def test_the_old_autocast_names_warn_and_work():
    with pytest.warns(FutureWarning, match="deprecated"):
        region = minitorch.cpu.amp.autocast()
    with region:
        assert minitorch.is_autocast_enabled("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        region = minitorch.cuda.amp.autocast()
    assert region.device == "cuda" and region.fast_dtype is minitorch.float16


def test_autocast_inside_a_compiled_function_matches_eager():
    def f(x):
        with minitorch.autocast("cpu"):
            return (x @ x).relu() + 1

    x = minitorch.randn(5, 5)
    np.testing.assert_allclose(minitorch.compile(f)(x).numpy(), f(x).numpy(), rtol=1e-6)


# ---- GradScaler ----------------------------------------------------------------------------


def _model_and_opt(lr=0.1):
    p = minitorch.nn.Parameter(minitorch.tensor([1.0, -2.0]))
    return p, minitorch.optim.SGD([p], lr=lr)


def test_grad_scaler_scales_unscales_and_steps():
    p, opt = _model_and_opt()
    scaler = minitorch.amp.GradScaler("cpu", init_scale=8.0)
    loss = (p * p).sum()
    scaled = scaler.scale(loss)
    assert scaled.item() == 8.0 * loss.item()
    scaled.backward()
    np.testing.assert_array_equal(p.grad.numpy(), [16.0, -32.0])  # 8 * 2p
    scaler.step(opt)
    np.testing.assert_allclose(p.detach().numpy(), [1.0 - 0.1 * 2, -2.0 + 0.1 * 4])
    scaler.update()
    assert scaler.get_scale() == 8.0


def test_grad_scaler_skips_a_step_with_inf_and_backs_off():
    p, opt = _model_and_opt()
    scaler = minitorch.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
    (scaler.scale(p.sum()) * float("inf")).backward()
    assert scaler.step(opt) is None
    np.testing.assert_array_equal(p.detach().numpy(), [1.0, -2.0])  # unchanged
    scaler.update()
    assert scaler.get_scale() == 2.0
    for _ in range(2):  # growth_interval clean steps double it
        opt.zero_grad()
        scaler.scale(p.sum()).backward()
        scaler.step(opt)
        scaler.update()
    assert scaler.get_scale() == 4.0


def test_grad_scaler_unscale_before_clipping_and_its_errors():
    p, opt = _model_and_opt()
    scaler = minitorch.amp.GradScaler("cpu", init_scale=2.0**10)
    with pytest.raises(minitorch.AutogradError, match="scaler.scale"):
        scaler.step(opt)
    scaler.scale((p * 3).sum()).backward()
    scaler.unscale_(opt)
    np.testing.assert_array_equal(p.grad.numpy(), [3.0, 3.0])
    with pytest.raises(minitorch.AutogradError, match="already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(minitorch.AutogradError, match="after step"):
        scaler.unscale_(opt)
    with pytest.raises(minitorch.AutogradError, match="step\\(\\) has already"):
        scaler.step(opt)
    scaler.update()


def test_grad_scaler_state_dict_round_trips_through_save():
    p, opt = _model_and_opt()
    scaler = minitorch.amp.GradScaler("cpu", init_scale=16.0, growth_interval=7)
    scaler.scale(p.sum()).backward()
    scaler.step(opt)
    scaler.update()
    buf = io.BytesIO()
    minitorch.save(scaler.state_dict(), buf)
    buf.seek(0)
    other = minitorch.amp.GradScaler("cpu")
    other.load_state_dict(minitorch.load(buf))
    assert other.state_dict() == scaler.state_dict()
    assert other.state_dict() == {
        "scale": 16.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 7,
        "_growth_tracker": 1,
    }


def test_a_disabled_grad_scaler_passes_everything_through():
    p, opt = _model_and_opt()
    scaler = minitorch.amp.GradScaler("cpu", enabled=False)
    loss = p.sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.step(opt)  # opt.step()
    np.testing.assert_allclose(p.detach().numpy(), [0.9, -2.1])
    scaler.update()
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {}
    assert not scaler.is_enabled()


@pytest.mark.skipif(minitorch.cuda.is_available(), reason="checks the CPU-only machine")
def test_a_cuda_grad_scaler_without_a_gpu_warns_and_disables():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = minitorch.amp.GradScaler()
    assert not scaler.is_enabled()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = minitorch.cuda.amp.GradScaler()
    assert not old.is_enabled()
    assert [w.category for w in caught] == [FutureWarning, UserWarning]


# ---- saving a whole module -----------------------------------------------------------------


def test_saving_a_whole_module_is_refused_with_what_to_do():
    model = minitorch.nn.Sequential(minitorch.nn.Linear(2, 3))
    with pytest.raises(SerializationError, match="whole nn.Module.*state_dict"):
        minitorch.save(model, io.BytesIO())
    with pytest.raises(SerializationError, match=r"obj\['model'\]"):
        minitorch.save({"model": model}, io.BytesIO())
    buf = io.BytesIO()  # what it says to do works
    minitorch.save(model.state_dict(), buf)
    buf.seek(0)
    fresh = minitorch.nn.Sequential(minitorch.nn.Linear(2, 3))
    fresh.load_state_dict(minitorch.load(buf, map_location="cpu", weights_only=True))
    x = minitorch.randn(4, 2)
    np.testing.assert_array_equal(fresh(x).detach().numpy(), model(x).detach().numpy())
