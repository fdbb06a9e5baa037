"""pytorch/examples mnist_forward_forward/main.py: Hinton's forward-forward, layer-local losses.

Changed: 20 features and layers of 12 (784 and 500 in the original), random data, three
epochs a layer; the loss lines of `Layer.train` are the function `step`, compiled.
"""

# ruff: noqa: E501, B007, UP031 - the original's line lengths, loops and formats

import minitorch as torch
import minitorch.nn as nn
from minitorch.optim import Adam

LR, THRESHOLD, EPOCHS = 0.03, 2.0, 3


def overlay_y_on_x(x, y):
    """Replace the first 10 pixels of data [x] with one-hot-encoded label [y]"""
    x_ = x.clone()
    x_[:, :10] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Net(torch.nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.layers = []
        for d in range(len(dims) - 1):
            self.layers = self.layers + [Layer(dims[d], dims[d + 1])]

    def predict(self, x):
        goodness_per_label = []
        for label in range(10):
            h = overlay_y_on_x(x, label)
            goodness = []
            for layer in self.layers:
                h = layer(h)
                goodness = goodness + [h.pow(2).mean(1)]
            goodness_per_label += [sum(goodness).unsqueeze(1)]
        goodness_per_label = torch.cat(goodness_per_label, 1)
        return goodness_per_label.argmax(1)

    def train(self, x_pos, x_neg):
        h_pos, h_neg = x_pos, x_neg
        for i, layer in enumerate(self.layers):
            print("training layer: ", i)
            h_pos, h_neg = layer.train(h_pos, h_neg)


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=LR)
        self.threshold = THRESHOLD
        self.num_epochs = EPOCHS
        self.compiled_step = torch.compile(step)

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train(self, x_pos, x_neg):
        for i in range(self.num_epochs):
            loss = self.compiled_step(self, x_pos, x_neg)
            self.opt.zero_grad()
            # this backward just compute the derivative and hence
            # is not considered backpropagation.
            loss.backward()
            self.opt.step()
            print("Loss: ", loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


def step(layer, x_pos, x_neg):
    g_pos = layer.forward(x_pos).pow(2).mean(1)
    g_neg = layer.forward(x_neg).pow(2).mean(1)
    # The following loss pushes pos (neg) samples to
    # values larger (smaller) than the self.threshold.
    return torch.log(
        1 + torch.exp(torch.cat([-g_pos + layer.threshold, g_neg - layer.threshold]))
    ).mean()


def batches(n=2):
    return [(torch.rand(8, 20), torch.rand(8, 20)) for _ in range(n)]


def main():
    torch.manual_seed(1234)
    x, y = torch.rand(16, 20), torch.randint(0, 10, (16,))
    net = Net([20, 12, 12])
    x_pos = overlay_y_on_x(x, y)
    rnd = torch.randperm(x.size(0))
    x_neg = overlay_y_on_x(x, y[rnd])
    net.train(x_pos, x_neg)
    return 1.0 - net.predict(x).eq(y).float().mean().item()
