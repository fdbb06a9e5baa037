"""The PyTorch tutorial "Classifying Names with a Character-Level RNN" (its RNN written with
Linear layers over `torch.cat((input, hidden), 1)`, lineToTensor, NLLLoss, the manual update
`p.data.add_(p.grad.data, alpha=-learning_rate)`).

Changed: three names and three categories, 16 hidden units; the loop over characters and the
loss are the function `step`, compiled (the loop unrolls into one graph per name length).
"""

# ruff: noqa: UP008 - the original's super(RNN, self)

import string

import minitorch as torch
import minitorch.nn as nn


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = self.i2h(combined)
        output = self.h2o(hidden)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)


def letterToIndex(letter):
    return all_letters.find(letter)


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


criterion = nn.NLLLoss()


def step(rnn, category_tensor, line_tensor):
    hidden = rnn.initHidden()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    return criterion(output, category_tensor)


def main():
    torch.manual_seed(0)
    rnn = RNN(n_letters, 16, 3)
    compiled_step = torch.compile(step)
    losses = []
    for line, cat in [("Albert", 0), ("Satoshi", 1), ("Albert", 0)]:
        category_tensor = torch.tensor([cat], dtype=torch.long)
        line_tensor = lineToTensor(line)
        rnn.zero_grad()
        loss = compiled_step(rnn, category_tensor, line_tensor)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-0.005)
        print(f"{line} loss {loss.item():.4f}")
        losses.append(loss.item())
    return losses
