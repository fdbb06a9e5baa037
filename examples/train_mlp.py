"""Train a small MLP to tell two interleaved spirals apart, written as PyTorch code.

    python examples/train_mlp.py [--epochs 40] [--points 1000] [--threshold 0.95]

The data is made here (numpy, seeded): two spiral arms, one per class, each the other turned
by half a circle, so no straight line separates them and the network has to bend its boundary
around both. The model is `Linear -> ReLU -> Linear -> ReLU -> Linear`, trained with Adam on
the cross-entropy of minibatches. One line per epoch reports the mean training loss and the
accuracy on the training points; at the end the accuracy on fresh points from the same spirals
is checked against --threshold, and the script exits with status 1 if it falls short.

Everything below runs unchanged with `import torch` in place of `import minitorch as torch`.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

import minitorch as torch
from minitorch import nn


def make_spirals(n: int, rng: np.random.Generator, noise: float = 0.05):
    """n points (float32, shape (n, 2)) on two interleaved spirals, and their labels (int64).

    Arm c at angle t is the point r(t) (cos(t + cπ), sin(t + cπ)) with r(t) = t / t_max, for t
    up to 1.5 turns; sqrt spreads points evenly along the arm's length, not its angle.
    """
    labels = rng.integers(0, 2, size=n)
    t_max = 3 * math.pi  # 1.5 turns
    t = np.sqrt(rng.uniform(0.0, 1.0, size=n)) * t_max + 0.5
    angle = t + labels * math.pi
    r = t / t_max
    points = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)  # (n, 2)
    points += rng.normal(scale=noise, size=points.shape)
    return points.astype(np.float32), labels.astype(np.int64)


def accuracy(model: nn.Module, points: np.ndarray, labels: np.ndarray) -> float:
    """The fraction of points whose largest logit is their label's."""
    with torch.no_grad():
        logits = model(torch.from_numpy(points))  # (n, 2)
        predicted = logits.argmax(dim=1)  # (n,)
        return (predicted == torch.from_numpy(labels)).float().mean().item()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--points", type=int, default=1000, help="training points")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument(
        "--threshold",
        type=float,
        default=0.95,
        help="the test accuracy the run must reach (exit status 1 if not)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    train_x, train_y = make_spirals(args.points, rng)
    test_x, test_y = make_spirals(1000, rng)  # fresh points: is the boundary right, or memorised?

    model = nn.Sequential(
        nn.Linear(2, args.hidden),
        nn.ReLU(),
        nn.Linear(args.hidden, args.hidden),
        nn.ReLU(),
        nn.Linear(args.hidden, 2),  # one logit per class
    )
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(1, args.epochs + 1):
        model.train()
        order = rng.permutation(args.points)
        total_loss = 0.0
        for start in range(0, args.points, args.batch_size):
            batch = order[start : start + args.batch_size]
            x = torch.from_numpy(train_x[batch])  # (B, 2)
            y = torch.from_numpy(train_y[batch])  # (B,)
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * len(batch)
        model.eval()
        print(
            f"epoch {epoch:3d}  loss {total_loss / args.points:.4f}  "
            f"accuracy {accuracy(model, train_x, train_y):6.1%}",
            flush=True,
        )

    test_accuracy = accuracy(model, test_x, test_y)
    passed = test_accuracy >= args.threshold
    print(
        f"test accuracy {test_accuracy:.1%} on {len(test_y)} fresh points "
        f"(threshold {args.threshold:.0%}): {'PASS' if passed else 'FAIL'}"
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
