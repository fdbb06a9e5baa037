"""A training step of real model code, compiled against eager: the models the compiler is for.

    python benchmarks/train_step.py [--models mlp gpt ...] [--repeat 5] [--min-time 0.2]

Each workload is model code written as its public original is: an MLP classifier with
`cross_entropy` over int64 labels; pytorch/examples' MNIST convnet (`max_pool2d`, dropout,
`log_softmax`, `nll_loss`); the GPT of examples/gpt.py; the residual convnet of examples/cnn.py
(torchvision's BasicBlock: BatchNorm in training, `ReLU(inplace=True)`, `out += identity`,
`AdaptiveAvgPool2d`); and attention whose softmax is written three ways (`max(dim)[0]`,
`max(dim).values`, `amax`). tests/models/ checks that each compiles whole and equals eager;
this script times a whole training step of each:

    optimizer.zero_grad(); loss = step(model, x, y); loss.backward(); optimizer.step()

once with eager `step`, once with `minitorch.compile(step)`: the forward, the loss and (through
AOT autograd) the backward compiled; the optimizer is the same eager code on both sides. The
table reports the best time per step of --repeat rounds (rounds alternate between the two, so
a slow spell of the machine falls on both) and how many graphs `explain` finds in the step.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import pathlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import minitorch as torch
import minitorch.nn.functional as F
from minitorch import nn

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def example(name: str):
    """examples/<name>.py as a module (the examples are scripts, not a package), loaded once
    per process: a second copy would take the first one's place in sys.modules, and bytecode
    capture could no longer reload the first one's globals (a graph break)."""
    if f"example_{name}" in sys.modules:
        return sys.modules[f"example_{name}"]
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class MLPClassifier(nn.Module):
    def __init__(self, features: int = 64, hidden: int = 128, classes: int = 10) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class MNISTNet(nn.Module):
    """pytorch/examples' MNIST net, with fewer channels, on 12x12 images."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(8 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def softmax_by_max_index(z: torch.Tensor) -> torch.Tensor:
    z = z - z.max(dim=-1)[0].unsqueeze(-1)
    e = z.exp()
    return e / e.sum(dim=-1, keepdim=True)


def softmax_by_values(z: torch.Tensor) -> torch.Tensor:
    e = (z - z.max(dim=-1, keepdim=True).values).exp()
    return e / e.sum(dim=-1, keepdim=True)


def softmax_by_amax(z: torch.Tensor) -> torch.Tensor:
    e = (z - torch.amax(z, dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


class Attention(nn.Module):
    """One head of self-attention, with the softmax it is given."""

    def __init__(self, softmax: Callable, embd: int = 16) -> None:
        super().__init__()
        self.qk = nn.Linear(embd, 2 * embd)
        self.softmax = softmax
        self.scale = embd**-0.5

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k = self.qk(x).chunk(2, dim=-1)
        return self.softmax(q @ k.transpose(-2, -1) * self.scale) @ x


@dataclass
class Workload:
    name: str
    make_model: Callable[[], nn.Module]
    step: Callable  # step(model, x, y) -> the loss
    batch: Callable  # batch(rng, n) -> (x, y): n examples


def _floats(rng: np.random.Generator, *shape: int) -> torch.Tensor:
    return torch.from_numpy(rng.standard_normal(shape).astype(np.float32))


def _labels(rng: np.random.Generator, classes: int, n: int) -> torch.Tensor:
    return torch.from_numpy(rng.integers(0, classes, n))


def _gpt() -> Workload:
    gpt = example("gpt")
    config = gpt.GPTConfig(
        vocab_size=32, block_size=16, n_layer=2, n_head=2, n_embd=32, dropout=0.1
    )

    def batch(rng: np.random.Generator, n: int):
        ids = rng.integers(0, 32, (n, 17))
        return torch.from_numpy(ids[:, :-1].copy()), torch.from_numpy(ids[:, 1:].copy())

    return Workload("gpt", lambda: gpt.GPT(config), lambda m, x, y: m(x, y)[1], batch)


def _resnet() -> Workload:
    cnn = example("cnn")

    def batch(rng: np.random.Generator, n: int):
        images, labels = cnn.make_images(n, rng)
        return torch.from_numpy(images), torch.from_numpy(labels)

    return Workload(
        "resnet", lambda: cnn.ResNet(width=4), lambda m, x, y: F.cross_entropy(m(x), y), batch
    )


def _attention(name: str, softmax: Callable) -> Workload:
    return Workload(
        name,
        lambda: Attention(softmax),
        lambda m, x, y: F.mse_loss(m(x), y),
        lambda rng, n: (_floats(rng, n, 8, 16), _floats(rng, n, 8, 16)),
    )


def workloads() -> list[Workload]:
    return [
        Workload(
            "mlp",
            MLPClassifier,
            lambda m, x, y: F.cross_entropy(m(x), y),
            lambda rng, n: (_floats(rng, n, 64), _labels(rng, 10, n)),
        ),
        Workload(
            "mnist",
            MNISTNet,
            lambda m, x, y: F.nll_loss(m(x), y),
            lambda rng, n: (_floats(rng, n, 1, 12, 12), _labels(rng, 10, n)),
        ),
        _gpt(),
        _resnet(),
        _attention("softmax max[0]", softmax_by_max_index),
        _attention("softmax .values", softmax_by_values),
        _attention("softmax amax", softmax_by_amax),
    ]


def forward_and_loss(workload: Workload, model: nn.Module) -> Callable:
    """`step(x, y)`: the loss of `model` on a batch, the function that is compiled."""

    def step(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return workload.step(model, x, y)

    return step


def training_step(workload: Workload, model: nn.Module, compiled: bool) -> Callable:
    """One SGD step of `model` on one batch (the same batch every call), eager or compiled."""
    x, y = workload.batch(np.random.default_rng(0), 32)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    step = forward_and_loss(workload, model)
    forward = torch.compile(step) if compiled else step

    def train() -> None:
        optimizer.zero_grad()
        forward(x, y).backward()
        optimizer.step()

    return train


def main(argv: list[str] | None = None) -> int:
    from timing import seconds_per_call  # benchmarks/timing.py, beside this script

    chosen = workloads()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=[w.name for w in chosen])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.2)
    args = parser.parse_args(argv)
    if args.models:
        chosen = [w for w in chosen if w.name in args.models]

    print(f"{'model':16} {'eager':>10} {'compiled':>10} {'speedup':>8} {'graphs':>6} {'breaks':>6}")
    for workload in chosen:
        torch.manual_seed(0)
        model = workload.make_model()
        eager = training_step(workload, model, compiled=False)
        compiled = training_step(workload, copy.deepcopy(model), compiled=True)
        x, y = workload.batch(np.random.default_rng(0), 32)
        explained = torch._dynamo.explain(forward_and_loss(workload, model))(x, y)
        eager_s, compiled_s = seconds_per_call([eager, compiled], args.repeat, args.min_time)
        print(
            f"{workload.name:16} {eager_s * 1e3:8.3f}ms {compiled_s * 1e3:8.3f}ms "
            f"{eager_s / compiled_s:7.2f}x {explained.graph_count:6d} "
            f"{explained.graph_break_count:6d}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
