"""The CUDA backend on a GPU: graphs compiled for "cuda" against eager mode on "cuda".

Every test here needs a GPU and cupy, and is skipped without them (test_backend.py runs the
same wrapper and launches on the host). Where a GPU is lent, run these with

    pytest tests/codegen/cuda tests/minitorch/test_op_table.py   # the eager op table on cuda too
    pytest tests/conformance --backend cuda                      # the kernels, graded
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch import _logging, nn
from minitorch.errors import IndexOutOfRangeError
from tracer.dynamo import fallback_reasons

pytestmark = pytest.mark.skipif(
    not minitorch.cuda.is_available(), reason="needs a CUDA GPU and cupy (launches are cupy's)"
)


def sincos(x):
    return x.sin() ** 2 + x.cos() ** 2


def softmax(x):
    return minitorch.softmax(x, dim=-1)


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b)


def linear_gelu(x, w):
    return F.gelu(x @ w).sum(dim=0)  # the matmul an extern step: cupy's, cuBLAS


CASES = [
    (sincos, [(1000,)]),
    (softmax, [(64, 300)]),
    (layer_norm, [(32, 128), (128,), (128,)]),
    (linear_gelu, [(16, 8), (8, 4)]),
]


def _on_gpu(shapes: list[tuple[int, ...]], seed: int = 0) -> list[minitorch.Tensor]:
    rng = np.random.default_rng(seed)
    return [
        minitorch.tensor(
            rng.standard_normal(s).astype(np.float32), device="cuda", requires_grad=True
        )
        for s in shapes
    ]


@pytest.mark.parametrize("fn, shapes", CASES, ids=[f.__name__ for f, _ in CASES])
def test_compiled_on_the_gpu_matches_eager_on_the_gpu(fn, shapes):
    eager_in, compiled_in = _on_gpu(shapes), _on_gpu(shapes)
    with _logging.Recorder() as rec:
        out = minitorch.compile(fn)(*compiled_in)
    expected = fn(*eager_in)
    assert out.is_cuda and out.dtype is expected.dtype and out.shape == expected.shape
    np.testing.assert_allclose(
        out.detach().cpu().numpy(), expected.detach().cpu().numpy(), rtol=1e-5, atol=1e-5
    )
    out.pow(2).sum().backward()
    expected.pow(2).sum().backward()
    for got, want in zip(compiled_in, eager_in, strict=True):
        assert got.grad.is_cuda
        np.testing.assert_allclose(
            got.grad.cpu().numpy(), want.grad.cpu().numpy(), rtol=1e-4, atol=1e-5
        )
    assert fallback_reasons(fn) == []
    titles = [a.title for a in rec.artifacts if a.stage == "kernels"]
    assert titles and all(" cuda kernel(s)" in t for t in titles), titles


def test_sizes_as_arguments_on_the_gpu():
    compiled = minitorch.compile(softmax, dynamic=True)
    for rows in (3, 17, 1000):
        (x,) = _on_gpu([(rows, 40)], seed=rows)
        np.testing.assert_allclose(
            compiled(x).detach().cpu().numpy(),
            softmax(x).detach().cpu().numpy(),
            rtol=1e-5,
            atol=1e-7,
        )


def test_an_index_out_of_bounds_is_raised_from_the_gpu():
    compiled = minitorch.compile(lambda x, i: x[i] * 2)
    x = minitorch.randn(4, device="cuda")
    good = minitorch.tensor([3, 0], device="cuda")
    np.testing.assert_array_equal(compiled(x, good).cpu().numpy(), (x[good] * 2).cpu().numpy())
    with pytest.raises(IndexOutOfRangeError, match="out of bounds"):
        compiled(x, minitorch.tensor([7, 0], device="cuda"))


def test_a_model_trains_on_the_gpu_as_in_eager_mode():
    minitorch.manual_seed(0)
    eager = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1)).to("cuda")
    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1)).to("cuda")
    model.load_state_dict(eager.state_dict())
    step = minitorch.compile(model)
    x, y = minitorch.randn(32, 6, device="cuda"), minitorch.randn(32, 1, device="cuda")
    for net, run in ((eager, eager), (model, step)):
        optimizer = minitorch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(3):
            optimizer.zero_grad()
            F.mse_loss(run(x), y).backward()
            optimizer.step()
    for got, want in zip(model.parameters(), eager.parameters(), strict=True):
        assert got.is_cuda
        np.testing.assert_allclose(
            got.detach().cpu().numpy(), want.detach().cpu().numpy(), rtol=1e-5, atol=1e-6
        )
