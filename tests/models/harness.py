"""What "a model compiles whole" means, checked the same way for every model of the suite.

`check_compiles_whole(make_model, loss_of, batches)` builds the model twice from one seed and
trains one copy eagerly and the other through `minitorch.compile(step)`, where
`step(model, *batch)` is the user's forward and loss. For each batch it holds:

- the compiled loss and every parameter's gradient equal eager's (and every buffer after the
  step: BatchNorm's running statistics are mutations the graph must write back);
- with warnings as errors: no fallback warning, nothing run eagerly;
- after the first batch, the step is one cache entry with one graph and no graph break, and
  later batches hit it (no recompile);
- `explain` of the step shows one graph and no break.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np

import minitorch
from minitorch import _dynamo
from tracer.dynamo import cache_entries, fallback_reasons

RTOL = ATOL = 2e-5  # float32: the order of the compiled kernels' sums differs from numpy's


def check_compiles_whole(
    make_model: Callable[[], minitorch.nn.Module], step: Callable, batches: Sequence[tuple]
) -> None:
    _dynamo.reset()
    minitorch.manual_seed(0)
    eager = make_model()
    minitorch.manual_seed(0)
    # NOTE: not a deepcopy: a closure stored on a module (minGPT's `self.mlpf = lambda x: ...`
    # over a local `m`) is copied by reference, so the copy would run the original's layers.
    compiled = make_model()

    def compiled_step(x, y):  # every batch is an input and a target
        return step(compiled, x, y)

    compiled_fn = minitorch.compile(compiled_step)
    for n, batch in enumerate(batches):
        want = _run(lambda x, y: step(eager, x, y), eager, batch)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = _run(compiled_fn, compiled, batch)
        _assert_same(got, want, f"batch {n}")
        assert fallback_reasons(compiled_step) == [], fallback_reasons(compiled_step)
        (entry,) = cache_entries(compiled_step)  # the first batch's capture, hit by the others
        assert entry.graph_breaks == [], entry.graph_breaks

    explained = _dynamo.explain(compiled_step)(*batches[-1])
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained


def _run(fn: Callable, model: minitorch.nn.Module, batch: tuple) -> dict[str, np.ndarray]:
    """The loss, each parameter's gradient and each buffer after one forward and backward."""
    minitorch.manual_seed(1)  # dropout draws the same masks on both sides
    model.zero_grad(set_to_none=True)
    loss = fn(*batch)
    loss.backward()
    values = {"loss": loss.detach().numpy().copy()}
    for name, p in model.named_parameters():
        assert p.grad is not None, f"{name} got no gradient"
        values[f"grad of {name}"] = p.grad.numpy().copy()
    for name, b in model.named_buffers():
        values[f"buffer {name}"] = b.numpy().copy()
    return values


def _assert_same(got: dict, want: dict, where: str) -> None:
    assert got.keys() == want.keys()
    for key in want:
        np.testing.assert_allclose(
            got[key], want[key], rtol=RTOL, atol=ATOL, err_msg=f"{where}: {key}"
        )
