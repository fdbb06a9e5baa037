"""PyTorch tutorials: "Learning PyTorch with Examples" (polynomials with autograd, a custom
autograd.Function, nn, optim, a custom Module, the DynamicNet), "What is torch.nn really?"
(logistic regression by hand, then Module, DataLoader and a CNN) and "Neural Networks" (LeNet).

Changed: fewer steps, random data for MNIST; the training steps compiled.
"""

# ruff: noqa: E501, B007, UP031 - the original's line lengths, loops and formats
import math
import random

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F

dtype = torch.float
device = torch.device("cpu")


# ---- Learning PyTorch with Examples: tensors and autograd
def poly_autograd():
    x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    b = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    c = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    d = torch.randn((), device=device, dtype=dtype, requires_grad=True)
    learning_rate = 1e-6
    for t in range(200):
        y_pred = a + b * x + c * x**2 + d * x**3
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
    return [a.item(), b.item(), c.item(), d.item()]


class LegendrePolynomial3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input**3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input**2 - 1)


def poly_function():
    x = torch.linspace(-math.pi, math.pi, 200, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
    learning_rate = 5e-6
    for t in range(200):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    print(f"Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)")
    return [a.item(), b.item(), c.item(), d.item()]


def poly_nn():
    x = torch.linspace(-math.pi, math.pi, 200)
    y = torch.sin(x)
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    loss_fn = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    step = torch.compile(lambda xx, y: loss_fn(model(xx), y))
    for t in range(100):
        loss = step(xx, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    linear_layer = model[0]
    print(
        f"Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3"
    )
    return loss.item()


class Polynomial3(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        return self.a + self.b * x + self.c * x**2 + self.d * x**3

    def string(self):
        return (
            f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3"
        )


class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x**2 + self.d * x**3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x**exp
        return y


criterion_sum = torch.nn.MSELoss(reduction="sum")


def sum_sq_step(model, x, y):
    return criterion_sum(model(x), y)


def poly_module():
    x = torch.linspace(-math.pi, math.pi, 200)
    y = torch.sin(x)
    model = Polynomial3()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    step = torch.compile(sum_sq_step)
    for t in range(100):
        loss = step(model, x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"Result: {model.string()}")
    first = loss.item()
    random.seed(0)
    model = DynamicNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    for t in range(20):
        loss = step(model, x, y)  # a graph break at random.randint: compiled in pieces
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return first, loss.item()


# ---- What is torch.nn really?
def nn_really():
    n, d, classes = 64, 16, 10
    x_train = torch.randn(n, d)
    y_train = torch.randint(0, classes, (n,))
    x_train, y_train, x_valid, y_valid = map(
        torch.tensor, (x_train.numpy(), y_train.numpy(), x_train.numpy(), y_train.numpy())
    )
    n, c = x_train.shape
    print(x_train, y_train)
    print(x_train.shape)
    print(y_train.min(), y_train.max())
    weights = torch.randn(d, 10) / math.sqrt(d)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    bs = 16
    xb = x_train[0:bs]
    preds = model(xb)
    print(preds[0], preds.shape)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    loss_func = nll
    yb = y_train[0:bs]

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    print(loss_func(preds, yb), accuracy(preds, yb))
    lr = 0.5
    epochs = 2
    cmodel = torch.compile(lambda xb, yb: loss_func(model(xb), yb))
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            loss = cmodel(xb, yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    print(loss_func(model(xb), yb), accuracy(model(xb), yb))

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(d, 10)

        def forward(self, xb):
            return self.lin(xb)

    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x):
        return x.view(-1, 1, 4, 4)

    cnn = nn.Sequential(
        Lambda(preprocess),
        nn.Conv2d(1, 8, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 10, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    from minitorch.utils.data import DataLoader, TensorDataset

    train_ds = TensorDataset(x_train, y_train)
    valid_ds = TensorDataset(x_valid, y_valid)

    def get_data(train_ds, valid_ds, bs):
        return (
            DataLoader(train_ds, batch_size=bs, shuffle=True),
            DataLoader(valid_ds, batch_size=bs * 2),
        )

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    import numpy as np

    def fit(epochs, model, loss_func, opt, train_dl, valid_dl):
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, loss_func, xb, yb, opt)
            model.eval()
            with torch.no_grad():
                losses, nums = zip(*[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
            val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
            print(epoch, val_loss)
        return val_loss

    results = [loss_func(model(xb), yb).item()]
    for m in (Mnist_Logistic(), cnn):
        train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        results.append(fit(2, torch.compile(m), F.cross_entropy, opt, train_dl, valid_dl))
    return results


# ---- Neural Networks tutorial (LeNet)
class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        c1 = F.relu(self.conv1(input))
        s2 = F.max_pool2d(c1, (2, 2))
        c3 = F.relu(self.conv2(s2))
        s4 = F.max_pool2d(c3, 2)
        s4 = torch.flatten(s4, 1)
        f5 = F.relu(self.fc1(s4))
        f6 = F.relu(self.fc2(f5))
        output = self.fc3(f6)
        return output


criterion = nn.MSELoss()


def lenet_step(net, input, target):
    output = net(input)
    return criterion(output, target)


def lenet_tutorial():
    net = LeNet()
    print(net)
    params = list(net.parameters())
    print(len(params))
    print(params[0].size())
    input = torch.randn(1, 1, 32, 32)
    out = net(input)
    print(out)
    net.zero_grad()
    out.backward(torch.randn(1, 10))
    output = net(input)
    target = torch.randn(10)
    target = target.view(1, -1)
    criterion = nn.MSELoss()
    loss = criterion(output, target)
    print(loss)
    print(loss.grad_fn)
    print(loss.grad_fn.next_functions[0][0])
    print(loss.grad_fn.next_functions[0][0].next_functions[0][0])
    net.zero_grad()
    print("conv1.bias.grad before backward")
    print(net.conv1.bias.grad)
    loss.backward()
    print("conv1.bias.grad after backward")
    print(net.conv1.bias.grad)
    learning_rate = 0.01
    for f in net.parameters():
        f.data.sub_(f.grad.data * learning_rate)
    import minitorch.optim as optim

    optimizer = optim.SGD(net.parameters(), lr=0.01)
    step = torch.compile(lenet_step)
    optimizer.zero_grad()
    loss = step(net, input, target)
    loss.backward()
    optimizer.step()
    return loss.item(), net(input).tolist()
