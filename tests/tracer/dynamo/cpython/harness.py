"""Run one container case plainly (CPython is the oracle) and compiled, and grade the result.

A *case* is a small function taking a tensor (and maybe containers) that uses one container
operation and returns tensors and the container results. `run_case` calls it

    plainly                        CPython's answer: the expected one
    compiled, twice                minitorch.compile(fn, backend=B): capture, then cache hit
    under explain()                how many graphs and graph breaks the capture made

each time on fresh arguments from `case.make_args()`, and compares what CPython defines:

    the result, recursively        values, types (list is not tuple, OrderedDict is not dict,
                                   a namedtuple is its own class), lengths, dict key order,
                                   tensors by dtype, shape and value
    the arguments after the call   a list or dict the caller passed in and fn mutated
    which containers are one       `a = b; a += [x]` returns a list seen through b: the
    object                         result's and the arguments' lists, dicts and sets must
                                   share identity exactly where CPython's do
    the exception                  the same class, or none
    what it printed                print() in a case runs once, with the same text

and grades it:

    PASS          equal, and one graph with no break (or a break where the case expects one)
    FALLBACK-OK   equal, but the frame broke or ran eagerly where one graph was expected
    WRONG         anything differs (a wrong answer: the worst bug)
    ERROR         compiled raised where CPython did not (a crash: the second worst)
"""

from __future__ import annotations

import dataclasses
import io
import signal
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass, field

import numpy as np

import minitorch
from minitorch._dynamo import explain
from tracer.dynamo.cache import private_caches

PASS, FALLBACK, WRONG, ERROR = "PASS", "FALLBACK-OK", "WRONG", "ERROR"
GRADES = (PASS, FALLBACK, WRONG, ERROR)


def tensor() -> minitorch.Tensor:
    """A fresh float tensor: what every case computes on."""
    return minitorch.tensor([1.0, -2.0, 3.0])


def _one_tensor() -> tuple:
    return (tensor(),)


@dataclass
class Case:
    """One container behaviour, checked against CPython."""

    fn: Callable
    make_args: Callable[[], tuple] = _one_tensor  # fresh arguments on every call
    breaks: bool = False  # a graph break is legitimate here (print, data-dependent flow)
    wrong: str = ""  # a known wrong answer the lead is fixing: the reason (xfail, strict)
    fallback: str = ""  # a known gap: equal, but not one graph (the one-graph test xfails)
    hangs: str = ""  # compiling it never returns today: the reason (not run by pytest)
    flaky_wrong: str = ""  # wrong for some PYTHONHASHSEED values (set order): xfail, not strict
    inductor: bool = False  # also run with backend="inductor"

    @property
    def name(self) -> str:
        return self.fn.__name__


class Cases(list):
    """A module's cases: `@cases.add` or `@cases.add(breaks=True, wrong="why")` registers one."""

    def add(self, fn: Callable | None = None, **options):
        def register(f: Callable) -> Callable:
            self.append(Case(f, **options))
            return f

        return register(fn) if fn is not None else register


@dataclass
class Outcome:
    """How one case did on one backend."""

    grade: str
    detail: str = ""  # what differed, or why it broke
    graphs: int = 0
    breaks: int = 0
    reasons: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return self.grade in (PASS, FALLBACK)


@dataclass
class Call:
    """What one call left behind: the result or the exception, and the arguments after."""

    result: object = None
    error: BaseException | None = None
    args: tuple = ()
    printed: str = ""  # what the call wrote to stdout


def call(fn: Callable, args: tuple) -> Call:
    printed = io.StringIO()
    with warnings.catch_warnings(), np.errstate(all="ignore"), redirect_stdout(printed):
        warnings.simplefilter("ignore")  # fallback warnings: explain() reports them
        try:
            return Call(fn(*args), None, args, printed.getvalue())
        except Exception as e:  # noqa: BLE001 (an exception is an observed value here)
            return Call(None, e, args, printed.getvalue())


def run_case(case: Case, backend: str = "eager") -> Outcome:
    """Grade `case` compiled with `backend` against CPython (see the module docstring)."""
    wrong = compare(case, backend)
    return wrong if wrong is not None else count_graphs(case)


def compare(case: Case, backend: str = "eager") -> Outcome | None:
    """A WRONG or ERROR outcome where compiled differs from CPython, else None.

    A compiled call that runs past TIMEOUT seconds is an ERROR (a hang).
    """
    expected = call(case.fn, case.make_args())
    with private_caches(), time_limit(TIMEOUT):
        compiled = minitorch.compile(case.fn, backend=backend)
        for attempt in ("first call", "second call"):
            got = call(compiled, case.make_args())
            found = difference(expected, got)
            if isinstance(got.error, Hang):
                return Outcome(ERROR, f"{backend}, {attempt}: {got.error}")
            if found is not None:
                grade = ERROR if expected.error is None and got.error is not None else WRONG
                return Outcome(grade, f"{backend}, {attempt}: {found}")
    return None


TIMEOUT = 60  # seconds: a compiled case that takes longer hangs


class Hang(Exception):
    """A compiled call ran past its time limit."""


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Raise Hang inside the block after `seconds` (SIGALRM: the main thread on Unix)."""
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise Hang(f"did not return within {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def count_graphs(case: Case) -> Outcome:
    """PASS if explain() shows one graph and no break (or a break the case expects).

    A case that raises in CPython is not counted (explain() would raise too): PASS.
    """
    if call(case.fn, case.make_args()).error is not None:
        return Outcome(PASS, "raises, as CPython does: graphs not counted")
    report = call(explain(case.fn), case.make_args())
    if report.error is not None:
        return Outcome(ERROR, f"explain raised {_describe(report.error)}")
    out = report.result
    reasons = [b.reason.splitlines()[0] for b in out.break_reasons]
    one_graph = (out.graph_count, out.graph_break_count) == (1, 0)
    grade = PASS if one_graph or (case.breaks and out.graph_count >= 1) else FALLBACK
    detail = (
        ""
        if grade == PASS
        else f"{out.graph_count} graphs, {out.graph_break_count} "
        f"breaks: {'; '.join(reasons) or 'no graph'}"
    )
    return Outcome(grade, detail, out.graph_count, out.graph_break_count, reasons)


def difference(want: Call, got: Call) -> str | None:
    """The first way `got` differs from CPython's `want`, as a sentence, or None."""
    if got.printed != want.printed:
        return f"printed {got.printed!r}, CPython {want.printed!r}"
    if want.error is not None or got.error is not None:
        if got.error is None:
            return f"CPython raised {_describe(want.error)}; compiled returned {got.result!r}"
        if want.error is None:
            return f"compiled raised {_describe(got.error)}; CPython returned {want.result!r}"
        if type(got.error) is not type(want.error):
            return f"compiled raised {_describe(got.error)}; CPython {_describe(want.error)}"
        return None
    found = value_difference(want.result, got.result, "result")
    if found is None:
        found = value_difference(want.args, got.args, "arguments after the call")
    if found is None and identities((want.result, want.args)) != identities((got.result, got.args)):
        found = (
            f"containers that are one object differ: compiled "
            f"{identities((got.result, got.args))}, CPython "
            f"{identities((want.result, want.args))}"
        )
    return found


def value_difference(
    want: object, got: object, where: str, compared: set | None = None
) -> str | None:
    """Where `got` is not `want`: the same types all the way down, equal values, same order.

    `compared` holds the pairs of containers already being compared: a container that holds
    itself (lst.append(lst)) is compared once, not forever.
    """
    compared = set() if compared is None else compared
    if isinstance(want, (list, tuple, dict)):
        if (id(want), id(got)) in compared:
            return None
        compared.add((id(want), id(got)))
    if type(got) is not type(want):
        return (
            f"{where}: {type(got).__name__} {_short(got)}, CPython "
            f"{type(want).__name__} {_short(want)}"
        )
    if isinstance(want, minitorch.Tensor):
        return _tensor_difference(want, got, where)
    if type(want).__name__ in ("dict_keys", "dict_values", "dict_items"):
        return value_difference(list(want), list(got), f"{where} (a {type(want).__name__})")
    if isinstance(want, dict):
        if list(got) != list(want):
            return f"{where}: keys {list(got)!r}, CPython {list(want)!r} (order counts)"
        if getattr(got, "default_factory", None) is not getattr(want, "default_factory", None):
            return (
                f"{where}: default_factory {got.default_factory!r}, CPython "
                f"{want.default_factory!r}"
            )
        return _first(value_difference(want[k], got[k], f"{where}[{k!r}]", compared) for k in want)
    if isinstance(want, (list, tuple)):
        if len(got) != len(want):
            return f"{where}: length {len(got)} {_short(got)}, CPython {len(want)} {_short(want)}"
        return _first(
            value_difference(w, g, f"{where}[{i}]", compared)
            for i, (w, g) in enumerate(zip(want, got))
        )
    if isinstance(want, float) and want != want:
        return None if got != got else f"{where}: {got!r}, CPython nan"
    return None if got == want else f"{where}: {_short(got)}, CPython {_short(want)}"


def _tensor_difference(want: minitorch.Tensor, got: minitorch.Tensor, where: str) -> str | None:
    if got.dtype != want.dtype or tuple(got.shape) != tuple(want.shape):
        return f"{where}: {got.dtype}{list(got.shape)}, CPython {want.dtype}{list(want.shape)}"
    w, g = want.detach().numpy(), got.detach().numpy()
    if not np.allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True):
        return f"{where}: tensor {g.tolist()}, CPython {w.tolist()}"
    return None


def identities(value: object) -> list[tuple[int, int]]:
    """Which lists, dicts and sets inside `value` are one object: pairs of visit positions."""
    order: dict[int, int] = {}
    pairs: list[tuple[int, int]] = []

    def visit(v: object) -> None:
        if isinstance(v, (list, dict, set)):
            if id(v) in order:
                pairs.append((order[id(v)], len(order)))
                return
            order[id(v)] = len(order)
        if isinstance(v, (list, tuple)):
            for item in v:
                visit(item)
        elif isinstance(v, dict):
            for item in v.values():
                visit(item)

    visit(value)
    return pairs


def _first(found) -> str | None:
    return next((f for f in found if f is not None), None)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _describe(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}({text[:160]!r})"


def with_options(case: Case, **changes) -> Case:
    """A copy of `case` with some fields changed."""
    return dataclasses.replace(case, **changes)


def pytest_tests(cases: list[Case]):
    """A module's two tests over its cases: equal to CPython, and one graph with no break.

    A case known to be wrong today xfails the first strictly (the fix makes it fail until its
    marker is removed); a case known to fall back xfails the second the same way.
    """
    import pytest

    def marks(case: Case, reason: str) -> list:
        if case.hangs:
            return [pytest.mark.xfail(run=False, reason=f"hangs: {case.hangs}")]
        if case.flaky_wrong:
            return [pytest.mark.xfail(strict=False, reason=case.flaky_wrong)]
        if case.wrong and not reason:  # the graph count of a wrong answer means little
            return [pytest.mark.xfail(strict=False, reason=f"wrong today: {case.wrong}")]
        return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []

    def params(reason_of: Callable[[Case], str]) -> list:
        return [pytest.param(c, id=c.name, marks=marks(c, reason_of(c))) for c in cases]

    @pytest.mark.parametrize("case", params(lambda c: c.wrong))
    def test_matches_cpython(case: Case) -> None:
        for backend in ("eager", "inductor") if case.inductor else ("eager",):
            outcome = compare(case, backend)
            assert outcome is None, f"{outcome.grade}: {outcome.detail}"

    @pytest.mark.parametrize("case", params(lambda c: c.fallback))
    def test_one_graph(case: Case) -> None:
        outcome = count_graphs(case)
        assert outcome.grade == PASS, f"{outcome.grade}: {outcome.detail}"

    return test_matches_cpython, test_one_graph
