"""Row softmax, compiled: one kernel of three loops over each row, forward and backward.

softmax(x)[i, j] = exp(x[i, j] - m_i) / Σ_k exp(x[i, k] - m_i), with m_i the row's max (which
changes nothing mathematically and keeps exp from overflowing). The scheduler fuses the max,
the sum and the division into one kernel that reads each row while it is in the cache
([Note: fusion] in ir/scheduler.py); on the GPU a block of threads shares each row. The
backward, y * (g - Σ_k g_k y_k), is a reduction and a pointwise step: one kernel again.

    python examples/softmax.py                                          # just run it
    python -m minitorch.compile examples/softmax.py                     # every stage
    python -m minitorch.compile examples/softmax.py --device cuda --stage ptx   # the GPU's
"""

import numpy as np

import minitorch as torch


def softmax(x):
    return torch.softmax(x, dim=-1)


compiled_softmax = torch.compile(softmax)

torch.manual_seed(0)
x = torch.randn(64, 256, requires_grad=True)
weights = torch.randn(64, 256)
out = compiled_softmax(x)
(out * weights).sum().backward()

z = x.detach().numpy().astype(np.float64)
expected = np.exp(z - z.max(axis=1, keepdims=True))
expected /= expected.sum(axis=1, keepdims=True)
g = weights.numpy().astype(np.float64)
expected_grad = expected * (g - (g * expected).sum(axis=1, keepdims=True))
print("largest |rows sum - 1|:", float(np.abs(out.detach().numpy().sum(axis=1) - 1).max()))
print("largest |softmax - numpy's|:", float(np.abs(out.detach().numpy() - expected).max()))
print("largest |grad - numpy's|:", float(np.abs(x.grad.numpy() - expected_grad).max()))
