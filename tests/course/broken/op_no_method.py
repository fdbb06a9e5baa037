"""Broken: no Tensor method, so `x.softplus()` does not exist."""

from tests.course.broken._softplus import register

register(tensor_method=False)
