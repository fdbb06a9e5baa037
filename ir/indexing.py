"""Symbolic integer index expressions: the loop IR's small stand-in for sympy.

[Note: index expressions]
A loop body addresses memory with integer expressions over its loop variables: element (i0, i1)
of a row-major (3, 4) buffer lives at flat offset `4*i0 + i1`. Inductor keeps these as sympy
expressions; we keep six frozen dataclasses instead: `Var`, `Const`, `Add`, `Mul`, `FloorDiv`
and `Mod`.

The Python operators build them *simplified*, so that the same address built twice is the same
value and `==` can compare addresses structurally (the scheduler relies on this to see that a
load reads exactly the element that a store in the same loop wrote):

    >>> i0, i1 = index_vars("i", 2)
    >>> str(i1 * 1 + i0 * 4 + 0)
    'i1 + 4*i0'
    >>> str((4 * i0 + i1) // 4)          # 4*i0 divides evenly, so it comes out of the floor
    'i0 + i1//4'

Every rewrite is exact integer algebra (no assumption about the ranges of variables). Division
and modulo are Python's floor semantics; indices that reach `//` and `%` are never negative in
our lowering, so a backend may use truncating division for them.

A backend turns an expression into its own values with `expr.evaluate(env)`: the numpy
interpreter passes `np.arange` arrays, the LLVM backend passes a wrapper around IR values. Any
type with `+ - * // %` (against itself and Python ints) works, so no backend has to walk the
classes below unless it wants to.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, Union

from minitorch.errors import IndexOutOfRangeError, at_user_line

V = TypeVar("V")
IntLike = Union["Expr", int]


class Expr:
    """An integer expression over named loop variables; `+ - * // %` build simplified Exprs."""

    __slots__ = ()
    # NOTE: numpy would otherwise turn `array + expr` into an object array of Exprs.
    __array_ufunc__ = None

    def __add__(self, other: IntLike) -> Expr:
        return _add(self, as_expr(other))

    def __radd__(self, other: IntLike) -> Expr:
        return _add(as_expr(other), self)

    def __sub__(self, other: IntLike) -> Expr:
        return _add(self, _mul(as_expr(other), Const(-1)))

    def __rsub__(self, other: IntLike) -> Expr:
        return _add(as_expr(other), _mul(self, Const(-1)))

    def __neg__(self) -> Expr:
        return _mul(self, Const(-1))

    def __mul__(self, other: IntLike) -> Expr:
        return _mul(self, as_expr(other))

    def __rmul__(self, other: IntLike) -> Expr:
        return _mul(as_expr(other), self)

    def __floordiv__(self, other: IntLike) -> Expr:
        return _floordiv(self, as_expr(other))

    def __rfloordiv__(self, other: IntLike) -> Expr:
        return _floordiv(as_expr(other), self)

    def __mod__(self, other: IntLike) -> Expr:
        return _mod(self, as_expr(other))

    def __rmod__(self, other: IntLike) -> Expr:
        return _mod(as_expr(other), self)

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """The value of this expression with each variable `name` replaced by `env[name]`."""
        raise NotImplementedError

    def free_vars(self) -> set[str]:
        """The names of the variables this expression mentions."""
        raise NotImplementedError


@dataclass(frozen=True)
class Var(Expr):
    """A loop variable, `i0` (a range) or `r0` (a reduction range)."""

    name: str  # how it prints and the key `evaluate` looks up

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        return env[self.name]

    def free_vars(self) -> set[str]:
        return {self.name}

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Const(Expr):
    """An integer literal."""

    value: int  # a Python int, never a bool or a numpy integer

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        return self.value

    def free_vars(self) -> set[str]:
        return set()

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True)
class Add(Expr):
    """A sum of two or more terms, flattened; at most one Const, and it comes last."""

    terms: tuple[Expr, ...]  # no term is itself an Add

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        total = self.terms[0].evaluate(env)
        for term in self.terms[1:]:
            total = total + term.evaluate(env)
        return total

    def free_vars(self) -> set[str]:
        return set().union(*(term.free_vars() for term in self.terms))

    def __str__(self) -> str:
        text = str(self.terms[0])
        for term in self.terms[1:]:
            coefficient, base = _split_coefficient(term)
            if coefficient < 0:  # print `i0 - 2*i1`, not `i0 + -2*i1`
                text += " - " + str(_scaled(base, -coefficient))
            else:
                text += " + " + str(term)
        return text


@dataclass(frozen=True)
class Mul(Expr):
    """A product of two or more factors, flattened; at most one Const, and it comes last."""

    factors: tuple[Expr, ...]  # no factor is itself a Mul

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        product = self.factors[0].evaluate(env)
        for factor in self.factors[1:]:
            product = product * factor.evaluate(env)
        return product

    def free_vars(self) -> set[str]:
        return set().union(*(factor.free_vars() for factor in self.factors))

    def __str__(self) -> str:
        # The constant is stored last but reads best first: `4*i1`, `-i0`.
        coefficient, base = _split_coefficient(self)
        symbols = base.factors if isinstance(base, Mul) else (base,)
        text = "*".join(_parenthesized(factor) for factor in symbols)
        if coefficient == 1:
            return text
        if coefficient == -1:
            return "-" + text
        return f"{coefficient}*{text}"


@dataclass(frozen=True)
class FloorDiv(Expr):
    """`numerator // denominator`, rounding towards minus infinity as Python does."""

    numerator: Expr
    denominator: Expr

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        return self.numerator.evaluate(env) // self.denominator.evaluate(env)

    def free_vars(self) -> set[str]:
        return self.numerator.free_vars() | self.denominator.free_vars()

    def __str__(self) -> str:
        return f"{_parenthesized(self.numerator)}//{_parenthesized(self.denominator)}"


@dataclass(frozen=True)
class Mod(Expr):
    """`numerator % denominator`, with the sign of the denominator as in Python."""

    numerator: Expr
    denominator: Expr

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        return self.numerator.evaluate(env) % self.denominator.evaluate(env)

    def free_vars(self) -> set[str]:
        return self.numerator.free_vars() | self.denominator.free_vars()

    def __str__(self) -> str:
        return f"{_parenthesized(self.numerator)} % {_parenthesized(self.denominator)}"


def index_vars(prefix: str, n: int) -> tuple[Var, ...]:
    """The loop variables of an n-deep loop nest: index_vars('i', 2) == (Var('i0'), Var('i1'))."""
    return tuple(Var(f"{prefix}{k}") for k in range(n))


def size_symbols(n: int) -> tuple[Var, ...]:
    """The first n size symbols, s0, s1, ...: the sizes of a kernel compiled for any size
    ([Note: symbolic sizes] in ir/symbolic.py)."""
    return index_vars("s", n)


def is_size_symbol(name: str) -> bool:
    """Whether `name` is a size symbol: 's' then digits ('s0', 's12'), never 'scale' or 's_buf'.

    A backend that is handed the symbols a kernel takes (compile_kernel's `sizes`) should use
    those instead; this is for checking such a list.
    """
    return re.fullmatch(r"s[0-9]+", name) is not None


def as_expr(value: IntLike) -> Expr:
    """An Expr as is, or an int as a Const; anything else is a TypeError."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, bool):
        raise TypeError("a bool is not an index")
    return Const(operator.index(value))  # also accepts numpy integers


# --- the simplifying constructors behind the operators -------------------------------------


def _add(a: Expr, b: Expr) -> Expr:
    """a + b, flattened, with like terms collected: `i0 + 2*i0 + 3 + 1` -> `3*i0 + 4`."""
    coefficients: dict[Expr, int] = {}  # symbolic part -> its summed coefficient, in order
    constant = 0
    for term in _terms(a) + _terms(b):
        if isinstance(term, Const):
            constant += term.value
        else:
            coefficient, base = _split_coefficient(term)
            coefficients[base] = coefficients.get(base, 0) + coefficient

    # k*(x % n) + k*n*(x//n) == k*x: reshapes split an index into // and %; put it back.
    for base, k in coefficients.items():
        if isinstance(base, Mod) and isinstance(base.denominator, Const):
            quotient = _floordiv(base.numerator, base.denominator)
            if coefficients.get(quotient) == k * base.denominator.value:
                del coefficients[base], coefficients[quotient]
                rest = _sum_of(coefficients, constant)
                return _add(rest, _mul(base.numerator, Const(k)))  # may merge again
    return _sum_of(coefficients, constant)


def _sum_of(coefficients: dict[Expr, int], constant: int) -> Expr:
    """The Expr for sum(c * base) + constant, from collected like terms."""
    terms = [_scaled(base, c) for base, c in coefficients.items() if c != 0]
    if constant != 0:
        terms.append(Const(constant))
    if not terms:
        return Const(0)
    return terms[0] if len(terms) == 1 else Add(tuple(terms))


def _mul(a: Expr, b: Expr) -> Expr:
    """a * b, flattened and folded: `i0*1` -> `i0`, `i0*0` -> `0`, `2*(i0 + 1)` -> `2*i0 + 2`."""
    constant = 1
    symbols: list[Expr] = []
    for factor in _factors(a) + _factors(b):
        if isinstance(factor, Const):
            constant *= factor.value
        else:
            symbols.append(factor)
    if constant == 0 or not symbols:
        return Const(constant)
    if len(symbols) == 1 and isinstance(symbols[0], Add):
        # Distribute a constant over a sum so that sums stay flat and like terms meet.
        total: Expr = Const(0)
        for term in symbols[0].terms:
            total = _add(total, _mul(term, Const(constant)))
        return total
    if constant != 1:
        symbols.append(Const(constant))
    return symbols[0] if len(symbols) == 1 else Mul(tuple(symbols))


def _floordiv(a: Expr, b: Expr) -> Expr:
    """a // b; terms whose coefficient b divides come out: `(4*i0 + i1)//4` -> `i0 + i1//4`."""
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value // b.value)
    if b == Const(1) or a == Const(0):
        return a
    if isinstance(a, FloorDiv) and _positive(a.denominator) and _positive(b):
        return _floordiv(a.numerator, a.denominator * b)  # (x//3)//4 == x//12
    if isinstance(b, Const):
        # floor((b*q + rest) / b) == q + floor(rest / b) for integers.
        quotient, rest = _split_divisible(a, b.value)
        if quotient != Const(0):
            return _add(quotient, _floordiv(rest, b))
    return FloorDiv(a, b)


def _mod(a: Expr, b: Expr) -> Expr:
    """a % b; terms whose coefficient b divides vanish: `(4*i0 + i1) % 4` -> `i1 % 4`."""
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(a.value % b.value)
    if b == Const(1) or a == Const(0):
        return Const(0)
    if isinstance(b, Const):
        # (b*q + rest) % b == rest % b for integers.
        quotient, rest = _split_divisible(a, b.value)
        if quotient != Const(0):
            return _mod(rest, b)
    return Mod(a, b)


def _split_divisible(a: Expr, divisor: int) -> tuple[Expr, Expr]:
    """(q, rest) with a == divisor*q + rest; q takes the terms whose coefficient divisor divides."""
    quotient: Expr = Const(0)
    rest: Expr = Const(0)
    for term in _terms(a):
        coefficient, base = _split_coefficient(term)
        if coefficient % divisor == 0:
            quotient = _add(quotient, _scaled(base, coefficient // divisor))
        else:
            rest = _add(rest, term)
    return quotient, rest


def _positive(e: Expr) -> bool:
    return isinstance(e, Const) and e.value > 0


def _terms(e: Expr) -> tuple[Expr, ...]:
    return e.terms if isinstance(e, Add) else (e,)


def _factors(e: Expr) -> tuple[Expr, ...]:
    return e.factors if isinstance(e, Mul) else (e,)


def _split_coefficient(term: Expr) -> tuple[int, Expr]:
    """A term as (integer coefficient, symbolic rest): `4*i1` -> (4, i1); `7` -> (7, Const(1))."""
    if isinstance(term, Const):
        return term.value, Const(1)
    if isinstance(term, Mul) and isinstance(term.factors[-1], Const):
        rest = term.factors[:-1]
        return term.factors[-1].value, rest[0] if len(rest) == 1 else Mul(rest)
    return 1, term


def _scaled(base: Expr, coefficient: int) -> Expr:
    return _mul(base, Const(coefficient))


def _parenthesized(e: Expr) -> str:
    """str(e), in parentheses unless e is a variable or a non-negative literal."""
    if isinstance(e, Var) or (isinstance(e, Const) and e.value >= 0):
        return str(e)
    return f"({e})"


def index_error(index: int, size: int) -> IndexOutOfRangeError:
    """What a kernel raises for an index outside its dim (every backend says it so)."""
    return IndexOutOfRangeError(
        at_user_line(
            f"index {index} is out of bounds for a dim of size {size} (an indexed read in a "
            "compiled kernel: gather, embedding or x[indices])"
        )
    )
