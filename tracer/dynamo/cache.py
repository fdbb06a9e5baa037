"""The cache of compiled versions of each code object, and what it remembers about misses.

CPython lets a PEP 523 hook keep data on a code object (`co_extra`); TorchDynamo keeps there a
linked list of cache entries, each a guard function and the transformed code to run when it
passes. We keep the same list in a table keyed by the code object's identity (two functions
with equal bytecode are still two caches), and drop it when the code object dies.

    f.__code__  ->  CodeCache
                      entries:            [newest or most recently used, ..., oldest]
                      recompile_reasons:  ["L['x'].shape == (3,) failed: ...", ...]
                      fallback_reasons:   ["missing: GET_ITER (a for loop ...) (at f.py:3)"]
                      seen_sizes:         {L['x']: (3, 4)}   the sizes each input had
                      auto_dynamic:       {L['x']: {0}}      dims seen with two sizes

The last two drive automatic dynamic shapes ([Note: dynamic shapes] in output_graph.py).

[Note: the cache and threads]
A compiled function may be called from several threads at once, so the cache is read without
a lock and written under one:

- `entries` is never changed in place: a writer builds a new list and assigns it, which is
  atomic, so a lookup walks one consistent snapshot (a list being reordered under it could
  skip an entry or see one twice);
- `compiling`, a (reentrant) lock per code object, lets one thread at a time compile a frame
  of it, and is held while `entries` is replaced. A thread that waited for it looks the frame
  up again first: the one before it may have compiled just what it needs (the double-check
  of any lazily filled cache);
- `cache_for` creates a code object's cache under a lock, so that two threads calling it
  first at once share one cache instead of each filling its own.

`private_caches()` (what explain() compiles into) replaces the table for its own thread only.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

from tracer.dynamo.compiler import GraphCompiler
from tracer.dynamo.guards import GuardFunction
from tracer.dynamo.source import Source
from tracer.dynamo.transformed_code import TransformedCode
from tracer.fx import GraphModule


@dataclass(frozen=True)
class GraphBreak:
    """Where and why capture stopped: today the frame then runs eagerly (see convert_frame.py)."""

    reason: str  # "a branch on a tensor's value ..."
    filename: str | None = None  # the user's source file and line, when known
    lineno: int | None = None

    def where(self) -> str:
        """'/path/to/f.py:12', or '' when the line is unknown."""
        if self.filename is None or self.lineno is None:
            return ""
        return f"{self.filename}:{self.lineno}"

    def __str__(self) -> str:
        return f"{self.reason} (at {self.where()})" if self.where() else self.reason


@dataclass
class CacheEntry:
    """One compiled version of a frame: when `guard` passes, run `transformed` instead."""

    guard: GuardFunction
    transformed: TransformedCode | None  # None: this version runs the original eagerly
    graph_module: GraphModule | None  # the captured graph, if any op was captured
    compiler: GraphCompiler  # the backend it was compiled for
    fullgraph: bool
    fallback_reason: str | None = None  # why it runs eagerly, if it does
    graph_breaks: list[GraphBreak] = field(default_factory=list)  # where capture stopped
    code: CodeType | None = None  # the frame's original code, for the bytecode log and explain
    dynamic: bool | None = None  # the `dynamic` setting it was compiled under
    dynamic_dims: dict[Source, set[int]] = field(default_factory=dict)  # sizes not guarded
    tensor_sizes: dict[Source, tuple[int, ...]] = field(default_factory=dict)  # when traced

    def matches(
        self,
        f_locals: dict[str, Any],
        f_globals: dict[str, Any],
        compiler: GraphCompiler,
        fullgraph: bool,
        dynamic: bool | None = None,
    ) -> bool:
        """Was it compiled the same way, and do its guards hold for this frame?"""
        return (
            self.compiler == compiler
            and self.fullgraph == fullgraph
            and self.dynamic is dynamic
            and self.guard(f_locals, f_globals)
        )

    def same_settings(self, compiler: GraphCompiler, fullgraph: bool, dynamic: bool | None) -> bool:
        return self.compiler == compiler and self.fullgraph == fullgraph and self.dynamic is dynamic


@dataclass
class CodeCache:
    """Every cache entry of one code object, most recently used first.

    `entries` is replaced, never changed in place ([Note: the cache and threads]).
    """

    entries: list[CacheEntry] = field(default_factory=list)
    recompile_reasons: list[str] = field(default_factory=list)
    fallback_reasons: list[str] = field(default_factory=list)
    limit_reached: bool = False  # past config.recompile_limit, misses run eagerly
    seen_sizes: dict[Source, tuple[int, ...]] = field(default_factory=dict)
    auto_dynamic: dict[Source, set[int]] = field(default_factory=dict)
    # held while a thread compiles a frame of this code, and while `entries` is replaced
    compiling: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)

    def lookup(
        self,
        f_locals: dict[str, Any],
        f_globals: dict[str, Any],
        compiler: GraphCompiler,
        fullgraph: bool,
        dynamic: bool | None = None,
    ) -> CacheEntry | None:
        entries = self.entries  # one snapshot: other threads replace the list, never edit it
        for i, entry in enumerate(entries):
            if entry.matches(f_locals, f_globals, compiler, fullgraph, dynamic):
                if i:  # keep the hot entry first, so its guard is checked first
                    self._move_to_front(entry)
                return entry
        return None

    def _move_to_front(self, entry: CacheEntry) -> None:
        # Skipped while another thread holds the lock (compiling, say): the order is only a
        # speed-up, and a lookup should not wait for a compile.
        if self.compiling.acquire(blocking=False):
            try:
                others = [e for e in self.entries if e is not entry]
                if len(others) < len(self.entries):  # still here: nothing removed it meanwhile
                    self.entries = [entry, *others]
            finally:
                self.compiling.release()

    def miss_reason(
        self,
        f_locals: dict[str, Any],
        f_globals: dict[str, Any],
        compiler: GraphCompiler,
        fullgraph: bool,
        dynamic: bool | None = None,
    ) -> str:
        """Why the most recently used entry did not match this frame."""
        entry = self.entries[0]
        if entry.dynamic is not dynamic:
            return f"compiled with dynamic={entry.dynamic}, called with dynamic={dynamic}"
        if not entry.same_settings(compiler, fullgraph, dynamic):
            return "compiled with another backend or fullgraph setting"
        return entry.guard.failure_reason(f_locals, f_globals) or "a guard failed"

    def mark_changed_sizes(self, f_locals: dict[str, Any], f_globals: dict[str, Any]) -> list[str]:
        """Automatic dynamic shapes: the dims whose size in this frame differs from the one
        seen before, added to `auto_dynamic`; each as "L['x'].shape[0] (3 -> 5)"."""
        marked = []
        for source, sizes in self.seen_sizes.items():
            try:
                shape = tuple(source.get_value(f_locals, f_globals).shape)
            except Exception:  # gone, or not a tensor any more: a retrace sees what it is
                continue
            if len(shape) != len(sizes):
                continue
            dims = self.auto_dynamic.setdefault(source, set())
            for dim, (old, new) in enumerate(zip(sizes, shape)):
                if old != new and dim not in dims:
                    dims.add(dim)
                    marked.append(f"{source.name()}.shape[{dim}] ({old} -> {new})")
        return marked

    def add(self, entry: CacheEntry) -> None:
        """Put a new entry first; the caller holds `compiling`."""
        self.entries = [entry, *self.entries]
        self.seen_sizes.update(entry.tensor_sizes)
        private = _private.get()
        if private is not None:
            private[1].append(entry)


Table = dict[int, tuple[weakref.ref, CodeCache]]

# id(code) -> (a weak reference to the code, its cache)
_caches: Table = {}
_creating = threading.Lock()  # held by cache_for while it makes a code object's cache


# This thread's `private_caches()`: its table and journal (every entry added, in compile
# order), or None outside one. A context variable, as grad mode is ([Note: grad mode is per
# thread] in minitorch/autograd/grad_mode.py).
_private: contextvars.ContextVar[tuple[Table, list[CacheEntry]] | None] = contextvars.ContextVar(
    "private_caches", default=None
)


def _table() -> Table:
    private = _private.get()
    return _caches if private is None else private[0]


def cache_for(code: CodeType) -> CodeCache:
    """The cache of `code`, created empty on first use."""
    table = _table()  # the table it is made in, which may be private_caches()'s
    key = id(code)
    known = table.get(key)
    if known is not None and known[0]() is code:
        return known[1]
    with _creating:
        known = table.get(key)  # made by another thread while this one waited?
        if known is not None and known[0]() is code:
            return known[1]
        cache = CodeCache()
        table[key] = (weakref.ref(code, lambda _: _forget(table, key)), cache)
        return cache


def existing_cache(code: CodeType) -> CodeCache | None:
    known = _table().get(id(code))
    return known[1] if known is not None and known[0]() is code else None


def _forget(table: Table, key: int) -> None:
    known = table.get(key)
    if known is not None and known[0]() is None:
        del table[key]


def reset() -> None:
    """Forget every cache entry of every code object."""
    _caches.clear()


@contextlib.contextmanager
def private_caches() -> Iterator[tuple[Table, list[CacheEntry]]]:
    """Run with empty caches that are thrown away afterwards (what explain() compiles into).

    Yields the private table and the list of entries added to it, in compile order; the
    caches that were there before come back untouched on exit. Only this thread's compiles
    use them: other threads keep the shared caches.
    """
    saved = _private.get()
    private = {}, []
    _private.set(private)
    try:
        yield private
    finally:
        _private.set(saved)
