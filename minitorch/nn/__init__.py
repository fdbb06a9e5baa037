"""Neural-network building blocks, as `torch.nn`: Module, layers, losses, init, functional.

    net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    loss = nn.CrossEntropyLoss()(net(x), labels)

One file per concept: module.py (the base class), parameter.py, then the layers by kind
(linear, conv, pooling, normalization, activation, dropout, sparse, flatten, container,
loss), functional.py (the same as functions), init.py (initialisations), utils/fusion.py.
"""

from minitorch.nn import functional, init, utils
from minitorch.nn.activation import GELU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from minitorch.nn.container import ModuleList, Sequential
from minitorch.nn.conv import Conv2d
from minitorch.nn.dropout import Dropout
from minitorch.nn.flatten import Flatten
from minitorch.nn.linear import Identity, Linear
from minitorch.nn.loss import CrossEntropyLoss, MSELoss, NLLLoss
from minitorch.nn.module import Module
from minitorch.nn.normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from minitorch.nn.parameter import Parameter
from minitorch.nn.pooling import AvgPool2d, MaxPool2d
from minitorch.nn.sparse import Embedding

__all__ = [
    "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "Conv2d", "CrossEntropyLoss", "Dropout",
    "Embedding", "Flatten", "GELU", "Identity", "LayerNorm", "Linear", "LogSoftmax",
    "MSELoss", "MaxPool2d", "Module", "ModuleList", "NLLLoss", "Parameter", "ReLU",
    "Sequential", "Sigmoid", "Softmax", "Tanh", "functional", "init", "utils",
]
