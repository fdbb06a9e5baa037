"""The whole compiler on the backend: train a small model compiled with it, as a user would.

`minitorch.compile(model, backend=NAME)` captures the model's forward and loss, AOT autograd
makes the forward and backward graphs, and every fused kernel of both is compiled by the
backend named. Five steps of SGD must give eager mode's losses and parameters, with every
warning an error, no frame left to run eagerly, and no graph break.
"""

from __future__ import annotations

import warnings

import numpy as np

import minitorch
import minitorch.nn.functional as F
from codegen.backend import Backend
from minitorch import nn
from tracer.dynamo import cache_entries, fallback_reasons

STEPS = 5
RTOL = 1e-5  # float32; the kernels' own rounding, over a few steps of training


class Regression(nn.Module):
    """A 2-layer MLP and its mean squared error: forward returns the loss."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(3, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, x: minitorch.Tensor, y: minitorch.Tensor) -> minitorch.Tensor:
        h = minitorch.tanh(self.hidden(x))  # (16, 8)
        prediction = minitorch.sigmoid(self.out(h)) * 2.0 - 1.0  # (16, 1), in (-1, 1)
        return F.mse_loss(prediction, y)


def _data(device: str) -> tuple[minitorch.Tensor, minitorch.Tensor]:
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (16, 3)).astype(np.float32)
    y = np.sin(x.sum(axis=1, keepdims=True)).astype(np.float32)  # (16, 1)
    return minitorch.from_numpy(x).to(device), minitorch.from_numpy(y).to(device)


def _train(model: nn.Module, step, device: str = "cpu") -> list[float]:
    optimizer = minitorch.optim.SGD(model.parameters(), lr=0.5)
    x, y = _data(device)
    losses = []
    for _ in range(STEPS):
        optimizer.zero_grad()
        loss = step(x, y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_compile_and_train_a_small_model(backend: Backend, monkeypatch):
    minitorch.manual_seed(0)
    eager = Regression()
    compiled = Regression()
    compiled.load_state_dict(eager.state_dict())
    compiled.to(backend.device)  # the CUDA backend compiles for tensors on the GPU

    compiles = []  # the kernels the backend was asked for
    original = backend.compile_kernels  # each graph's kernels (by default, compile_kernel's)

    def counting(kernels, sizes=()):
        compiles.extend(kernel.name for kernel, _ in kernels)
        return original(kernels, sizes)

    monkeypatch.setattr(backend, "compile_kernels", counting)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        step = minitorch.compile(compiled, backend=backend.name)
        compiled_losses = _train(compiled, step, backend.device)
    eager_losses = _train(eager, eager)

    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=RTOL)
    assert eager_losses[-1] < eager_losses[0]  # it learns, so the steps are not all the same
    for (name, got), (_, want) in zip(
        compiled.named_parameters(), eager.named_parameters(), strict=True
    ):
        np.testing.assert_allclose(got.detach().cpu().numpy(), want.detach().numpy(), rtol=RTOL,
                                   atol=RTOL, err_msg=name)  # fmt: skip
    assert compiles, f"minitorch.compile(backend={backend.name!r}) never used the backend"
    assert fallback_reasons(compiled.forward) == []
    (entry,) = cache_entries(compiled.forward)  # one capture, reused by every step
    assert entry.graph_breaks == []
