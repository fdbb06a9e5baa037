"""f(x) = sin(x)**2 + cos(x)**2: the seeds' example, compiled through the whole pipeline.

The identity sin²x + cos²x = 1 makes the result easy to check at every stage: the output is 1
everywhere, and the gradient, the derivative of a constant, is 0 everywhere.

    python examples/sincos.py                      # just run it
    python -m minitorch.compile examples/sincos.py # watch every stage of the compiler
"""

import minitorch as torch


def f(x):
    return torch.sin(x) ** 2 + torch.cos(x) ** 2


compiled_f = torch.compile(f)  # backend="inductor": Dynamo -> AOT autograd -> loop IR -> LLVM

torch.manual_seed(0)
x = torch.rand(1000, requires_grad=True)
out = compiled_f(x)
out.sum().backward()

ones = torch.ones(1000)
print("mean squared error of f(x) vs 1:", ((out - ones) ** 2).mean().item())
print("largest |df/dx|:", float(abs(x.grad.numpy()).max()))
