"""Tensor functions and methods real programs reach for: outer, diag,
unbind, repeat, repeat_interleave, new_*, std, any/all, isnan/isinf/isfinite, the logical and
bitwise ops, cumsum/cumprod, flip, einsum, keyword sizes, as_tensor, the legacy tensor types,
memory formats, and the clear errors for complex and sparse tensors.

Each is checked against numpy (or PyTorch's documented behaviour), eagerly and under
`minitorch.compile` with each backend; gradients against central finite differences.
The per-op samples are in op_samples/extra.py (run by test_op_table.py and test_op_coverage.py).
"""

from __future__ import annotations

import numpy as np
import pytest

import minitorch
from minitorch._dynamo import explain
from minitorch.errors import DTypeError, InvalidArgumentError, MinitorchError, ShapeError
from tracer.dynamo import reset

BACKENDS = ["eager", "aot_eager", "inductor"]


def _as_list(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def assert_compiled_equals_eager(fn, *args, backend: str, fullgraph: bool = True) -> None:
    """fn compiled with `backend` gives eager's values, dtypes and shapes."""
    reset()
    got = _as_list(minitorch.compile(fn, backend=backend, fullgraph=fullgraph)(*args))
    want = _as_list(fn(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert (g.dtype, tuple(g.shape)) == (w.dtype, tuple(w.shape))
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-5, atol=1e-6)


def finite_difference_grad(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d f(x).sum() / dx by central differences, in float64."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        grad[i] = (f(x + step).sum() - f(x - step).sum()) / (2 * eps)
    return grad


# ---- einsum --------------------------------------------------------------------------------

EQUATIONS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),  # matmul
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),  # batched
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),  # attention's scores
    ("bhqk,bhkd->bhqd", [(2, 3, 4, 6), (2, 3, 6, 5)]),  # attention's output
    ("i,j->ij", [(3,), (4,)]),  # outer
    ("i,i->", [(5,), (5,)]),  # dot
    ("ij->j", [(3, 4)]),  # a reduction
    ("ij->ji", [(3, 4)]),  # a transpose
    ("ijk->", [(2, 3, 4)]),  # everything
    ("ij,jk", [(3, 4), (4, 5)]),  # implicit output: ik
    ("ba,ca", [(3, 4), (2, 4)]),  # implicit output, alphabetical: bc
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),  # ellipsis
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),  # three operands
    ("ij,kl->ijkl", [(2, 3), (4, 5)]),  # no shared letter
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),  # bilinear
]


@pytest.mark.parametrize("equation, shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_matches_numpy_and_its_gradient_finite_differences(equation, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    tensors = [minitorch.tensor(a, requires_grad=True) for a in arrays]
    out = minitorch.einsum(equation, *tensors)
    np.testing.assert_allclose(out.detach().numpy(), np.einsum(equation, *arrays), rtol=1e-10)
    out.sum().backward()
    for i, a in enumerate(arrays):

        def f(x, i=i):
            return np.einsum(equation, *arrays[:i], x, *arrays[i + 1 :])

        np.testing.assert_allclose(
            tensors[i].grad.numpy(), finite_difference_grad(f, a), rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize("backend", BACKENDS)
def test_einsum_compiles_whole_to_attention_scores(backend):
    q, k = minitorch.randn(2, 3, 4, 5), minitorch.randn(2, 3, 6, 5)
    assert_compiled_equals_eager(
        lambda q, k: minitorch.einsum("bhqd,bhkd->bhqk", q, k) * 0.5, q, k, backend=backend
    )


def test_einsum_takes_a_list_of_operands():
    a, b = minitorch.randn(2, 3), minitorch.randn(3, 4)
    assert minitorch.allclose(minitorch.einsum("ij,jk->ik", [a, b]), a @ b)


@pytest.mark.parametrize(
    "equation, shapes, match",
    [
        ("ii->i", [(3, 3)], "repeats a letter within one operand"),
        ("ii", [(3, 3)], "repeats a letter within one operand"),  # a trace
        ("ij,jk->ik", [(3, 4)], "names 2 operands, but 1 were given"),
        ("ij,jk->ik", [(3, 4), (5, 6)], "stands for sizes 4 and 5"),
        ("ij->k", [(3, 4)], "only letters of the operands"),
        ("ijk->i", [(3, 4)], "do not match an operand with 2 dims"),
        ("iJ->i", [(3, 4)], "lowercase letters"),
    ],
)
def test_einsum_refuses_what_it_does_not_support_naming_the_equation(equation, shapes, match):
    with pytest.raises(ShapeError, match=match):
        minitorch.einsum(equation, *[minitorch.ones(s) for s in shapes])


# ---- outer, diag, unbind, repeat, repeat_interleave, flip ------------------------------------


def test_outer_and_diag_match_numpy():
    u, v = np.arange(3.0), np.arange(4.0) - 1
    np.testing.assert_array_equal(
        minitorch.outer(minitorch.tensor(u), minitorch.tensor(v)).numpy(), np.outer(u, v)
    )
    m = np.arange(12.0).reshape(3, 4)
    for k in (-2, 0, 1, 3, 9):
        np.testing.assert_array_equal(minitorch.tensor(m).diag(k).numpy(), np.diag(m, k))
        np.testing.assert_array_equal(minitorch.diag(minitorch.tensor(u), k).numpy(), np.diag(u, k))
    with pytest.raises(ShapeError, match="diag"):
        minitorch.diag(minitorch.ones(2, 2, 2))
    with pytest.raises(ShapeError, match="outer"):
        minitorch.outer(minitorch.ones(2, 2), minitorch.ones(2))


def test_diag_of_a_vector_sends_the_gradient_back_from_the_diagonal_only():
    v = minitorch.tensor([1.0, 2.0], requires_grad=True)
    weights = minitorch.arange(9.0).reshape(3, 3)
    (minitorch.diag(v, 1) * weights).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [1.0, 5.0])  # weights[0, 1], weights[1, 2]


def test_unbind_gives_views_along_a_dim():
    x = minitorch.arange(6.0).reshape(2, 3)
    parts = minitorch.unbind(x, dim=1)
    assert len(parts) == 3 and [p.tolist() for p in parts] == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert [p.tolist() for p in x.unbind()] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    parts[0].mul_(10)  # a view, as in PyTorch: the write reaches x
    assert x[1, 0].item() == 30.0
    with pytest.raises(ShapeError):
        minitorch.unbind(minitorch.tensor(1.0))


def test_repeat_tiles_as_numpy_tile():
    x = np.arange(6).reshape(2, 3)
    t = minitorch.tensor(x)
    np.testing.assert_array_equal(t.repeat(2, 1).numpy(), np.tile(x, (2, 1)))
    np.testing.assert_array_equal(t.repeat((1, 2, 2)).numpy(), np.tile(x, (1, 2, 2)))
    with pytest.raises(ShapeError, match="number of repeats"):
        t.repeat(2)


def test_repeat_interleave_with_int_and_tensor_repeats():
    x = np.arange(6.0).reshape(2, 3)
    t = minitorch.tensor(x)
    np.testing.assert_array_equal(minitorch.repeat_interleave(t, 2).numpy(), np.repeat(x, 2))
    np.testing.assert_array_equal(t.repeat_interleave(2, dim=1).numpy(), np.repeat(x, 2, 1))
    counts = minitorch.tensor([1, 0, 2])
    np.testing.assert_array_equal(
        t.repeat_interleave(counts, dim=1).numpy(), np.repeat(x, [1, 0, 2], axis=1)
    )
    np.testing.assert_array_equal(minitorch.repeat_interleave(counts).numpy(), [0, 2, 2])
    with pytest.raises(ShapeError, match="same size as input along dim"):
        t.repeat_interleave(counts, dim=0)


def test_repeat_interleave_by_a_tensor_breaks_the_graph_and_still_equals_eager():
    def fn(x, counts):
        return x.repeat_interleave(counts, dim=0) * 2

    x, counts = minitorch.randn(3, 2), minitorch.tensor([2, 0, 1])
    assert_compiled_equals_eager(fn, x, counts, backend="inductor", fullgraph=False)
    report = explain(fn)(x, counts)
    assert report.graph_break_count >= 1
    assert "data-dependent" in str(report)


def test_repeat_interleave_gradient_sums_the_copies():
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    (x.repeat_interleave(3) * minitorch.arange(6.0)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0 + 1 + 2, 3 + 4 + 5])


def test_flip_fliplr_flipud():
    x = np.arange(24).reshape(2, 3, 4)
    t = minitorch.tensor(x)
    np.testing.assert_array_equal(minitorch.flip(t, [0, 2]).numpy(), np.flip(x, (0, 2)))
    np.testing.assert_array_equal(t.flip(-1).numpy(), np.flip(x, -1))
    np.testing.assert_array_equal(minitorch.fliplr(t).numpy(), np.fliplr(x))
    np.testing.assert_array_equal(minitorch.flipud(t).numpy(), np.flipud(x))
    with pytest.raises(ShapeError, match="fliplr"):
        minitorch.fliplr(minitorch.ones(3))
    with pytest.raises(ShapeError, match="appears multiple times"):
        t.flip(0, 0)


# ---- std, any, all -------------------------------------------------------------------------


def test_std_takes_unbiased_and_correction_as_pytorch():
    x = np.random.default_rng(1).standard_normal((3, 4))
    t = minitorch.tensor(x)
    np.testing.assert_allclose(t.std().item(), np.std(x, ddof=1))
    np.testing.assert_allclose(minitorch.std(t, False).item(), np.std(x))  # std(x, unbiased)
    np.testing.assert_allclose(t.std(dim=1, unbiased=False).numpy(), np.std(x, 1))
    np.testing.assert_allclose(
        t.std(0, keepdim=True, correction=2).numpy(), np.std(x, 0, ddof=2, keepdims=True)
    )
    with pytest.raises(DTypeError, match="std"):
        minitorch.arange(3).std()
    with pytest.raises(MinitorchError, match="either unbiased or correction"):
        t.std(unbiased=True, correction=1)


def test_any_and_all_with_dims_and_over_nothing():
    x = np.array([[0.0, 1.0, np.nan], [0.0, 0.0, 2.0]])
    t = minitorch.tensor(x)
    assert t.any().item() is True and t.all().item() is False
    np.testing.assert_array_equal(t.any(dim=1).numpy(), [True, True])  # NaN is nonzero
    np.testing.assert_array_equal(t.all(0, keepdim=True).numpy(), [[False, False, True]])
    assert minitorch.any(minitorch.zeros(0)).item() is False
    assert minitorch.all(minitorch.zeros(0)).item() is True
    assert minitorch.any(t, dim=(0, 1)).dtype is minitorch.bool


# ---- isnan, isinf, isfinite, logical and bitwise ops ----------------------------------------


def test_isnan_isinf_isfinite():
    x = np.array([1.0, np.nan, np.inf, -np.inf, -0.0])
    t = minitorch.tensor(x)
    np.testing.assert_array_equal(minitorch.isnan(t).numpy(), np.isnan(x))
    np.testing.assert_array_equal(t.isinf().numpy(), np.isinf(x))
    np.testing.assert_array_equal(minitorch.isfinite(t).numpy(), np.isfinite(x))
    ints = minitorch.tensor([1, 2])
    assert ints.isnan().tolist() == [False, False] and ints.isfinite().tolist() == [True, True]


def test_operators_on_bool_and_integer_tensors():
    a, b = minitorch.tensor([True, True, False]), minitorch.tensor([True, False, False])
    assert (a & b).tolist() == [True, False, False]
    assert (a | b).tolist() == [True, True, False]
    assert (a ^ b).tolist() == [False, True, False]
    assert (~a).tolist() == [False, False, True]
    assert (a & True).tolist() == [True, True, False] and (False | b).dtype is minitorch.bool
    i, j = np.array([12, -7, 5]), np.array([10, 3, -1])
    ti, tj = minitorch.tensor(i), minitorch.tensor(j)
    np.testing.assert_array_equal((ti & tj).numpy(), i & j)
    np.testing.assert_array_equal((ti | tj).numpy(), i | j)
    np.testing.assert_array_equal((ti ^ 6).numpy(), i ^ 6)
    np.testing.assert_array_equal((~ti).numpy(), ~i)
    np.testing.assert_array_equal(minitorch.bitwise_not(ti.int()).numpy(), ~i.astype(np.int32))
    assert (ti.int() & tj).dtype is minitorch.int64  # promotes, as add does


def test_logical_ops_read_any_dtype_as_truth():
    x, y = minitorch.tensor([0.0, 2.0, np.nan]), minitorch.tensor([1, 0, 0])
    assert minitorch.logical_and(x, y).tolist() == [False, False, False]
    assert minitorch.logical_or(x, y).tolist() == [True, True, True]
    assert x.logical_xor(y).tolist() == [True, True, True]
    assert minitorch.logical_not(x).tolist() == [True, False, False]


def test_bitwise_ops_refuse_floats_by_name():
    x = minitorch.tensor([1.0, 2.0])
    with pytest.raises(DTypeError, match="bitwise_and"):
        x & x
    with pytest.raises(DTypeError, match="bitwise_not"):
        _ = ~x
    with pytest.raises(DTypeError, match="bitwise_or"):
        minitorch.tensor([1, 2]) | 1.5


@pytest.mark.parametrize("backend", BACKENDS)
def test_masks_combine_inside_compiled_code(backend):
    def fn(x):
        keep = (x > 0) & minitorch.isfinite(x) | ~(x < -1)
        return minitorch.where(keep ^ minitorch.isnan(x), x, 0.0), keep.any(1), keep.all()

    x = minitorch.tensor([[1.0, -2.0, np.inf], [np.nan, -0.5, 3.0]])
    assert_compiled_equals_eager(fn, x, backend=backend)


# ---- cumsum, cumprod -----------------------------------------------------------------------


def test_cumsum_and_cumprod_dtypes_as_pytorch():
    ints = minitorch.tensor([1, 2, 3], dtype=minitorch.int32)
    assert ints.cumsum(0).dtype is minitorch.int64 and ints.cumsum(0).tolist() == [1, 3, 6]
    assert minitorch.tensor([True, True]).cumsum(0).tolist() == [1, 2]
    assert ints.cumprod(0, dtype=minitorch.float64).dtype is minitorch.float64
    assert minitorch.cumsum(minitorch.ones(2, 3), dim=-1).tolist() == [[1, 2, 3], [1, 2, 3]]


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan_gradients_match_finite_differences_even_at_zeros(op):
    x = np.array([[1.5, 0.0, -2.0, 0.5], [0.0, 0.0, 3.0, -1.0]])
    weights = np.arange(8.0).reshape(2, 4)
    t = minitorch.tensor(x, requires_grad=True)
    (getattr(t, op)(1) * minitorch.tensor(weights)).sum().backward()
    expected = finite_difference_grad(lambda a: getattr(np, op)(a, axis=1) * weights, x)
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scans_compile_with_their_gradients(backend):
    def fn(x):
        return (x.cumprod(1) + minitorch.cumsum(x, 0).flip(0)).sum()

    x = np.array([[1.5, 0.0, -2.0], [0.5, 2.0, 3.0]])
    eager_x = minitorch.tensor(x, requires_grad=True)
    fn(eager_x).backward()
    compiled_x = minitorch.tensor(x, requires_grad=True)
    reset()
    minitorch.compile(fn, backend=backend, fullgraph=True)(compiled_x).backward()
    np.testing.assert_allclose(compiled_x.grad.numpy(), eager_x.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_arrangements_compile_whole(backend):
    def fn(x, v):
        parts = x.unbind(1)
        return (
            x.repeat(2, 1),
            minitorch.repeat_interleave(x, 2, dim=1),
            minitorch.diag(x),
            minitorch.diag(v, -1),
            minitorch.outer(v, v),
            parts[0] + parts[2],
            x.std(dim=0),
            x.fliplr(),
            minitorch.einsum("ij,j->i", x, v),
        )

    x, v = minitorch.randn(3, 3), minitorch.randn(3)
    assert_compiled_equals_eager(fn, x, v, backend=backend)


# ---- making tensors ------------------------------------------------------------------------


def test_new_methods_take_the_dtype_and_device_of_self():
    x = minitorch.zeros(2, dtype=minitorch.float64)
    assert x.new_zeros(2, 3).shape == (2, 3) and x.new_zeros((2, 3)).dtype is minitorch.float64
    assert x.new_ones(2).tolist() == [1.0, 1.0] and x.new_empty(4).shape == (4,)
    assert x.new_full((2,), 7).tolist() == [7.0, 7.0]
    made = x.new_tensor([1, 2])
    assert made.dtype is minitorch.float64 and made.tolist() == [1.0, 2.0]
    assert x.new_zeros(2, dtype=minitorch.int64).dtype is minitorch.int64
    assert x.new_ones(1, requires_grad=True).requires_grad


def test_factories_take_size_as_a_keyword():
    assert minitorch.zeros(size=(2, 3)).shape == (2, 3)
    assert minitorch.empty(size=[4]).shape == (4,)
    assert minitorch.ones(size=(1, 2), dtype=minitorch.int64).dtype is minitorch.int64
    assert minitorch.randn(size=(2,)).shape == (2,) and minitorch.rand(size=(3,)).shape == (3,)
    with pytest.raises(MinitorchError, match="pass one of them"):
        minitorch.zeros(2, size=(2,))


def test_as_tensor_copies_only_when_it_must():
    x = minitorch.ones(3)
    assert minitorch.as_tensor(x) is x
    assert minitorch.as_tensor(x, dtype=minitorch.float64).dtype is minitorch.float64
    array = np.zeros(3, dtype=np.float32)
    shared = minitorch.as_tensor(array)
    array[0] = 5.0  # as in PyTorch: a cpu array of the same dtype shares its memory
    assert shared[0].item() == 5.0
    assert minitorch.as_tensor([1, 2]).dtype is minitorch.int64
    assert minitorch.as_tensor(array, dtype=minitorch.float64).dtype is minitorch.float64


def test_legacy_tensor_types_make_tensors_and_check_instances():
    assert minitorch.FloatTensor([1, 2]).dtype is minitorch.float32
    assert minitorch.LongTensor(2, 3).shape == (2, 3)
    assert minitorch.DoubleTensor(minitorch.Size([2])).dtype is minitorch.float64
    assert minitorch.BoolTensor([True]).dtype is minitorch.bool
    assert minitorch.IntTensor().shape == (0,)
    assert isinstance(minitorch.zeros(2), minitorch.FloatTensor)
    assert not isinstance(minitorch.zeros(2), minitorch.LongTensor)
    assert isinstance(minitorch.arange(3), minitorch.LongTensor)
    assert not isinstance([1.0], minitorch.FloatTensor)
    with pytest.raises(MinitorchError, match="FloatTensor"):
        minitorch.FloatTensor(2, 2.5)


def test_is_xpu_is_false():
    assert minitorch.ones(1).is_xpu is False


# ---- memory formats ------------------------------------------------------------------------


def test_memory_formats_are_accepted_and_keep_values():
    x = minitorch.randn(2, 3, 4, 5)
    y = x.to(memory_format=minitorch.channels_last)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert x.contiguous(memory_format=minitorch.channels_last).tolist() == x.tolist()
    assert minitorch.empty_like(x, memory_format=minitorch.preserve_format).shape == x.shape
    assert minitorch.zeros_like(x, memory_format=minitorch.contiguous_format).shape == x.shape
    assert repr(minitorch.channels_last) == "minitorch.channels_last"  # as dtypes print
    with pytest.raises(MinitorchError, match="memory_format"):
        x.to(memory_format="channels_last")
    with pytest.raises(InvalidArgumentError, match="preserve_format"):
        x.contiguous(memory_format=minitorch.preserve_format)


def test_is_contiguous_reads_the_strides_in_the_format_order():
    x = minitorch.randn(2, 3, 4, 5)
    assert x.is_contiguous(memory_format=minitorch.contiguous_format)
    assert not x.is_contiguous(memory_format=minitorch.channels_last)  # strides are row-major
    nhwc = x.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)  # NHWC memory, NCHW shape
    assert nhwc.is_contiguous(memory_format=minitorch.channels_last)
    assert not minitorch.ones(3, 4).is_contiguous(memory_format=minitorch.channels_last)


# ---- complex and sparse: clear errors -----------------------------------------------------


@pytest.mark.parametrize(
    "call, op",
    [
        (lambda x: minitorch.polar(x, x), "polar"),
        (lambda x: minitorch.view_as_complex(x), "view_as_complex"),
        (lambda x: minitorch.complex(x, x), "complex"),
        (lambda x: minitorch.zeros(2, dtype=minitorch.complex64), "zeros"),
        (lambda x: x.to(dtype=minitorch.cfloat), "to"),
        (lambda x: minitorch.tensor([1.0], dtype=minitorch.complex128), "tensor"),
        (lambda x: minitorch.tensor([1.0, 2j]), "tensor"),
    ],
)
def test_complex_tensors_are_a_dtype_error_naming_the_op(call, op):
    with pytest.raises(DTypeError, match=rf"{op}\(\).*complex tensors are not supported"):
        call(minitorch.ones(2))
    assert minitorch.ones(2).is_complex() is False


def test_sparse_tensors_are_an_error_naming_the_op():
    x = minitorch.ones(2)
    with pytest.raises(InvalidArgumentError, match="to_sparse.*sparse tensors are not"):
        x.to_sparse()
    with pytest.raises(InvalidArgumentError, match="sparse_coo_tensor"):
        minitorch.sparse_coo_tensor(minitorch.tensor([[0]]), minitorch.tensor([1.0]), (2,))
    assert x.is_sparse is False


def test_legacy_types_convert_with_type():
    x = minitorch.arange(3)
    assert x.type(minitorch.FloatTensor).dtype is minitorch.float32
    assert x.type(minitorch.DoubleTensor).tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_isinstance_of_a_legacy_type_in_compiled_code_is_eager_answer(backend):
    # capture answers isinstance(t, cls) for classes from the tensor's type; a legacy type
    # asks the dtype, so it must not be folded as a class (it was: False for a float32 x)
    def fn(x):
        return x + 1 if isinstance(x, minitorch.FloatTensor) else x - 1

    for x in (minitorch.ones(2), minitorch.ones(2, dtype=minitorch.float64)):
        assert_compiled_equals_eager(fn, x, backend=backend, fullgraph=False)


def test_in_place_operators_write_into_the_tensor_as_pytorch():
    m = minitorch.tensor([True, False, False])
    alias = m
    m |= minitorch.tensor([False, False, True])
    assert m is alias and alias.tolist() == [True, False, True]
    i = minitorch.tensor([1, 2])
    i &= 3
    i ^= 1
    assert i.tolist() == [0, 3]
    b = minitorch.tensor([True])
    with pytest.raises(DTypeError, match="can't be cast"):
        b |= minitorch.tensor([2])


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_place_mask_operators_compile_with_the_aliases_eager_has(backend):
    def fn(x, m):
        seen = m
        m |= x > 0
        m &= x < 3
        return seen * 1, m * 1

    x = minitorch.tensor([1.0, -1.0, 5.0])
    compiled_mask, eager_mask = (
        minitorch.tensor([False, True, True]),
        minitorch.tensor([False, True, True]),
    )
    reset()
    got = minitorch.compile(fn, backend=backend)(x, compiled_mask)
    want = fn(x, eager_mask)
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert compiled_mask.tolist() == eager_mask.tolist() == [True, True, False]


def test_diagonal_is_a_view_writes_reach_the_input():
    x = minitorch.zeros(3, 4)
    x.diagonal().add_(1)
    x.diagonal(1).fill_(5)
    minitorch.diagonal(x, -1).add_(2)
    expected = np.eye(3, 4) + 5 * np.eye(3, 4, 1) + 2 * np.eye(3, 4, -1)
    np.testing.assert_array_equal(x.numpy(), expected)
    a = np.arange(60.0).reshape(3, 4, 5)
    for args in [(0, 0, 1), (1, 1, 2), (-1, 2, 0), (2, -1, -2), (9, 0, 1), (0, 2, 1)]:
        np.testing.assert_array_equal(
            minitorch.tensor(a).diagonal(*args).numpy(), np.diagonal(a, *args)
        )
        strided = minitorch.tensor(a).transpose(0, 2)  # planes not dense: a copy, same values
        np.testing.assert_array_equal(
            strided.diagonal(*args).numpy(), np.diagonal(a.transpose(2, 1, 0), *args)
        )
    w = minitorch.randn(3, 4, requires_grad=True)
    (w.diagonal(1) * minitorch.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.diag([1.0, 2.0, 3.0], 1)[:3])


@pytest.mark.parametrize("backend", BACKENDS)
def test_diagonal_compiles_and_a_write_through_it_is_eager_write(backend):
    assert_compiled_equals_eager(
        lambda x: x.diagonal(1, 0, 1) * 2 + minitorch.diagonal(x, -1),
        minitorch.randn(4, 4),
        backend=backend,
    )

    def write(x):
        d = x.diagonal()
        d.add_(1)
        return x * 1, d * 1

    compiled_x, eager_x = minitorch.zeros(3, 3), minitorch.zeros(3, 3)
    reset()
    got = minitorch.compile(write, backend=backend)(compiled_x)
    want = write(eager_x)
    assert [g.tolist() for g in got] == [w.tolist() for w in want]
    assert compiled_x.tolist() == eager_x.tolist() == np.eye(3).tolist()


def test_repeat_and_repeat_interleave_copy():
    # Reshaping an expanded tensor is a view when the repeated dims are 1: the result must
    # still own its memory, as PyTorch's (found by the public style-transfer program)
    x = minitorch.ones(1, 3)
    y = x.repeat(2, 1)
    z = x.repeat(1, 1)
    w = x.repeat_interleave(1, dim=0)
    x.mul_(0)
    assert y.tolist() == [[1.0] * 3] * 2 and z.tolist() == [[1.0] * 3]
    assert w.tolist() == [[1.0] * 3]
    z.add_(1)  # writable, and x unchanged
    assert x.tolist() == [[0.0] * 3]
