"""Train a small residual convnet to tell four kinds of drawn lines apart, compiled.

    python examples/cnn.py [--epochs 6] [--images 512] [--threshold 0.9]

The images are made here (numpy, seeded): 16x16 pictures of one line each, horizontal,
vertical, or along either diagonal, at a random place, with a random brightness, on noise. The
label is the line's direction. The model is a miniature ResNet: a 3x3 convolution, BatchNorm
and ReLU, then torchvision's BasicBlock (two 3x3 convolutions with BatchNorm, `ReLU(inplace=True)`,
and the block's input added back with `out += identity`), a second block that halves the
resolution (its identity path a strided 1x1 convolution), `AdaptiveAvgPool2d` down to one pixel
per channel and a linear layer over the four classes.

`minitorch.compile(model)` captures the forward, with BatchNorm's running statistics updated
as buffer mutations; SGD with momentum trains it on the cross-entropy. One line per epoch
reports the mean loss and the training accuracy; the accuracy on fresh images, in eval mode
(BatchNorm then normalizes with its running statistics), is checked against --threshold, and
the script exits with status 1 if it falls short.

Everything below runs unchanged with `import torch` in place of `import minitorch as torch`.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import minitorch as torch
import minitorch.nn.functional as F
from minitorch import nn

SIZE = 16
CLASSES = ("horizontal", "vertical", "diagonal", "antidiagonal")


def make_images(n: int, rng: np.random.Generator):
    """n images (float32, (n, 1, 16, 16)) of one line each, and their labels (int64, (n,))."""
    labels = rng.integers(0, len(CLASSES), size=n)
    images = rng.normal(scale=0.3, size=(n, SIZE, SIZE))
    steps = np.arange(SIZE)
    for image, label in zip(images, labels):
        at = rng.integers(2, SIZE - 2)  # which row, column or diagonal
        brightness = rng.uniform(1.0, 2.0)
        if label == 0:
            image[at, :] += brightness
        elif label == 1:
            image[:, at] += brightness
        else:  # a diagonal, shifted by `at - SIZE // 2`, or its mirror image
            columns = (steps + at - SIZE // 2) % SIZE
            rows = steps if label == 2 else steps[::-1]
            image[rows, columns] += brightness
    return images[:, None].astype(np.float32), labels.astype(np.int64)


def conv3x3(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """torchvision's: conv-bn-relu-conv-bn, plus the input (or its projection), then relu."""

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(
                nn.Conv2d(inplanes, planes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes),
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, width: int = 8, classes: int = len(CLASSES)) -> None:
        super().__init__()
        self.stem = nn.Sequential(conv3x3(1, width), nn.BatchNorm2d(width), nn.ReLU(inplace=True))
        self.layer1 = BasicBlock(width, width)
        self.layer2 = BasicBlock(width, 2 * width, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(2 * width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.layer2(self.layer1(self.stem(x)))  # (n, 2 width, 8, 8)
        x = torch.flatten(self.avgpool(x), 1)  # (n, 2 width)
        return self.fc(x)


def accuracy(model: nn.Module, images: np.ndarray, labels: np.ndarray) -> float:
    """The fraction of images whose largest logit is their label's."""
    with torch.no_grad():
        predicted = model(torch.from_numpy(images)).argmax(dim=1)
        return (predicted == torch.from_numpy(labels)).float().mean().item()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--images", type=int, default=512, help="training images")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--width", type=int, default=8, help="channels of the first block")
    parser.add_argument(
        "--threshold",
        type=float,
        default=0.9,
        help="the test accuracy the run must reach (exit status 1 if not)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(args.seed)
    torch.manual_seed(args.seed)
    train_x, train_y = make_images(args.images, rng)
    test_x, test_y = make_images(500, rng)

    model = ResNet(args.width)
    compiled = torch.compile(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    for epoch in range(1, args.epochs + 1):
        model.train()
        order = rng.permutation(args.images)
        total_loss = 0.0
        for start in range(0, args.images - args.batch_size + 1, args.batch_size):
            batch = order[start : start + args.batch_size]
            x = torch.from_numpy(train_x[batch])  # (B, 1, 16, 16)
            y = torch.from_numpy(train_y[batch])  # (B,)
            loss = F.cross_entropy(compiled(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * len(batch)
        model.eval()
        seen = args.images - args.images % args.batch_size
        print(
            f"epoch {epoch:3d}  loss {total_loss / seen:.4f}  "
            f"accuracy {accuracy(compiled, train_x, train_y):6.1%}",
            flush=True,
        )

    test_accuracy = accuracy(compiled, test_x, test_y)
    passed = test_accuracy >= args.threshold
    print(
        f"test accuracy {test_accuracy:.1%} on {len(test_y)} fresh images "
        f"(threshold {args.threshold:.0%}): {'PASS' if passed else 'FAIL'}"
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
