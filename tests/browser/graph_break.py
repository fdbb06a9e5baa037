"""A program with a graph break, for the report's browser test: `sin(x) ** 2` is captured,
the branch on a tensor's value breaks the graph, and `cos(y)` is captured after it."""

import minitorch as torch


def f(x):
    y = torch.sin(x) ** 2
    if y.sum() > 0:  # a branch on a tensor's value: the graph breaks here
        y = y + 1
    return torch.cos(y) * 3


x = torch.rand(16, requires_grad=True)
torch.compile(f)(x).sum().backward()
print("gradient norm:", float((x.grad * x.grad).sum()))
