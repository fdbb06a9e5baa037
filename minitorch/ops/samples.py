"""Samples of the ops a plugin adds: arguments to call each with, and numpy's answer.

The table's own rows keep their samples in tests/minitorch/op_samples/ (test_op_table.py checks
each against numpy and finite differences). An op added by a plugin ([Note: adding an op from a
plugin] in registry.py) cannot edit the tests, so it registers its samples here, and the
course's grader runs them the same three ways: value against `reference`, shape and dtype,
and (for `grad=True`) the gradient against central finite differences of `reference`.

    register_samples(
        "softplus",
        [((np.linspace(-30, 30, 50, dtype=np.float32),), {}),      # (args, kwargs): arrays
         ((np.linspace(-3, 3, 7),), {"beta": 2.0, "threshold": 4.0})],   # are tensors
        reference=lambda x, beta=1.0, threshold=20.0: ...,        # in float64 numpy
    )
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class OpSamples:
    """How to test one op a plugin added."""

    samples: list[tuple[tuple, dict]]  # (args, kwargs); a numpy array stands for a tensor
    reference: Callable  # numpy's answer, called with float64 arrays and the same kwargs
    grad: bool = True  # check derivatives by finite differences (float samples only)


# op name -> its samples, for the ops plugins added
SAMPLES: dict[str, OpSamples] = {}


def register_samples(
    name: str, samples: list[tuple[tuple, dict]], reference: Callable, *, grad: bool = True
) -> OpSamples:
    """Record `samples` of the op `name`, and the numpy `reference` they are checked against."""
    if not samples:
        raise ValueError(f"{name}: register at least one sample")
    for sample in samples:
        if not (isinstance(sample, tuple) and len(sample) == 2 and isinstance(sample[1], dict)):
            raise ValueError(f"{name}: a sample is (args, kwargs), got {sample!r}")
    SAMPLES[name] = OpSamples(list(samples), reference, grad)
    return SAMPLES[name]
