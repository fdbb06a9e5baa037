"""The whole-model suites again, under the partitioner that config.partitioner does not pick,
so that both partitioners stay held to eager training: the conformance suite's training test
(tests/conformance/test_training.py) on every backend, and the models of tests/models."""

from __future__ import annotations

import pytest

from codegen.registry import backend_names, get_backend
from minitorch import config
from minitorch.device import cuda_is_available
from tests.conformance import test_training as training
from tests.models import test_models as models

PARTITIONERS = ("default", "min_cut")  # the two in the tree (others may be registered)

OTHER = next(p for p in PARTITIONERS if p != config.partitioner)


@pytest.fixture(autouse=True)
def other_partitioner(monkeypatch):
    monkeypatch.setattr(config, "partitioner", OTHER)


@pytest.mark.parametrize("name", backend_names())
def test_compile_and_train_a_small_model(name, monkeypatch):
    backend = get_backend(name)
    if backend.device == "cuda" and not cuda_is_available():
        pytest.skip(f"{name!r} runs on a GPU; none here")
    training.test_compile_and_train_a_small_model(backend, monkeypatch)


@pytest.mark.parametrize("name", list(models.WORKLOADS))
def test_model_compiles_whole(name):
    models.test_model_compiles_whole(name)
