"""Layer normalization, compiled: each row's mean, variance and normalized values in one kernel.

layer_norm(x)[i] = (x[i] - mean_i) / sqrt(var_i + eps) * weight + bias, over each row of x.
The forward's main kernel runs loops over each row (two reductions, then the normalized row);
weight and bias are applied by a pointwise kernel after it. The backward computes the
gradients of x, of weight and of bias, the last two sums over the rows (down the columns, not
along them: [Note: reductions across outputs] in codegen/llvm/kernel.py). numpy's formulas,
in float64, check all of them.

    python examples/layernorm.py                                          # just run it
    python -m minitorch.compile examples/layernorm.py                     # every stage
    python -m minitorch.compile examples/layernorm.py --device cuda --stage ptx  # the GPU's
"""

import numpy as np

import minitorch as torch
import minitorch.nn.functional as F

ROWS, COLUMNS, EPS = 32, 128, 1e-5


def layer_norm(x, weight, bias):
    return F.layer_norm(x, (COLUMNS,), weight, bias, eps=EPS)


compiled_layer_norm = torch.compile(layer_norm)

torch.manual_seed(0)
x = torch.randn(ROWS, COLUMNS, requires_grad=True)
weight = (torch.rand(COLUMNS) + 0.5).requires_grad_()
bias = torch.randn(COLUMNS, requires_grad=True)
out = compiled_layer_norm(x, weight, bias)
out.pow(2).sum().backward()

z, w = x.detach().numpy().astype(np.float64), weight.detach().numpy().astype(np.float64)
normal = (z - z.mean(axis=1, keepdims=True)) / np.sqrt(z.var(axis=1, keepdims=True) + EPS)
expected = normal * w + bias.detach().numpy()
g = 2 * expected  # d(out²)/d out
g_normal = g * w
g_x = (
    g_normal
    - g_normal.mean(axis=1, keepdims=True)
    - normal * (g_normal * normal).mean(axis=1, keepdims=True)
)
g_x /= np.sqrt(z.var(axis=1, keepdims=True) + EPS)
print("largest |layer_norm - numpy's|:", float(np.abs(out.detach().numpy() - expected).max()))
print("largest |x.grad - numpy's|:", float(np.abs(x.grad.numpy() - g_x).max()))
print(
    "largest |weight.grad - numpy's|:",
    float(np.abs(weight.grad.numpy() - (g * normal).sum(axis=0)).max()),
)
print("largest |bias.grad - numpy's|:", float(np.abs(bias.grad.numpy() - g.sum(axis=0)).max()))
