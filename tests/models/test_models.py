"""Real model code compiles whole: one graph, no break, eager's loss and gradients.

The models are benchmarks/train_step.py's workloads, written as their public originals are
(an MLP classifier over int64 labels, pytorch/examples' MNIST net, nanoGPT through
examples/gpt.py, torchvision's BasicBlock through examples/cnn.py, attention with softmax
written three ways), here at batch sizes small enough to run in a second. See harness.py for
what is checked.
"""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.train_step import workloads
from tests.models.harness import check_compiles_whole

WORKLOADS = {w.name: w for w in workloads()}


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_model_compiles_whole(name):
    workload = WORKLOADS[name]
    rng = np.random.default_rng(0)
    batches = [workload.batch(rng, 3) for _ in range(2)]
    check_compiles_whole(workload.make_model, workload.step, batches)
