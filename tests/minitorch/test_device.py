"""Devices: "cpu" always; "cuda" through cupy, or a clear error saying what is missing."""

import numpy as np
import pytest

import minitorch
from minitorch.device import cuda_is_available

needs_cuda = pytest.mark.skipif(not cuda_is_available(), reason="no cupy or no CUDA device")


def test_cpu_tensors_say_so():
    x = minitorch.ones(2)
    assert x.device == "cpu" and x.device == minitorch.device("cpu") and not x.is_cuda
    assert x.to("cpu") is x and x.cpu() is x
    assert repr(minitorch.device("cuda:0")) == "device(type='cuda')"


@pytest.mark.skipif(cuda_is_available(), reason="this machine has a GPU")
@pytest.mark.parametrize(
    "make",
    [
        lambda: minitorch.ones(2).cuda(),
        lambda: minitorch.ones(2).to("cuda"),
        lambda: minitorch.zeros(3, device="cuda"),
        lambda: minitorch.tensor([1.0], device="cuda"),
    ],
)
def test_without_a_gpu_cuda_is_a_clear_device_error(make):
    with pytest.raises(minitorch.DeviceError, match="'cuda' is not available: (cupy|no CUDA)"):
        make()


def test_unknown_devices_are_refused():
    with pytest.raises(minitorch.MinitorchError, match="unknown device 'tpu'"):
        minitorch.device("tpu")


def test_to_converts_dtypes_differentiably():
    x = minitorch.tensor([1.5, -2.0], requires_grad=True)
    y = x.to(minitorch.float64)
    assert y.dtype is minitorch.float64 and y.grad_fn is not None
    (y * y).sum().backward()
    assert x.grad.dtype is minitorch.float32
    np.testing.assert_allclose(x.grad.numpy(), [3.0, -4.0])
    assert x.long().tolist() == [1, -2] and x.double().dtype is minitorch.float64


@needs_cuda
def test_cuda_round_trip_and_ops():
    x = minitorch.rand(4, 3)
    y = x.cuda()
    assert y.is_cuda and (y + 1).is_cuda
    np.testing.assert_allclose(
        (minitorch.sin(y) * 2).cpu().numpy(), np.sin(x.numpy()) * 2, rtol=1e-6
    )
