"""Neural-network building blocks, as `torch.nn`: Module, layers, losses, init, functional.

    net = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    loss = nn.CrossEntropyLoss()(net(x), labels)

One file per concept: module.py (the base class), parameter.py, then the layers by kind
(linear, conv, conv_transpose, pooling, normalization, instancenorm, activation, dropout,
sparse, flatten, padding, upsampling, container, loss, parallel/), functional.py (the same
as functions; the losses in functional_losses.py, pad and interpolate in functional_shape.py,
the rest in functional_extra.py), init.py (initialisations), utils/ (fusion.py,
clip_grad.py).

Recurrent layers and the Transformer (nn.RNN, nn.LSTM, nn.GRU, nn.Transformer,
nn.MultiheadAttention) are out of scope: models write attention from Linear, matmul and
softmax, as nanoGPT does.
"""

from minitorch.nn import functional, init, parallel, utils
from minitorch.nn.activation import (
    ELU,
    GELU,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from minitorch.nn.container import ModuleDict, ModuleList, Sequential
from minitorch.nn.conv import Conv2d
from minitorch.nn.conv_transpose import ConvTranspose2d
from minitorch.nn.dropout import Dropout
from minitorch.nn.flatten import Flatten
from minitorch.nn.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from minitorch.nn.linear import Identity, Linear
from minitorch.nn.loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from minitorch.nn.module import Module
from minitorch.nn.normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from minitorch.nn.padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from minitorch.nn.parallel import DataParallel
from minitorch.nn.parameter import Parameter
from minitorch.nn.pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from minitorch.nn.sparse import Embedding
from minitorch.nn.upsampling import (
    PixelShuffle,
    PixelUnshuffle,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
)

__all__ = [
    "AdaptiveAvgPool2d",
    "AvgPool2d",
    "BCELoss",
    "BCEWithLogitsLoss",
    "BatchNorm1d",
    "BatchNorm2d",
    "Conv2d",
    "CrossEntropyLoss",
    "Dropout",
    "Embedding",
    "Flatten",
    "GELU",
    "GroupNorm",
    "HuberLoss",
    "Identity",
    "L1Loss",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "LogSoftmax",
    "MSELoss",
    "MaxPool2d",
    "Module",
    "ModuleDict",
    "ModuleList",
    "NLLLoss",
    "Parameter",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "SmoothL1Loss",
    "Softmax",
    "Tanh",
    "functional",
    "init",
    "utils",
    "ConstantPad2d",
    "ConvTranspose2d",
    "DataParallel",
    "ELU",
    "InstanceNorm2d",
    "PixelShuffle",
    "PixelUnshuffle",
    "ReflectionPad2d",
    "ReplicationPad2d",
    "SiLU",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "ZeroPad2d",
    "parallel",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad3d",
    "InstanceNorm1d",
    "InstanceNorm3d",
]
