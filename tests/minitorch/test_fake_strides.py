"""Fake tensors have eager's strides: a traced view reads as the eager one.

A view's `stride()`, `is_contiguous()` and whether `view` can regroup it are observable, so the
fake tensors that tracers run on must give the strides eager's (numpy's) kernels give; see
[Note: the strides of views] in minitorch/ops/views_meta.py. Every test runs the same chain of
views on real tensors and on fakes (under `FakeTensorMode`, as `make_fx` node metadata, and
through `minitorch.compile`), and holds the fakes to eager.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from minitorch.errors import ShapeError
from minitorch.fake import FakeTensorMode, fake_like
from minitorch.tensor import Tensor
from tracer.aot.make_fx import make_fx
from tracer.fx import Interpreter


def arange(*shape):
    return minitorch.tensor(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))


GOOD = {  # name: (input shape, a chain of views eager runs)
    "slice_step": ((3, 3), lambda x: x[:, ::2]),
    "row_slice_view": ((4, 6), lambda x: x[::2].view(2, 3, 2)),
    "transpose": ((3, 4), lambda x: x.T),
    "transpose_split_view": ((3, 4), lambda x: x.T.view(2, 2, 1, 3)),
    "mT_flatten_view": ((2, 3, 4), lambda x: x.mT.flatten(0, 1).view(2, 12)),
    "permute_merge_view": ((2, 3, 4), lambda x: x.permute(2, 0, 1).view(4, 6)),
    "expand": ((3, 4), lambda x: x[:, None].expand(3, 5, 4)),
    "expand_split_view": ((3, 4), lambda x: x[:, None].expand(3, 5, 4).view(3, 5, 2, 2)),
    "expand_reshape": ((3, 4), lambda x: x[:, None].expand(3, 2, 4).reshape(6, 4)),
    "expand_new_dims": ((1, 3), lambda x: x.expand(2, 4, 3)),
    "unsqueeze_squeeze": ((3, 4), lambda x: x.T.unsqueeze(1).squeeze(1).unsqueeze(0)),
    "size_one_dims_view": ((3, 4), lambda x: x[:, :1].T.view(-1)),
    "index_mixed": ((4, 5, 6), lambda x: x[1, None, ..., ::3]),
    "index_then_view": ((4, 5, 6), lambda x: x[1:3, :, ::2].view(-1)),
    "flatten_copy_view": ((3, 4), lambda x: x.T.flatten().view(2, 6)),
    "contiguous_view": ((3, 4), lambda x: x.T.contiguous().view(-1)),
    "empty_slice_view": ((3, 4), lambda x: x[:0, ::2].view(-1)),
    "scalar_views": ((3, 4), lambda x: x[1, 2].view(1).expand(3)),
}
BAD = {  # name: (input shape, a chain of views ending in a `view` eager refuses)
    "slice_step_view": ((3, 3), lambda x: x[:, ::2].view(-1)),
    "transpose_view": ((3, 4), lambda x: x.T.view(-1)),
    "permute_merge_view_bad": ((2, 3, 4), lambda x: x.permute(2, 0, 1).view(8, 3)),
    "expand_view": ((3, 4), lambda x: x[:, None].expand(3, 5, 4).view(15, 4)),
    "index_then_view_bad": ((4, 5, 6), lambda x: x[:, 1:4:2, 2:].view(-1)),
}
CHAINS = {**GOOD, **BAD}


def eager_error(fn, x) -> str:
    with pytest.raises(ShapeError) as info:
        fn(x)
    return str(info.value)


def test_eager_runs_the_good_chains_and_refuses_the_bad():
    for shape, fn in GOOD.values():
        fn(arange(*shape))
    for shape, fn in BAD.values():
        eager_error(fn, arange(*shape))


@pytest.mark.parametrize("name", GOOD)
def test_fake_strides_are_eager_strides(name):
    shape, fn = GOOD[name]
    x = arange(*shape)
    out = fn(x)
    with FakeTensorMode():
        fake = fn(fake_like(x))
    assert tuple(fake.shape) == tuple(out.shape)
    assert fake.stride() == out.stride()
    assert fake.is_contiguous() == out.is_contiguous()


@pytest.mark.parametrize("name", BAD)
def test_fake_view_refuses_as_eager_does(name):
    shape, fn = BAD[name]
    x = arange(*shape)
    message = eager_error(fn, x)
    with FakeTensorMode(), pytest.raises(ShapeError) as info:
        fn(fake_like(x))
    assert str(info.value) == message


class Recording(Interpreter):
    """Runs a graph eagerly and keeps every node's real value."""

    def __init__(self, module) -> None:
        super().__init__(module)
        self.values = {}

    def run_node(self, node):
        self.values[node] = super().run_node(node)
        return self.values[node]


@pytest.mark.parametrize("name", GOOD)
def test_traced_node_values_have_eager_strides(name):
    shape, fn = GOOD[name]
    x = arange(*shape)
    gm = make_fx(fn)(x)
    interpreter = Recording(gm)
    interpreter.run(x)
    checked = 0
    for node, real in interpreter.values.items():
        fake = node.meta.get("val")
        if isinstance(real, Tensor) and isinstance(fake, Tensor):
            assert fake.stride() == real.stride(), node.format_node()
            checked += 1
    assert checked >= 2  # the input and at least one view


@pytest.fixture
def fresh_caches():
    minitorch._dynamo.reset()
    yield
    minitorch._dynamo.reset()


@pytest.mark.usefixtures("fresh_caches")
@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("name", CHAINS)
def test_compiled_chain_gives_eager_values_or_error(name, backend):
    shape, fn = CHAINS[name]
    x = arange(*shape)
    compiled = minitorch.compile(fn, backend=backend)
    if name in BAD:
        message = eager_error(fn, x)
        with pytest.raises(ShapeError) as info:
            compiled(x)
        assert str(info.value) == message
    else:
        np.testing.assert_array_equal(compiled(x).numpy(), fn(x).numpy())


def test_contiguous_of_a_transpose_is_a_copy_when_compiled():
    """`contiguous()` reads is_contiguous() while tracing: on a row-major fake of x.T it kept
    the view, and the compiled result aliased x where eager's is a copy."""
    x = arange(3, 4)
    minitorch._dynamo.reset()
    for backend in ("aot_eager", "inductor"):
        out = minitorch.compile(lambda t: t.T.contiguous(), backend=backend)(x)
        assert out.is_contiguous()
        assert not np.shares_memory(out.numpy(), x.numpy())
    minitorch._dynamo.reset()


# ---- random chains ---------------------------------------------------------------------------


@st.composite
def strided_inputs(draw):
    """A real tensor with a non-trivial layout: permuted, sliced with steps, maybe empty."""
    shape = draw(st.lists(st.integers(0, 4), min_size=0, max_size=4))
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    a = a.transpose(draw(st.permutations(range(len(shape)))))
    steps = tuple(slice(None, None, draw(st.integers(1, 2))) for _ in shape)
    return minitorch.from_numpy(a[(*steps, ...)])  # `...`: a 0-d array stays an array


def _factorization(draw, n: int) -> tuple[int, ...]:
    """A shape with n elements, size-1 dims sprinkled in: 12 -> (3, 1, 4), (12,), ..."""
    out = []
    while n > 1:
        d = draw(st.sampled_from([d for d in range(2, n + 1) if n % d == 0]))
        out.append(d)
        n //= d
    for _ in range(draw(st.integers(0, 2))):
        out.insert(draw(st.integers(0, len(out))), 1)
    return tuple(out)


def _key(draw, shape) -> tuple:
    items: list = []
    for n in shape[: draw(st.integers(0, len(shape)))]:
        if n and draw(st.booleans()):
            items.append(draw(st.integers(-n, n - 1)))
        else:
            start = draw(st.integers(0, n))
            items.append(slice(start, draw(st.integers(start, n)), draw(st.integers(1, 3))))
    for _ in range(draw(st.integers(0, 1))):
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return tuple(items)


def random_view(draw, shape: tuple[int, ...]):
    """One view op for a tensor of `shape`, as a function (and its name, for failures)."""
    kind = draw(
        st.sampled_from(
            [
                "index",
                "permute",
                "expand",
                "reshape",
                "view",
                "flatten",
                "unsqueeze",
                "squeeze",
                "transpose",
            ]
        )
    )
    ndim = len(shape)
    if kind == "index":
        key = _key(draw, shape)
        return f"[{key}]", lambda t: t[key]
    if kind == "permute":
        dims = tuple(draw(st.permutations(range(ndim))))
        return f"permute{dims}", lambda t: t.permute(*dims)
    if kind == "expand":
        lead = tuple(draw(st.lists(st.integers(1, 3), max_size=1)))
        sizes = (*lead, *(draw(st.integers(1, 3)) if n == 1 else n for n in shape))
        return f"expand{sizes}", lambda t: t.expand(*sizes)
    if kind in ("reshape", "view"):
        numel = int(np.prod(shape))
        new = _factorization(draw, numel) if numel else (0, *(n for n in shape if n))
        return f"{kind}{new}", lambda t: getattr(t, kind)(*new)
    if kind == "flatten":
        start = draw(st.integers(0, max(ndim - 1, 0)))
        end = draw(st.integers(start, max(ndim - 1, 0)))
        return f"flatten({start}, {end})", lambda t: t.flatten(start, end)
    if kind == "unsqueeze":
        dim = draw(st.integers(-ndim - 1, ndim))
        return f"unsqueeze({dim})", lambda t: t.unsqueeze(dim)
    if kind == "squeeze":
        return "squeeze()", lambda t: t.squeeze()
    if ndim == 0:
        return "T", lambda t: t.T
    d0, d1 = draw(st.integers(0, ndim - 1)), draw(st.integers(0, ndim - 1))
    return f"transpose({d0}, {d1})", lambda t: t.transpose(d0, d1)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_random_view_chains_have_eager_strides(data):
    x = data.draw(strided_inputs())
    real, fake = x, fake_like(x)
    steps = []
    for _ in range(data.draw(st.integers(1, 4))):
        name, view = random_view(data.draw, tuple(real.shape))
        steps.append(name)
        try:
            real = view(real)
        except ShapeError as e:  # a `view` that needs a copy: the fake refuses it too
            with FakeTensorMode(), pytest.raises(ShapeError) as info:
                view(fake)
            assert str(info.value) == str(e), steps
            return
        with FakeTensorMode():
            fake = view(fake)
        assert tuple(fake.shape) == tuple(real.shape), steps
        assert fake.stride() == real.stride(), (x.shape, x.stride(), steps)
        assert fake.is_contiguous() == real.is_contiguous(), steps


# ---- pointwise results: [Note: the layout of pointwise results] in minitorch/fake.py -------


def _reordered(array: np.ndarray, how: str) -> Tensor:
    """A tensor of `array`'s values whose memory runs another way: dims reversed (a
    permuted view), every other element of a wider row (a strided slice), or row-major."""
    if how == "reversed" and array.ndim >= 2:
        dims = tuple(reversed(range(array.ndim)))
        return minitorch.tensor(np.ascontiguousarray(array.transpose(dims))).permute(*dims)
    if how == "strided" and array.ndim >= 1:
        wide = np.repeat(array, 2, axis=-1)
        return minitorch.tensor(wide)[..., ::2]
    return minitorch.tensor(array)


def _pointwise_cases():
    from tests.minitorch.test_op_table import CASES, OPS

    return [case for case in CASES if OPS[case.values[0]].kind == "pointwise"]


@pytest.mark.parametrize("how", ["reversed", "strided", "first_only"])
@pytest.mark.parametrize("name, index, sample", _pointwise_cases())
def test_pointwise_results_have_eagers_strides(name, index, sample, how):
    from tests.minitorch.test_op_table import OPS, _draw, _map_arrays, _outputs

    args, kwargs = sample
    seen = []

    def make(a):
        seen.append(a)
        mode = "reversed" if how == "first_only" and len(seen) == 1 else how
        return _reordered(a, "row_major" if how == "first_only" and len(seen) > 1 else mode)

    tensors = _map_arrays(_draw(args, seed=index), make)
    eager = _outputs(OPS[name](*tensors, **kwargs))
    with FakeTensorMode():
        fake = _outputs(OPS[name](*_map_arrays_tensors(tensors), **kwargs))
    assert [o.stride() for o in fake] == [o.stride() for o in eager]


def _map_arrays_tensors(args):
    if isinstance(args, Tensor):
        return fake_like(args)
    if isinstance(args, (list, tuple)):
        return type(args)(_map_arrays_tensors(a) for a in args)
    return args


def test_contiguous_of_a_transposed_result_copies_when_compiled():
    """cos(x.t()) is transposed in memory, so eager's contiguous() copies it: compiled, the
    two outputs must not be one tensor (they were when fakes were always row-major)."""

    def f(x):
        t = minitorch.cos(x.t())
        return t.contiguous(), t

    x = minitorch.randn(3, 4)
    eager, compiled = f(x), minitorch.compile(f, backend="inductor")(x)
    for e, c in zip(eager, compiled):
        assert c.stride() == e.stride() and c.is_contiguous() == e.is_contiguous()
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-6)
    compiled[1].mul_(2.0)
    assert not np.allclose(compiled[0].numpy(), compiled[1].numpy())
