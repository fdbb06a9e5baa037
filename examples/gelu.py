"""GELU, the activation of GPT and BERT, compiled: forward and backward, each one fused kernel.

gelu(x) = x * Φ(x), Φ the normal distribution's CDF, 0.5 * (1 + erf(x / √2)). Its derivative
Φ(x) + x * φ(x) is another pointwise formula, so AOT autograd's backward graph fuses into one
kernel too. numpy's own formula, computed in float64, checks both.

    python examples/gelu.py                                          # just run it
    python -m minitorch.compile examples/gelu.py                     # every stage, on the CPU
    python -m minitorch.compile examples/gelu.py --device cuda --stage ptx   # the GPU's kernels
"""

import math

import numpy as np

import minitorch as torch
import minitorch.nn.functional as F


def gelu(x):
    return F.gelu(x)


compiled_gelu = torch.compile(gelu)

torch.manual_seed(0)
x = torch.randn(4096, requires_grad=True)
out = compiled_gelu(x)
out.sum().backward()

z = x.detach().numpy().astype(np.float64)
cdf = 0.5 * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
pdf = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
print("largest |gelu(x) - x Φ(x)|:", float(np.abs(out.detach().numpy() - z * cdf).max()))
print("largest |d gelu/dx - (Φ + x φ)|:", float(np.abs(x.grad.numpy() - (cdf + z * pdf)).max()))
