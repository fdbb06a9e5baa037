"""Real models, side by side: minitorch eager and compiled against torch eager and torch.compile.

    make bench                  # benchmarks/bench.py, then the other tables, this one among them
    python benchmarks/model_steps.py [--quick] [--tiny] [--only gpt decode ...] [--no-torch]

The workloads of issue 28's table, each model code written once, as its public original is:
a nanoGPT-shaped training step and a decode step (the GPT of examples/gpt.py), pytorch/examples'
MNIST convnet (train_step.py's `MNISTNet` at its original widths), two torchvision BasicBlocks
(examples/cnn.py), causal attention as nanoGPT writes it, and a transformer's MLP at inference.
A training step is `zero_grad(); loss_fn(x, y).backward(); SGD step()` with only `loss_fn`
compiled (benchmarks/train_step.py's step); an inference step runs under `no_grad`.

The scripts that hold the models are written against `import minitorch as torch`, and say that
they run unchanged with `import torch`: `for_library` loads a second copy with PyTorch in
minitorch's place ([Note: one model, two libraries]). Every system starts from the same weights
(minitorch's initialization, copied into each model through `load_state_dict`).

Before anything is timed, each system's first call is compared with the reference: torch eager,
or minitorch eager where PyTorch is not installed (`pip install -e '.[bench]'`, or `--no-torch`
to leave it out). A training step is compared by its loss, the gradients of its first and last
parameters and its first parameter after the update. A system whose first call differs (or
fails) is reported WRONG (or ERROR) and not timed: a fast wrong answer is not a result. Then ms
per call: medians of interleaved rounds (benchmarks/timing.py), and torch.compile's time over
minitorch.compile's (> 1: minitorch.compile is faster), or over torch eager's where
torch.compile is WRONG. `--tiny` runs small shapes for one round, as tests/test_bench.py does.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import train_step  # benchmarks/train_step.py, beside this script: its models and examples
from bench import fmt_ms, import_torch, machine
from timing import median_seconds_per_call

import minitorch

HERE = Path(__file__).resolve().parent
RTOL = 1e-3  # float32 in another order of sums, through whole models
ATOL = 1e-4  # times the largest magnitude of the reference value
LEARNING_RATE = 1e-3
COLUMNS = ("minitorch", "minitorch.compile", "torch", "torch.compile")

# [Note: one model, two libraries]
# examples/gpt.py, examples/cnn.py and train_step.py import minitorch under PyTorch's names
# (`import minitorch as torch`, `import minitorch.nn.functional as F`, `from minitorch import
# nn`), so their models are PyTorch code. For the torch columns, `for_library` runs the same
# source with those three lines swapped for PyTorch's (one line for one, so line numbers hold):
# both libraries run the same lines, not two translations of a model that could drift apart.
# minitorch's copy is the one train_step.py loads, once per process (see `example` there).
TORCH_IMPORTS = {
    "import minitorch as torch\n": "import torch\n",
    "import minitorch.nn.functional as F\n": "import torch.nn.functional as F\n",
    "from minitorch import nn\n": "from torch import nn\n",
}


def for_library(script: str, library: ModuleType) -> ModuleType:
    """`script` (train_step, or an example's name: gpt, cnn) with `library` as its torch."""
    if library is minitorch:
        return train_step if script == "train_step" else train_step.example(script)
    name = f"{script}_on_torch"
    if name not in sys.modules:
        path = HERE / "train_step.py" if script == "train_step" else train_step.EXAMPLES
        path = path if script == "train_step" else path / f"{script}.py"
        source = path.read_text()
        for ours, theirs in TORCH_IMPORTS.items():
            assert ours in source, f"{path} does not `{ours.strip()}`"
            source = source.replace(ours, theirs)
        module = ModuleType(name)
        module.__file__ = str(path)
        sys.modules[name] = module  # dataclasses look their module up
        exec(compile(source, str(path), "exec"), module.__dict__)
    return sys.modules[name]


# ---- the models and what is compiled --------------------------------------------------------


def gpt(library: ModuleType, tiny: bool) -> Any:
    """examples/gpt.py's GPT: 4 layers, 4 heads, C128 over a block of 64 (tiny: 1, 2, 16, 8)."""
    module = for_library("gpt", library)
    sizes = dict(n_layer=1, n_head=2, n_embd=16) if tiny else dict(n_layer=4, n_head=4, n_embd=128)
    return module.GPT(module.GPTConfig(vocab_size=65, block_size=8 if tiny else 64, **sizes))


def mnist_net(library: ModuleType, tiny: bool) -> Any:
    """train_step.py's MNISTNet, widened to pytorch/examples' 32-64-128 on 28x28 (tiny: as it
    is there, 4-8-32 on 12x12), with its dropout at p=0: the two libraries draw different masks,
    so a step with dropout could not be compared."""
    model = for_library("train_step", library).MNISTNet()
    if not tiny:
        nn = library.nn
        model.conv1, model.conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
        model.fc1, model.fc2 = nn.Linear(64 * 12 * 12, 128), nn.Linear(128, 10)
    model.dropout1.p = model.dropout2.p = 0.0
    return model


def basic_blocks(library: ModuleType, tiny: bool) -> Any:
    """Two of examples/cnn.py's BasicBlocks (torchvision's), 64 channels (tiny: 4)."""
    cnn = for_library("cnn", library)
    width = 4 if tiny else 64
    return library.nn.Sequential(cnn.BasicBlock(width, width), cnn.BasicBlock(width, width))


def transformer_mlp(library: ModuleType, tiny: bool) -> Any:
    """Linear, GELU, Linear: 1024-4096-1024 (tiny: 8-32-8)."""
    nn = library.nn
    width = 8 if tiny else 1024
    return nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))


def gpt_loss(library: ModuleType, model: Any) -> Callable:
    def loss_fn(idx, targets):
        return model(idx, targets)[1]

    return loss_fn


def classifier_loss(library: ModuleType, model: Any) -> Callable:
    def loss_fn(x, y):
        return library.nn.functional.nll_loss(model(x), y)

    return loss_fn


def regression_loss(library: ModuleType, model: Any) -> Callable:
    def loss_fn(x, y):
        return library.nn.functional.mse_loss(model(x), y)

    return loss_fn


def forward(library: ModuleType, model: Any) -> Callable:
    def f(x):
        return model(x)

    return f


def next_token_logits(library: ModuleType, model: Any) -> Callable:
    def decode(idx):
        logits, _ = model(idx)
        return logits[:, -1, :]  # (B, vocab): what the next token is drawn from

    return decode


def causal_attention(library: ModuleType, model: Any) -> Callable:
    """nanoGPT's attention (examples/gpt.py) on given q, k, v: no model, no weights."""

    def attention(q, k, v, mask):
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))  # (B, nh, T, T)
        att = att.masked_fill(mask == 0, float("-inf"))
        return library.nn.functional.softmax(att, dim=-1) @ v  # (B, nh, T, hs)

    return attention


# ---- their inputs ---------------------------------------------------------------------------


def tokens(batch: int, length: int, targets: bool) -> Callable:
    def make(rng: np.random.Generator, tiny: bool) -> list[np.ndarray]:
        b, t = (1, 4) if tiny else (batch, length)
        ids = rng.integers(0, 65, (b, t + 1))
        return [ids[:, :-1].copy(), ids[:, 1:].copy()] if targets else [ids[:, :-1].copy()]

    return make


def floats(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def images_and_labels(rng: np.random.Generator, tiny: bool) -> list[np.ndarray]:
    n, size = (2, 12) if tiny else (64, 28)
    return [floats(rng, n, 1, size, size), rng.integers(0, 10, n)]


def feature_maps(rng: np.random.Generator, tiny: bool) -> list[np.ndarray]:
    shape = (2, 4, 6, 6) if tiny else (16, 64, 16, 16)
    return [floats(rng, *shape), floats(rng, *shape)]


def attention_inputs(rng: np.random.Generator, tiny: bool) -> list[np.ndarray]:
    b, nh, t, hs = (1, 2, 8, 4) if tiny else (8, 8, 256, 64)
    mask = np.tril(np.ones((t, t), np.float32))  # 1 where a position may attend
    return [floats(rng, b, nh, t, hs) for _ in range(3)] + [mask]


def mlp_inputs(rng: np.random.Generator, tiny: bool) -> list[np.ndarray]:
    return [floats(rng, 4, 8) if tiny else floats(rng, 512, 1024)]


@dataclass(frozen=True)
class ModelWorkload:
    """One row: a model (or none), the function of it that is compiled, and its inputs."""

    name: str  # the name --only takes
    title: str  # the table's row
    make_model: Callable[[ModuleType, bool], Any] | None  # (library, tiny) -> nn.Module
    program: Callable[[ModuleType, Any], Callable]  # (library, model) -> the compiled function
    make_inputs: Callable[[np.random.Generator, bool], list[np.ndarray]]  # (rng, tiny)
    train: bool  # an SGD step on the function's loss, or a forward under no_grad


WORKLOADS = [
    ModelWorkload(
        "gpt",
        "nanoGPT-shaped train step, B16 T64, 4 layers, 4 heads, C128",
        gpt,
        gpt_loss,
        tokens(16, 64, targets=True),
        train=True,
    ),
    ModelWorkload(
        "mnist",
        "MNIST convnet train step, batch 64",
        mnist_net,
        classifier_loss,
        images_and_labels,
        train=True,
    ),
    ModelWorkload(
        "resnet",
        "two ResNet BasicBlocks train step, 64ch 16x16, batch 16",
        basic_blocks,
        regression_loss,
        feature_maps,
        train=True,
    ),
    ModelWorkload(
        "attention",
        "causal attention forward, 8x8x256x64",
        None,
        causal_attention,
        attention_inputs,
        train=False,
    ),
    ModelWorkload(
        "mlp",
        "MLP inference 1024-4096-1024, batch 512",
        transformer_mlp,
        forward,
        mlp_inputs,
        train=False,
    ),
    ModelWorkload(
        "decode",
        "GPT decode step, batch 1, 16 tokens",
        gpt,
        next_token_logits,
        tokens(1, 16, targets=False),
        train=False,
    ),
]


# ---- running, checking, timing --------------------------------------------------------------


def initial_state(workload: ModelWorkload, tiny: bool) -> dict[str, np.ndarray]:
    """The weights every system starts from: minitorch's initialization, seeded."""
    if workload.make_model is None:
        return {}
    minitorch.manual_seed(0)
    model = workload.make_model(minitorch, tiny)
    return {name: value.numpy().copy() for name, value in model.state_dict().items()}


def implementation(
    workload: ModelWorkload,
    library: ModuleType,
    compiled: bool,
    state: dict[str, np.ndarray],
    arrays: list[np.ndarray],
    tiny: bool,
) -> tuple[Callable[[], Any], Callable[[Any], dict[str, np.ndarray]]]:
    """(run, observe): `run` is what is timed, `observe(run())` its result as numpy arrays."""
    model = None
    if workload.make_model is not None:
        model = workload.make_model(library, tiny)
        model.load_state_dict({k: library.from_numpy(v.copy()) for k, v in state.items()})
    fn = workload.program(library, model)
    fn = library.compile(fn) if compiled else fn
    tensors = [library.from_numpy(a.copy()) for a in arrays]
    if not workload.train:

        def infer():
            with library.no_grad():
                return fn(*tensors)

        return infer, lambda out: {"output": out.numpy().copy()}

    optimizer = library.optim.SGD(model.parameters(), lr=LEARNING_RATE)
    (first, p0), *_, (last, p1) = model.named_parameters()

    def step():
        optimizer.zero_grad()
        loss = fn(*tensors)
        loss.backward()
        optimizer.step()
        return loss

    def observe(loss) -> dict[str, np.ndarray]:
        return {
            "loss": loss.detach().numpy().copy(),
            f"{first}.grad": p0.grad.numpy().copy(),
            f"{last}.grad": p1.grad.numpy().copy(),
            f"{first} after the step": p0.detach().numpy().copy(),
        }

    return step, observe


def difference(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> str | None:
    """Why `got` is not `want` within the tolerance, or None."""
    for key, expected in want.items():
        value = got[key]
        try:
            assert value.dtype == expected.dtype, f"dtype {value.dtype}, not {expected.dtype}"
            atol = ATOL * float(np.abs(expected).max(initial=0.0))
            np.testing.assert_allclose(value, expected, rtol=RTOL, atol=atol)
        except AssertionError as error:
            return f"{key}: {str(error).strip()}"
    return None


@dataclass
class Row:
    workload: ModelWorkload
    ms: dict[str, float]  # column -> ms per call
    problems: dict[str, str]  # column -> "WRONG: why" or "ERROR: why", not timed

    def cell(self, column: str) -> str:
        if column in self.problems:
            return "**" + self.problems[column].split(":")[0] + "**"
        return fmt_ms(self.ms.get(column))

    @property
    def ratio(self) -> str:
        ours = self.ms.get("minitorch.compile")
        if ours is None:
            return "—"
        if "torch.compile" in self.ms:
            return f"{self.ms['torch.compile'] / ours:.2f}"
        if "torch" in self.ms and "torch.compile" in self.problems:
            return f"{self.ms['torch'] / ours:.2f} vs torch"
        return "—"


def run_workload(workload: ModelWorkload, torch: ModuleType | None, args) -> Row:
    """Check every system's first call against the reference, then time those that agree."""
    minitorch._dynamo.reset()  # the earlier rows' entries: not in this row's guards
    if torch is not None:
        torch._dynamo.reset()
    rng = np.random.default_rng(0)
    arrays = workload.make_inputs(rng, args.tiny)
    state = initial_state(workload, args.tiny)
    libraries = [("minitorch", minitorch)] + ([("torch", torch)] if torch is not None else [])
    runs, results, problems = {}, {}, {}
    for name, library in libraries:
        for compiled in (False, True):
            column = f"{name}.compile" if compiled else name
            try:
                run, observe = implementation(workload, library, compiled, state, arrays, args.tiny)
                results[column] = observe(run())  # the first call: a compiled one compiles
                runs[column] = run
            except Exception:  # a system that fails is reported and not timed
                problems[column] = "ERROR: " + traceback.format_exc(limit=-3).strip()
    reference = "torch" if torch is not None else "minitorch"
    if reference not in results:
        problems.update({c: f"WRONG: no reference ({reference} failed)" for c in runs})
        return Row(workload, {}, problems)
    for column, got in results.items():
        why = difference(got, results[reference])
        if why is not None:
            problems[column] = f"WRONG: differs from {reference} eager's first call: {why}"
            del runs[column]
    for run in runs.values():
        for _ in range(args.warmup):
            run()
    seconds = median_seconds_per_call(runs, args.rounds, args.min_sample) if runs else {}
    return Row(workload, {column: s * 1e3 for column, s in seconds.items()}, problems)


def table_line(row: Row | None) -> str:
    if row is None:
        return (
            "| workload | " + " | ".join(COLUMNS) + " | torch.compile / minitorch.compile |\n"
            "|---|" + "--:|" * (len(COLUMNS) + 1)
        )
    cells = [row.cell(column) for column in COLUMNS] + [row.ratio]
    return f"| {row.workload.title} | " + " | ".join(cells) + " |"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [w.name for w in WORKLOADS]
    parser.add_argument("--only", nargs="+", choices=names, metavar="NAME", help=", ".join(names))
    parser.add_argument("--quick", action="store_true", help="5 short rounds")
    parser.add_argument("--tiny", action="store_true", help="small shapes, 1 round")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    args = parser.parse_args(argv)
    if args.tiny:
        args.rounds, args.min_sample, args.warmup = 1, 0.0, 0
    else:
        args.rounds, args.min_sample, args.warmup = (5, 0.02, 1) if args.quick else (11, 0.1, 2)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    chosen = [w for w in WORKLOADS if not args.only or w.name in args.only]
    torch = None if args.no_torch else import_torch()
    print(f"Machine: {machine(torch)}\n")
    if args.no_torch:
        print("NOTE: --no-torch: PyTorch left out, whether installed or not\n")
    reference = "torch eager" if torch is not None else "minitorch eager (no torch)"
    print(
        f"Real models: ms per step, median of {args.rounds} interleaved rounds; each system's "
        f"first call checked against {reference}; torch.compile / minitorch.compile > 1: "
        "minitorch.compile is faster\n"
    )
    if args.tiny:
        print("NOTE: --tiny: small shapes, not the sizes the rows name\n")
    print(table_line(None))
    rows, start = [], time.perf_counter()
    for workload in chosen:
        rows.append(run_workload(workload, torch, args))
        print(table_line(rows[-1]), flush=True)
    took = time.perf_counter() - start
    print(f"\n{len(rows)} rows checked and timed in {took:.0f} s (compiles included)")
    for row in rows:
        for column, problem in row.problems.items():
            print(f"\n{row.workload.title}, {column}: {problem}")
    return 1 if any(row.problems for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
