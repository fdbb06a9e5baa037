"""Every in-place op against its out-of-place twin at boundary values, eager and compiled.

An in-place op is its out-of-place op followed by a write ([Note: in-place ops] in
minitorch/inplace.py), so its values *and its derivative* must be the twin's, exactly, at the
points where derivatives are a convention: 0 (relu'(0) = 0, abs'(0) = 0), the bounds of a clamp
(where the gradient passes), -0.0, ties, infinities and NaN. `nn.ReLU(inplace=True)` once used
clamp_(min=0), whose derivative at 0 is 1: this file is the class of that bug.

The in-place methods are found on `Tensor` itself (names ending in `_`), so a new one fails
`test_every_in_place_method_has_samples` until it gets a row in SAMPLES.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import minitorch
from minitorch.nn import functional as F

INF, NAN = math.inf, math.nan
EDGES = [-2.0, -1.0, -0.0, 0.0, 0.5, 1.0, 2.0]  # 0 and the usual clamp bounds
# methods ending in `_` that are not in-place ops on the values
NOT_VALUE_WRITES = {"requires_grad_", "detach_"}


def _other(values):
    """A second operand that requires grad (its gradient is compared too)."""
    return minitorch.tensor(values, requires_grad=True)


def _twin(name: str):
    """The out-of-place method computing what `name` writes: x.mul_(y) ~ x.mul(y)."""
    return lambda t, *args, **kwargs: getattr(t, name[:-1])(*args, **kwargs)


def _filled(t, value):
    """Every element `value`, through where() so that t's gradient is a zero tensor."""
    return minitorch.where(minitorch.ones_like(t, dtype=minitorch.bool), value, t)


def _copied(t, src):
    return _filled(t, src.expand(*t.shape).to(t.dtype))


# name -> [(x's values, () -> (args, kwargs), out-of-place twin)]
SAMPLES = {
    "relu_": [(EDGES + [INF, -INF, NAN], lambda: ((), {}), _twin("relu_"))],
    "clamp_": [
        (EDGES, lambda: ((), {"min": 0.0, "max": 1.0}), _twin("clamp_")),
        (EDGES, lambda: ((), {"min": -0.0}), _twin("clamp_")),
        (EDGES, lambda: ((), {"max": 0.0}), _twin("clamp_")),
        (EDGES, lambda: ((), {"min": 0.5, "max": 0.5}), _twin("clamp_")),
        (EDGES, lambda: ((_other([0.0] * 7), _other([1.0] * 7)), {}), _twin("clamp_")),
    ],
    "add_": [
        (
            EDGES,
            lambda: ((_other([0.0, 1.0, 0.0, -0.0, INF, 2.0, -1.0]),), {"alpha": 2}),
            _twin("add_"),
        )
    ],
    "sub_": [
        (
            EDGES,
            lambda: ((_other([0.0, 1.0, 0.0, -0.0, 3.0, 2.0, -1.0]),), {"alpha": 0.5}),
            _twin("sub_"),
        )
    ],
    "mul_": [
        (EDGES, lambda: ((_other([0.0, 1.0, -0.0, INF, 2.0, 0.0, -1.0]),), {}), _twin("mul_")),
        (EDGES, lambda: ((0.0,), {}), _twin("mul_")),
    ],
    "div_": [
        (EDGES, lambda: ((_other([1.0, 0.0, -0.0, 2.0, INF, 0.5, -1.0]),), {}), _twin("div_"))
    ],
    "pow_": [
        (EDGES, lambda: ((2,), {}), _twin("pow_")),
        (EDGES, lambda: ((0.5,), {}), _twin("pow_")),
        (EDGES, lambda: ((0,), {}), _twin("pow_")),
        ([0.5, 1.0, 2.0], lambda: ((_other([0.0, 1.0, -1.0]),), {}), _twin("pow_")),
    ],
    "exp_": [(EDGES + [INF, -INF], lambda: ((), {}), _twin("exp_"))],
    "sqrt_": [(EDGES + [INF], lambda: ((), {}), _twin("sqrt_"))],
    "sigmoid_": [(EDGES + [INF, -INF, -100.0], lambda: ((), {}), _twin("sigmoid_"))],
    "tanh_": [(EDGES + [INF, -INF], lambda: ((), {}), _twin("tanh_"))],
    "neg_": [(EDGES + [INF], lambda: ((), {}), _twin("neg_"))],
    "abs_": [(EDGES + [-INF], lambda: ((), {}), _twin("abs_"))],
    "masked_fill_": [
        (
            EDGES,
            lambda: ((minitorch.tensor([True, False] * 3 + [True]), 0.0), {}),
            _twin("masked_fill_"),
        )
    ],
    "fill_": [
        (EDGES, lambda: ((0.0,), {}), _filled),
        (EDGES, lambda: ((_other(1.5),), {}), _filled),
    ],
    "zero_": [(EDGES, lambda: ((), {}), lambda t: _filled(t, 0.0))],
    "copy_": [(EDGES, lambda: ((_other([3.0]),), {}), _copied)],
    "index_put_": [
        (
            EDGES,
            lambda: (
                ((minitorch.tensor([0, 3, 3]),), _other([1.0, 2.0, 5.0])),
                {"accumulate": True},
            ),
            _twin("index_put_"),
        )
    ],
}

CASES = [
    pytest.param(name, i, id=f"{name}-{i}")
    for name, samples in SAMPLES.items()
    for i in range(len(samples))
]


def _in_place_methods() -> set[str]:
    return {
        n
        for n in dir(minitorch.Tensor)
        if n.endswith("_") and not n.startswith("_") and n not in NOT_VALUE_WRITES
    }


def _run(program, values, make_args, backend: str | None):
    """program(x * 1, *args) and the gradients of sum(w * it) of x and of each tensor arg."""
    x = minitorch.tensor(values, requires_grad=True)
    args, kwargs = make_args()
    fn = program if backend is None else minitorch.compile(program, backend=backend)
    out = fn(x, *args, **kwargs)
    weights = minitorch.arange(1, out.numel() + 1, dtype=out.dtype).reshape(out.shape)
    (out * weights).sum().backward()
    leaves = [x, *_tensors(args), *_tensors(kwargs.values())]
    return out.detach().numpy(), [_grad_or_zeros(t) for t in leaves]


def _tensors(args) -> list:
    found = []
    for a in args:
        if isinstance(a, tuple):
            found += _tensors(a)
        elif isinstance(a, minitorch.Tensor) and a.requires_grad:
            found.append(a)
    return found


def _grad_or_zeros(t) -> np.ndarray:
    """A leaf's gradient; none (no path reached it: fill_'s twin) counts as zeros."""
    return np.zeros(tuple(t.shape), np.float32) if t.grad is None else t.grad.numpy()


def _same(got, want, what: str) -> None:
    np.testing.assert_array_equal(got, want, err_msg=what)  # NaN equals NaN here
    zeros = want == 0
    np.testing.assert_array_equal(
        np.signbit(got[zeros]), np.signbit(want[zeros]), err_msg=f"{what}: the sign of a zero"
    )


def _in_place_program(name: str):
    def program(x, *args, **kwargs):
        t = x * 1
        getattr(t, name)(*args, **kwargs)
        return t

    return program


def _out_of_place_program(twin):
    def program(x, *args, **kwargs):
        return twin(x * 1, *args, **kwargs)

    return program


def test_every_in_place_method_has_samples():
    missing = _in_place_methods() - set(SAMPLES)
    assert not missing, f"in-place methods with no boundary samples here: {sorted(missing)}"


@pytest.mark.parametrize("name, index", CASES)
def test_in_place_matches_its_twin(name, index):
    values, make_args, twin = SAMPLES[name][index]
    want_out, want_grads = _run(_out_of_place_program(twin), values, make_args, None)
    got_out, got_grads = _run(_in_place_program(name), values, make_args, None)
    _same(got_out, want_out, f"{name}: values")
    for i, (got, want) in enumerate(zip(got_grads, want_grads)):
        _same(got, want, f"{name}: gradient of leaf {i}")


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("name, index", CASES)
def test_compiled_in_place_matches_eager(name, index, backend):
    values, make_args, _ = SAMPLES[name][index]
    program = _in_place_program(name)
    want_out, want_grads = _run(program, values, make_args, None)
    got_out, got_grads = _run(program, values, make_args, backend)
    _same(got_out, want_out, f"{name} ({backend}): values")
    for i, (got, want) in enumerate(zip(got_grads, want_grads)):
        _same(got, want, f"{name} ({backend}): gradient of leaf {i}")


# ---- nn.functional's inplace=True ---------------------------------------------------------

FUNCTIONS = {
    "relu": {},
    "leaky_relu": {"negative_slope": 0.2},
    "elu": {"alpha": 1.5},
    "silu": {},
    "dropout": {"p": 0.0},
    "dropout p=1": {"p": 1.0},
}


def test_every_inplace_function_has_samples():
    takes_inplace = {
        name
        for name, fn in vars(F).items()
        if inspect.isfunction(fn)
        and not name.startswith("_")
        and "inplace" in inspect.signature(fn).parameters
    }
    covered = {name.split()[0] for name in FUNCTIONS}
    assert takes_inplace <= covered, sorted(takes_inplace - covered)


@pytest.mark.parametrize("backend", [None, "eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("case", FUNCTIONS)
def test_inplace_function_matches_out_of_place(case, backend):
    fn, kwargs = getattr(F, case.split()[0]), FUNCTIONS[case]
    values = EDGES + [INF, -INF, NAN]

    def in_place(x):
        return fn(x * 1, inplace=True, **kwargs)

    def out_of_place(x):
        return fn(x * 1, **kwargs)

    want_out, want_grads = _run(out_of_place, values, lambda: ((), {}), None)
    got_out, got_grads = _run(in_place, values, lambda: ((), {}), backend)
    _same(got_out, want_out, f"{case}: values")
    _same(got_grads[0], want_grads[0], f"{case}: gradient")


def test_relu_inplace_gradient_at_zero_is_zero():
    """The fuzzer's case, against PyTorch's documented relu'(0) = 0."""
    x = minitorch.tensor([-1.0, 0.0, 2.0, 0.0], requires_grad=True)
    minitorch.nn.ReLU(inplace=True)(x * 1).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0, 0.0]


def test_setitem_matches_index_scatter_twin():
    """x[1:3] = v at boundary values: the gradient of x's written region is 0, v's is the
    region's incoming gradient."""
    values = minitorch.tensor([-0.0, 0.0, 1.0, INF], requires_grad=True)
    v = minitorch.tensor([2.0, -0.0], requires_grad=True)
    t = values * 1
    t[1:3] = v
    (t * minitorch.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert values.grad.tolist() == [1.0, 0.0, 0.0, 4.0]
    assert v.grad.tolist() == [2.0, 3.0]
