"""Optimizers: update parameters from their gradients, `optimizer.step()`, as torch.optim.

    opt = minitorch.optim.Adam(model.parameters(), lr=1e-3)
    opt.zero_grad(); loss.backward(); opt.step()

optimizer.py holds what every method shares (parameter groups, state, state_dict); each method
is one file with its update formula at the top.
"""

from minitorch.optim.adam import Adam
from minitorch.optim.optimizer import Optimizer
from minitorch.optim.sgd import SGD

__all__ = ["Adam", "Optimizer", "SGD"]
