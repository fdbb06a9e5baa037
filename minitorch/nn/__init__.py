"""Neural-network building blocks (widened to the whole SPEC in a later issue)."""

from minitorch.nn.module import Module
from minitorch.nn.parameter import Parameter

__all__ = ["Module", "Parameter"]
