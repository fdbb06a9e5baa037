"""The PyTorch quickstart tutorial: NeuralNetwork (Flatten, Sequential), CrossEntropyLoss, SGD.

Changed: 8x8 random images for FashionMNIST's 28x28, 32 hidden units, and the loss of the
train loop compiled.
"""

import minitorch as torch
from minitorch import nn
from minitorch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(8 * 8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10)
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


loss_fn = nn.CrossEntropyLoss()


def step(model, X, y):
    pred = model(X)
    return loss_fn(pred, y)


def batches(n=2):
    return [(torch.rand(4, 1, 8, 8), torch.randint(0, 10, (4,))) for _ in range(n)]


def train(dataloader, model, loss_fn, optimizer, compiled_step):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)
        loss = compiled_step(model, X, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss, current = loss.item(), (batch + 1) * len(X)
        print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100 * correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
    return test_loss


def main():
    torch.manual_seed(0)
    X, y = torch.rand(32, 1, 8, 8), torch.randint(0, 10, (32,))
    train_dataloader = DataLoader(TensorDataset(X, y), batch_size=8)
    test_dataloader = DataLoader(TensorDataset(X, y), batch_size=8)
    model = NeuralNetwork().to(device)
    print(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    compiled_step = torch.compile(step)
    losses = []
    for t in range(2):
        print(f"Epoch {t + 1}\n-------------------------------")
        train(train_dataloader, model, loss_fn, optimizer, compiled_step)
        losses.append(test(test_dataloader, model, loss_fn))
    return losses
