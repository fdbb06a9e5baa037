"""The workloads of `make bench` (benchmarks/bench.py): each one program, written once.

Each program is written against a library passed in as `torch`, so the same lines run on
minitorch and, when it is installed, on PyTorch, eager or compiled:

    f = SINCOS.program(minitorch)           # def f(x): return torch.sin(x) ** 2 + ...
    run, observe = SINCOS.implementation(minitorch, compiled=True, arrays=SINCOS.inputs(rng))
    observe(run())                          # the result as numpy arrays, to compare

and once more in numpy (`SINCOS.numpy_implementation(arrays)`), by hand: the baseline a reader
would write without a framework. The training step's numpy side is a hand-written forward,
backward and SGD update of the same MLP.

`tiny=True` gives every workload small inputs, for the tests (tests/test_bench.py): the same
programs, checked for the same values and compiled whole, in a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import Any

import numpy as np

# An implementation: `run` is what is timed; `observe(run())` is its result as numpy arrays.
Implementation = tuple[Callable[[], Any], Callable[[Any], list[np.ndarray]]]


def _as_arrays(out: Any) -> list[np.ndarray]:
    """A tensor of either library, or a numpy array, as [numpy array]."""
    return [np.array(out.detach().numpy() if hasattr(out, "detach") else out)]


@dataclass(frozen=True)
class FunctionWorkload:
    """A function of tensors: its value is the workload's result."""

    name: str  # the name --only takes
    title: str  # the table's row
    threshold: float  # the acceptance: torch.compile's time / ours at least this
    program: Callable[[ModuleType], Callable]  # program(torch) -> the function, in `torch`
    numpy_program: Callable[..., np.ndarray]  # the same function in numpy
    make_inputs: Callable[[np.random.Generator, bool], list[np.ndarray]]  # (rng, tiny)

    def inputs(self, rng: np.random.Generator, tiny: bool = False) -> list[np.ndarray]:
        return self.make_inputs(rng, tiny)

    def implementation(
        self, torch: ModuleType, compiled: bool, arrays: list[np.ndarray]
    ) -> Implementation:
        fn = self.program(torch)
        fn = torch.compile(fn) if compiled else fn
        return partial(fn, *self.tensors(torch, arrays)), _as_arrays

    def numpy_implementation(self, arrays: list[np.ndarray]) -> Implementation:
        return partial(self.numpy_program, *arrays), _as_arrays

    def tensors(self, torch: ModuleType, arrays: list[np.ndarray]) -> list:
        # NOTE: copies, so that no two implementations share (and could change) one buffer
        return [torch.from_numpy(a.copy()) for a in arrays]

    def explain_target(self, torch: ModuleType, arrays: list[np.ndarray]) -> tuple:
        """(fn, args): what `explain` captures to show that the workload compiles whole."""
        return self.program(torch), self.tensors(torch, arrays)


def _vector(rng: np.random.Generator, tiny: bool, scale: float = 1.0) -> list[np.ndarray]:
    n = 1000 if tiny else 10_000_000
    return [(rng.standard_normal(n) * scale).astype(np.float32)]


def _rows(rng: np.random.Generator, tiny: bool, columns: int) -> list[np.ndarray]:
    shape = (8, 32) if tiny else (4096, columns)
    return [rng.standard_normal(shape).astype(np.float32)]


# sin(x)**2 + cos(x)**2: pointwise, transcendental; the copy floor is its bound.
def sincos(torch: ModuleType) -> Callable:
    def f(x):
        return torch.sin(x) ** 2 + torch.cos(x) ** 2

    return f


def sincos_numpy(a: np.ndarray) -> np.ndarray:
    return np.sin(a) ** 2 + np.cos(a) ** 2


# GELU in its tanh form, as GPT-2 writes it: seven pointwise ops and a tanh.
def gelu(torch: ModuleType) -> Callable:
    def f(x):
        return 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))

    return f


def gelu_numpy(a: np.ndarray) -> np.ndarray:
    return 0.5 * a * (1 + np.tanh(0.7978845608 * (a + 0.044715 * a * a * a)))


# Row softmax with `max(dim)[0]`, as attention code writes it: two reductions per row.
def softmax(torch: ModuleType) -> Callable:
    def f(x):
        m = x.max(dim=1, keepdim=True)[0]
        e = torch.exp(x - m)
        return e / e.sum(dim=1, keepdim=True)

    return f


def softmax_numpy(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layer_norm(torch: ModuleType) -> Callable:
    def f(x, weight, bias):
        return torch.nn.functional.layer_norm(x, (x.shape[-1],), weight, bias)

    return f


def layer_norm_numpy(a: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = a.mean(axis=-1, keepdims=True)
    var = a.var(axis=-1, keepdims=True)  # biased, as layer_norm's
    return (a - mean) / np.sqrt(var + np.float32(1e-5)) * weight + bias


def _layer_norm_inputs(rng: np.random.Generator, tiny: bool) -> list[np.ndarray]:
    (x,) = _rows(rng, tiny, 1024)
    weight, bias = rng.standard_normal((2, x.shape[-1])).astype(np.float32)
    return [x, weight, bias]


def sum_of_squares(torch: ModuleType) -> Callable:
    def f(x):
        return (x * x).sum()

    return f


def sum_of_squares_numpy(a: np.ndarray) -> np.ndarray:
    return (a * a).sum()


# Ten pointwise ops on 16 elements: every microsecond is the call's overhead, not arithmetic.
def chain(torch: ModuleType) -> Callable:
    def f(x):
        for _ in range(5):
            x = x * 2.0
            x = x + 1.0
        return x

    return f


def chain_numpy(a: np.ndarray) -> np.ndarray:
    for _ in range(5):
        a = a * np.float32(2.0)
        a = a + np.float32(1.0)
    return a


SINCOS = FunctionWorkload(
    "sincos", "sincos 1e7", 3.0, sincos, sincos_numpy, partial(_vector, scale=30.0)
)
GELU = FunctionWorkload("gelu", "gelu (tanh form) 1e7", 2.5, gelu, gelu_numpy, _vector)
SOFTMAX = FunctionWorkload(
    "softmax", "row softmax 4096x4096", 1.5, softmax, softmax_numpy, partial(_rows, columns=4096)
)
LAYER_NORM = FunctionWorkload(
    "layernorm", "layernorm 4096x1024", 1.2, layer_norm, layer_norm_numpy, _layer_norm_inputs
)
SUM_OF_SQUARES = FunctionWorkload(
    "sumsq", "sum of squares 1e7", 1.2, sum_of_squares, sum_of_squares_numpy, _vector
)
CHAIN = FunctionWorkload(
    "chain",
    "10 pointwise ops on 16 elements",
    1.5,
    chain,
    chain_numpy,
    lambda rng, tiny: [rng.standard_normal(16).astype(np.float32)],
)


# [Note: the training step's three sides]
# The step is PyTorch's: `opt.zero_grad(); loss_fn(x, y).backward(); opt.step()`, where only
# `loss_fn` (forward and cross-entropy; AOT autograd derives its backward) is compiled and the
# optimizer is the same eager code compiled or not. Every side starts from the same weights,
# so the first step's loss and gradients must agree; the timed calls then keep training on one
# batch. The numpy side is what a reader would write by hand: the forward keeping each layer's
# input, the gradient of the mean cross-entropy (softmax minus one-hot, over the batch), the
# layers walked backwards, and `p -= lr * grad`.
LEARNING_RATE = 0.01


def mlp(torch: ModuleType, params: list) -> Any:
    """Linear, ReLU, ..., Linear with the given (weight, bias) tensors as its parameters."""
    layers = []
    for weight, bias in zip(params[::2], params[1::2]):
        linear = torch.nn.Linear(weight.shape[1], weight.shape[0])
        linear.weight = torch.nn.Parameter(weight)
        linear.bias = torch.nn.Parameter(bias)
        layers += [linear, torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1])


def mlp_loss_and_grads(
    x: np.ndarray, y: np.ndarray, params: list[np.ndarray]
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The mean cross-entropy of the MLP on (x, y) and its gradient for each parameter."""
    weights, biases = params[::2], params[1::2]
    inputs = [x]  # each layer's input: x, then each hidden ReLU's output
    for weight, bias in zip(weights[:-1], biases[:-1]):
        inputs.append(np.maximum(inputs[-1] @ weight.T + bias, 0))
    logits = inputs[-1] @ weights[-1].T + biases[-1]  # (B, classes)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    rows = np.arange(len(y))
    loss = -log_probs[rows, y].mean()
    grad = np.exp(log_probs)  # d loss / d logits = (softmax - one-hot) / B
    grad[rows, y] -= 1
    grad /= len(y)
    grads: list[np.ndarray] = []
    for i in reversed(range(len(weights))):
        grads[:0] = [grad.T @ inputs[i], grad.sum(axis=0)]
        if i:  # through the layer, then through the ReLU that made its input
            grad = (grad @ weights[i]) * (inputs[i] > 0)
    return loss, grads


@dataclass(frozen=True)
class TrainStepWorkload:
    """One SGD step of an MLP classifier: its loss and the gradients it leaves are its result."""

    name: str
    title: str
    threshold: float

    def inputs(self, rng: np.random.Generator, tiny: bool = False) -> list[np.ndarray]:
        """[x, y (int64 labels), weight, bias, weight, bias, ...], nn.Linear's initialization."""
        widths, batch = ((12, 8, 8, 4), 6) if tiny else ((784, 256, 256, 10), 256)
        params = []
        for fan_in, fan_out in zip(widths, widths[1:]):
            bound = 1 / np.sqrt(fan_in)
            params += [
                rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                rng.uniform(-bound, bound, fan_out).astype(np.float32),
            ]
        x = rng.standard_normal((batch, widths[0])).astype(np.float32)
        return [x, rng.integers(0, widths[-1], batch), *params]

    def implementation(
        self, torch: ModuleType, compiled: bool, arrays: list[np.ndarray]
    ) -> Implementation:
        loss_fn, (x, y), model = self._loss_fn(torch, arrays)
        loss_fn = torch.compile(loss_fn) if compiled else loss_fn
        optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)

        def step():
            optimizer.zero_grad()
            loss = loss_fn(x, y)
            loss.backward()
            optimizer.step()
            return loss

        def observe(loss) -> list[np.ndarray]:
            return _as_arrays(loss) + [p.grad.numpy().copy() for p in model.parameters()]

        return step, observe

    def numpy_implementation(self, arrays: list[np.ndarray]) -> Implementation:
        x, y, *params = [a.copy() for a in arrays]

        def step():
            loss, grads = mlp_loss_and_grads(x, y, params)
            for param, grad in zip(params, grads):
                param -= LEARNING_RATE * grad
            return loss, grads

        return step, lambda out: [np.array(out[0]), *out[1]]

    def explain_target(self, torch: ModuleType, arrays: list[np.ndarray]) -> tuple:
        loss_fn, batch, _ = self._loss_fn(torch, arrays)
        return loss_fn, batch

    def _loss_fn(self, torch: ModuleType, arrays: list[np.ndarray]) -> tuple:
        x, y, *params = [torch.from_numpy(a.copy()) for a in arrays]
        model = mlp(torch, params)

        def loss_fn(x, y):
            return torch.nn.functional.cross_entropy(model(x), y)

        return loss_fn, (x, y), model


Workload = FunctionWorkload | TrainStepWorkload

MLP_STEP = TrainStepWorkload("mlp", "MLP train step 784-256-256-10, batch 256", 1.0)

WORKLOADS = [SINCOS, GELU, SOFTMAX, LAYER_NORM, SUM_OF_SQUARES, MLP_STEP, CHAIN]  # issue's order
