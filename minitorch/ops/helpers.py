"""Pieces shared by the rows of the op table."""

from __future__ import annotations


def is_tensor(x) -> bool:
    return not isinstance(x, (bool, int, float))


def needs_grad(x) -> bool:
    """Does a derivative have to compute x's gradient? (Python numbers and tensors that do not
    require grad get None: the engine would drop it, and a formula skipped is ops not traced.)"""
    return getattr(x, "requires_grad", False)


def sum_to(grad, like):
    """Undo broadcasting: sum `grad` down to the shape of `like` (None for a Python number)."""
    from minitorch.ops.reductions import sum

    if not is_tensor(like):
        return None
    shape = tuple(like.shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = len(grad.shape) - len(shape)
    if lead:
        grad = sum(grad, dim=tuple(range(lead)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = sum(grad, dim=stretched, keepdim=True)
    return grad


def written_value_grad(grad, src):
    """The gradient of a value written over a region (x[key] = src): `grad` is the region's
    gradient; src broadcast to it, maybe with extra leading 1s, and was cast to x's dtype."""
    from minitorch.ops.pointwise import to_copy
    from minitorch.ops.views import reshape

    extra = len(src.shape) - len(grad.shape)
    if extra > 0:
        grad = reshape(grad, (1,) * extra + tuple(grad.shape))
    grad = sum_to(grad, src)  # undo broadcasting src over the region
    return grad if grad.dtype is src.dtype else to_copy(grad, dtype=src.dtype)


class ArrayMeta:
    """Lets an eager kernel reuse a shape/dtype rule on a raw array."""

    def __init__(self, array):
        from minitorch.dtype import from_numpy_dtype

        self.shape = array.shape
        self.dtype = from_numpy_dtype(array.dtype)
