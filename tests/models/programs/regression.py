"""pytorch/examples regression/main.py: fit a degree-4 polynomial with one Linear layer.

Changed: at most 30 batches (the original runs until the loss is under 1e-3), and the loss
`F.smooth_l1_loss(fc(batch_x), batch_y)` compiled.
"""

# ruff: noqa: E501, B007, UP031, UP032 - the original's line lengths, loops and formats

import minitorch as torch
import minitorch.nn.functional as F

POLY_DEGREE = 4
W_target = None
b_target = None


def make_features(x):
    """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
    x = x.unsqueeze(1)
    return torch.cat([x**i for i in range(1, POLY_DEGREE + 1)], 1)


def f(x):
    """Approximated function."""
    return x.mm(W_target) + b_target.item()


def poly_desc(W, b):
    """Creates a string description of a polynomial."""
    result = "y = "
    for i, w in enumerate(W):
        result += "{:+.2f} x^{} ".format(w, i + 1)
    result += "{:+.2f}".format(b[0])
    return result


def get_batch(batch_size=32):
    """Builds a batch i.e. (x, f(x)) pair."""
    random = torch.randn(batch_size)
    x = make_features(random)
    y = f(x)
    return x, y


def step(fc, batch_x, batch_y):
    return F.smooth_l1_loss(fc(batch_x), batch_y)


def batches(n=2):
    return [(make_features(torch.randn(8)), torch.randn(8, 1)) for _ in range(n)]


def main():
    global W_target, b_target
    torch.manual_seed(0)
    W_target = torch.randn(POLY_DEGREE, 1) * 5
    b_target = torch.randn(1) * 5
    fc = torch.nn.Linear(W_target.size(0), 1)
    compiled_step = torch.compile(step)
    losses = []
    for batch_idx in range(1, 30):
        batch_x, batch_y = get_batch()
        fc.zero_grad()
        output = compiled_step(fc, batch_x, batch_y)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        losses.append(loss)
        if loss < 1e-3:
            break
    print("Loss: {:.6f} after {} batches".format(loss, batch_idx))
    print("==> Learned function:\t" + poly_desc(fc.weight.view(-1), fc.bias))
    print("==> Actual function:\t" + poly_desc(W_target.view(-1), b_target))
    return losses
