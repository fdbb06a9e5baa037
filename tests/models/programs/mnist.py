"""pytorch/examples mnist/main.py: the Net, the train and test loops, Adadelta and StepLR.

Changed: 12x12 random images and fewer channels (the 9216-input fc1 shrinks to 128), two
epochs of four batches, and the training step `F.nll_loss(model(data), target)` compiled.
"""

# ruff: noqa: UP032 - the original's str.format

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
import minitorch.optim as optim
from minitorch.optim.lr_scheduler import StepLR
from minitorch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(8 * 4 * 4, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def step(model, data, target):
    output = model(data)
    return F.nll_loss(output, target)


def batches(n=2):
    return [(torch.randn(4, 1, 12, 12), torch.randint(0, 10, (4,))) for _ in range(n)]


def train(model, device, train_loader, optimizer, epoch, compiled_step):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = compiled_step(model, data, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 2 == 0:
            print(
                "Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
                    epoch,
                    batch_idx * len(data),
                    len(train_loader.dataset),
                    100.0 * batch_idx / len(train_loader),
                    loss.item(),
                )
            )


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print(
        "\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n".format(
            test_loss, correct, len(test_loader.dataset), 100.0 * correct / len(test_loader.dataset)
        )
    )
    return test_loss


def main():
    torch.manual_seed(1)
    use_cuda = torch.cuda.is_available()
    device = torch.device("cuda" if use_cuda else "cpu")
    data, target = torch.randn(32, 1, 12, 12), torch.randint(0, 10, (32,))
    train_loader = DataLoader(TensorDataset(data, target), batch_size=8, shuffle=True)
    test_loader = DataLoader(TensorDataset(data, target), batch_size=16)
    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    compiled_step = torch.compile(step)
    losses = []
    for epoch in range(1, 3):
        train(model, device, train_loader, optimizer, epoch, compiled_step)
        losses.append(test(model, device, test_loader))
        scheduler.step()
    return losses
