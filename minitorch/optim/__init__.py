"""Optimizers: update parameters from their gradients, `optimizer.step()`, as torch.optim.

    opt = minitorch.optim.Adam(model.parameters(), lr=1e-3)
    opt.zero_grad(); loss.backward(); opt.step()

optimizer.py holds what every method shares (parameter groups, state, state_dict); each method
is one file with its update formula at the top. lr_scheduler.py changes the learning rate
between steps (StepLR, LambdaLR, CosineAnnealingLR).
"""

from minitorch.optim import lr_scheduler
from minitorch.optim.adam import Adam
from minitorch.optim.adamw import AdamW
from minitorch.optim.optimizer import Optimizer
from minitorch.optim.sgd import SGD

__all__ = ["Adam", "AdamW", "Optimizer", "SGD", "lr_scheduler"]
