"""The functions of the capture corpus (test_corpus.py runs them), grouped by category."""

from __future__ import annotations

import functools
import math

import numpy as np

import minitorch
from minitorch import nn

# ---- straight-line code and Python arguments -------------------------------------------------


def straight_line(x, y):
    a = x.sin() * 2 + y
    return (a - y).cos(), a.sum(0)


def bool_arg(x, flag):
    return x + 1 if flag else x - 1


def int_arg(x, n):
    return x * n + n


def math_and_builtins(x, ys):
    n = len(ys) + max(2, 3) + min(1.5, 4)
    return x * math.pi + n, isinstance(x, minitorch.Tensor)


# ---- branches --------------------------------------------------------------------------------


def tensor_branch(x):
    if x.sum() > 0:
        return x + 1
    return x - 1


def and_or(x, y):
    if x.sum() > 0 and y.sum() > 0:
        return x + y
    if x.sum() < 0 or y.sum() > 0:
        return x - y
    return x * y


def three_in_a_row(x):
    x = x + 1 if x.sum() > 0 else x - 1
    x = x * 2 if x.sum() > 3 else x * 3
    x = x.sin() if x.sum() > 6 else x.cos()
    return x


def shape_branch(x):
    if x.shape[0] > 2:
        return x.sum(0)
    return x * 2


def dim_branch(x):
    return x.sum(1) if x.dim() == 2 else x + 1


def dtype_branch(x):
    return x * 2 if x.dtype == minitorch.float32 else x + 1


# ---- loops -----------------------------------------------------------------------------------


def range_loop(x):
    for i in range(3):
        x = x * 2 + i
    return x


def list_loop(x, ys):
    for i, y in enumerate(ys):
        x = x + y * i
    for a, b in zip(ys, ys[1:]):
        x = x + a * b
    return x


def dict_loop(x, d):
    for k, v in d.items():
        x = x + v * len(k)
    return x


# ---- calls that cannot be traced -----------------------------------------------------------


def print_start(x):
    print("start")
    return x * 2


def print_middle(x):
    y = x.sin()
    print("middle")
    return y.cos()


def print_in_loop(x):
    for i in range(2):
        print("loop", i)  # a break inside a loop body: the frame runs eagerly (for now)
        x = x + i
    return x


def numpy_kwargs(x):
    a = x * 2
    b = np.full(x.shape, 3.0, dtype=np.float32)
    return a + minitorch.from_numpy(b)


def opaque(n, *, scale):
    print(end="")  # not traceable: the call of opaque breaks
    return n * scale


def values_on_stack(x):
    return x * 3 + opaque(2, scale=x.shape[0])


def item_call(x):
    a = x * 2
    return a + a.sum().item()


# ---- with blocks, closures, nested functions, arguments ------------------------------------


def no_grad_break(x):
    with minitorch.no_grad():
        print("", end="")  # a break: the resume function enters the block again
        y = x * 2
    return y + x


def make_closure(scale):
    def f(x):
        y = x * scale
        if y.sum() > 0:
            return y + scale
        return y - scale

    return f


def helper(x, k=2):
    return x.sin() * k


def calls_helper(x):
    return helper(x) + helper(x, k=3)


def nested_def(x):
    def inner(y, k=2):  # MAKE_FUNCTION with defaults: inlined where it is called
        return y * k

    return inner(x) + inner(x, k=3)


def nested_closure(x, s):
    def inner(y):  # a closure over the cell `s`: read when inner is called
        return y * s

    a = inner(x)
    s = s + 1
    return a, inner(x) + (lambda z: z - s)(x)


def defaults_kwonly(x, k=2, *, bias=1.0):
    return x * k + bias


scaled = functools.partial(helper, k=4)


def calls_partial(x):
    return scaled(x) + 1


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return x * self.k


SCALER = Scaler(3.0)


def calls_bound_method(x):
    return SCALER.apply(x) + 1


# ---- globals -------------------------------------------------------------------------------

W = minitorch.ones(3)
FLAG = True


def uses_global_tensor(x):
    return x * W


def uses_global_flag(x):
    return x + 1 if FLAG else x - 1


# ---- modules -------------------------------------------------------------------------------


class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = 2.0
        self.lin = nn.Linear(3, 2)

    def forward(self, x):
        y = self.lin(x) * self.scale
        return y.relu() if self.training else y.sigmoid()


# ---- in-place ops and aliasing -------------------------------------------------------------


def in_place(x):
    x.add_(1)  # mutates the caller's tensor: eager and compiled inputs must end up equal
    return x * 2


def in_place_intermediate(x):
    y = x * 1
    y.add_(2)  # y is the graph's own tensor: recorded as y = y + 2
    y.mul_(x).clamp_(min=2.5)
    return y


def augmented(x):
    y = x * 1
    y += 2
    y *= x
    x += y  # an input: written back into the caller's tensor
    return y


class Counter:
    def __init__(self):
        self.count = 0

    def bump(self, x):
        self.count += 1
        self.last = x
        return x * self.count


def side_effects(x, out, d, counter):
    y = counter.bump(x.sin())
    out.append(y)
    d["y"] = y * 2
    out.insert(0, d["y"] + counter.count)  # reads see the writes made earlier in the trace
    return out[0] + counter.last


def input_add_then_read(x, y):
    x.add_(y)
    x *= 2
    return x + y, x


def aliasing(x, y):
    return x * 2 + y


# ---- containers ----------------------------------------------------------------------------


def list_comp(x):
    return [x * i for i in range(3)]


def comp_over_tensors(xs):
    return sum([y.sin() for y in xs])


def generator_expr(x):
    return sum(x * i for i in range(3))


def dict_comp(x):
    return {f"k{i}": x + i for i in range(2)}


def nested_comp(x, d):
    pairs = [(k, [x * v + i for i in range(v)]) for k, v in d.items() if k in d]
    return {k: sum([len(p) for p in ps]) for k, ps in pairs}, [p for _, ps in pairs for p in ps]


def slicing(x):
    return x[1:], x[:, 0], x[::2, 1:], x[-1]


def starred(xs):
    first, *rest = xs
    (a, (b, c)) = first, rest
    return a + b * c, [*rest, a]


def seed_shape(x):
    bsz, *sizes = x.shape
    return x.reshape(bsz, -1).sum(1) * len(sizes)


def list_in_out(xs):
    return [xs[0] + xs[1], xs[-1].sin()]


def dict_in(d):
    return d["a"] * d["b"]


def dict_out(x):
    return {"double": x * 2, "neg": -x}


def dict_mutate(x, d):
    out = {"x": x, **d}
    out["y"] = out["x"] + out["a"]
    out.update({"n": len(out)})
    keys = [k for k in out if k != "n"]
    return out, keys, "y" in out, out.get("z", 0)


def dict_across_break(x):
    d = {"s": x.sin(), "n": 3}
    print(end="")  # a graph break: d is rebuilt by the transformed code, passed on
    return d["s"] * d["n"], d


def shape_seq(x):
    return x.sum(0) * x.shape[0]
