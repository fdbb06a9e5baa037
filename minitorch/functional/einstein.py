"""`minitorch.einsum` (Einstein summation), decomposed into permute, reshape, sum and matmul.

    >>> q, k = minitorch.randn(2, 4, 5, 8), minitorch.randn(2, 4, 6, 8)
    >>> minitorch.einsum("bhqd,bhkd->bhqk", q, k).shape       # attention's scores
    minitorch.Size([2, 4, 5, 6])

[Note: einsum as matmuls]
An equation names each dim of each operand with a letter. Letters in the output are kept;
letters that are not are summed over. Operands are combined two at a time, left to right, and
each pair is one batched matrix product, as opt_einsum and PyTorch do it. For a pair (a, b),
given the letters still needed later (the output's, and those of the operands not yet used):

    batch       in a and in b, needed later        -> the batch dim B of the product
    contracted  in a and in b, not needed later    -> the inner dim K (summed by the product)
    left        in a only                          -> the rows L
    right       in b only                          -> the columns R

    a: permute to (batch, left, contracted), reshape to (B, L, K)
    b: permute to (batch, contracted, right), reshape to (B, K, R)
    a @ b: (B, L, R), reshaped to the sizes of (batch..., left..., right...)

A letter found in one operand only and not needed later is summed away before the product.
At the end the letters are permuted into the output's order. Every step is an op of the
table, so einsum compiles and differentiates like any composition of them.

Not supported (a ShapeError naming the equation): a letter twice in one operand (a diagonal
or a trace, "ii->i"), and a size-1 dim broadcast against a larger one under the same letter.
"""

from __future__ import annotations

import string

from minitorch import ops
from minitorch.errors import ArgumentTypeError, ShapeError, at_user_line
from minitorch.functional._common import check_tensor
from minitorch.overrides import make_overridable

# the public functions of this family
__all__ = ["einsum"]


def einsum(equation: str, *operands):
    """Sum the product of the operands over the letters the output leaves out:
    einsum("ij,jk->ik", a, b) is a @ b; einsum("i,j->ij", u, v) is outer(u, v);
    einsum("bij->bj", x) is x.sum(1). See [Note: einsum as matmuls]."""
    if not isinstance(equation, str):
        raise ArgumentTypeError(
            at_user_line(f"einsum(): the equation must be a str, got {type(equation).__name__}")
        )
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):  # einsum(eq, [a, b])
        operands = tuple(operands[0])
    for x in operands:
        check_tensor("einsum", x)
    inputs, output = _parse(equation, operands)
    _check_sizes(equation, inputs, operands)
    current, letters = _sum_unused(operands[0], inputs[0], set(output) | set("".join(inputs[1:])))
    for i in range(1, len(operands)):
        later = set(output) | set("".join(inputs[i + 1 :]))
        b, b_letters = _sum_unused(operands[i], inputs[i], later | set(letters))
        current, letters = _contract(current, letters, b, b_letters, later)
    current, letters = _sum_unused(current, letters, set(output))
    return ops.permute(current, tuple(letters.index(c) for c in output))


# ---- reading the equation ----------------------------------------------------------------


def _parse(equation: str, operands: tuple) -> tuple[list[str], str]:
    """Each operand's letters and the output's, with '...' spelled out as capital letters."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise ShapeError(
            at_user_line(
                f"einsum(): the equation {equation!r} names {len(inputs)} operands, but "
                f"{len(operands)} were given"
            )
        )
    ellipsis = _ellipsis_letters(equation, inputs, operands)
    inputs = [_spelled(equation, term, x.ndim, ellipsis) for term, x in zip(inputs, operands)]
    if arrow:
        ndim = len(rhs.replace("...", "")) + (len(ellipsis) if "..." in rhs else 0)
        output = _spelled(equation, rhs, ndim, ellipsis)
    else:  # implicit: the '...' dims, then the letters used once, in alphabetical order
        once = sorted(
            c for c in set("".join(inputs)) - set(ellipsis) if "".join(inputs).count(c) == 1
        )
        output = ellipsis + "".join(once)
    for term in inputs:
        if len(set(term)) != len(term):
            raise ShapeError(
                at_user_line(
                    f"einsum(): the equation {equation!r} repeats a letter within one operand (a "
                    "diagonal or a trace), which minitorch's einsum does not support"
                )
            )
    if len(set(output)) != len(output) or not set(output) <= set("".join(inputs)):
        raise ShapeError(
            at_user_line(
                f"einsum(): the output of {equation!r} must name each letter once, and only "
                "letters of the operands"
            )
        )
    return inputs, output


def _ellipsis_letters(equation: str, inputs: list[str], operands: tuple) -> str:
    """Capital letters for the dims '...' stands for (the most any operand has)."""
    if any(not (c.islower() or c == ".") for c in equation.replace("->", "").replace(",", "")):
        raise ShapeError(
            at_user_line(
                f"einsum(): the equation {equation!r} may use lowercase letters, ',', '->' and "
                "'...' only"
            )
        )
    counts = [
        x.ndim - len(term.replace("...", "")) for term, x in zip(inputs, operands) if "..." in term
    ]
    return string.ascii_uppercase[: max(counts, default=0)]


def _spelled(equation: str, term: str, ndim: int, ellipsis: str) -> str:
    """`term` with '...' replaced by the last of the ellipsis letters (dims align right)."""
    if "..." in term:
        named = len(term.replace("...", ""))
        term = term.replace(
            "...", ellipsis[len(ellipsis) - (ndim - named) :] if ndim > named else ""
        )
    if "." in term or len(term) != ndim:
        raise ShapeError(
            at_user_line(
                f"einsum(): the subscripts {term!r} of {equation!r} do not match an operand "
                f"with {ndim} dims"
            )
        )
    return term


def _check_sizes(equation: str, inputs: list[str], operands: tuple) -> None:
    sizes: dict[str, int] = {}
    for term, x in zip(inputs, operands):
        for c, n in zip(term, x.shape):
            if sizes.setdefault(c, n) != n:
                raise ShapeError(
                    at_user_line(
                        f"einsum(): in {equation!r}, the letter {c!r} stands for sizes "
                        f"{sizes[c]} and {n} (shapes {[tuple(x.shape) for x in operands]})"
                    )
                )


# ---- the steps ----------------------------------------------------------------------------


def _sum_unused(x, letters: str, needed: set[str]) -> tuple:
    """Sum away the dims whose letters are not needed any more."""
    unused = tuple(i for i, c in enumerate(letters) if c not in needed)
    if not unused:
        return x, letters
    return ops.sum(x, dim=unused), "".join(c for c in letters if c in needed)


def _contract(a, la: str, b, lb: str, later: set[str]) -> tuple:
    """One batched matrix product of a and b ([Note: einsum as matmuls])."""
    batch = [c for c in la if c in lb and c in later]
    contracted = [c for c in la if c in lb and c not in later]
    left = [c for c in la if c not in lb]
    right = [c for c in lb if c not in la]
    size = dict(zip(la, a.shape)) | dict(zip(lb, b.shape))

    def product(cs: list[str]) -> int:
        n = 1
        for c in cs:
            n *= size[c]
        return n

    a = ops.permute(a, tuple(la.index(c) for c in batch + left + contracted))
    a = ops.reshape(a, (product(batch), product(left), product(contracted)))  # (B, L, K)
    b = ops.permute(b, tuple(lb.index(c) for c in batch + contracted + right))
    b = ops.reshape(b, (product(batch), product(contracted), product(right)))  # (B, K, R)
    out = ops.matmul(a, b)  # (B, L, R)
    letters = batch + left + right
    return ops.reshape(out, tuple(size[c] for c in letters)), "".join(letters)


# Every public function hands a Proxy (any __torch_function__ type) to it: see
# [Note: __torch_function__] in minitorch/overrides.py.
make_overridable(globals(), __all__)
