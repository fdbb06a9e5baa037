"""Maximum flow and minimum cut of a small network, by Edmonds-Karp.

[Note: max-flow, min-cut]
A flow network is a directed graph whose edges have capacities, with a source s and a sink t.
A *cut* splits the vertices into S (holding s) and T (holding t); its capacity is the sum of
the capacities of the edges from S to T. The max-flow/min-cut theorem says that the largest
flow from s to t equals the smallest cut's capacity, and the flow finds the cut:

    1. While the residual graph (each edge's unused capacity, and for each unit of flow
       u -> v a unit of capacity v -> u that would undo it) has a path from s to t, push the
       path's smallest residual capacity along it. Taking the *shortest* path (breadth-first
       search) is Edmonds and Karp's rule: it bounds the augmentations by O(V E), whatever
       the capacities are.
    2. When no path is left, the vertices that can no longer reach t make T, and the others
       S. Every edge from S to T is full (else its tail would reach t), so the cut's capacity
       is the flow.

Several cuts may be minimal; that T is the smallest sink side of them all (it lies inside
every other one), so S is the largest source side. (The vertices still reachable from s would
give the smallest one.) The min-cut partitioner breaks ties with it: of the equally cheap
choices, it saves the values nearest the backward ([Note: min-cut partitioning] in
min_cut.py).

    net = FlowNetwork()
    net.add_edge("s", "a", 3); net.add_edge("a", "t", 2); net.add_edge("s", "t", 1)
    net.min_cut("s", "t") == (3, {"s", "a"})
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Hashable

Vertex = Hashable


class FlowNetwork:
    """A directed graph with a capacity on each edge (an int, or math.inf: never cut)."""

    def __init__(self) -> None:
        # u -> {v: capacity of u -> v}; every edge's reverse is present too, with capacity 0
        self.capacity: dict[Vertex, dict[Vertex, float]] = {}

    def add_edge(self, u: Vertex, v: Vertex, capacity: float) -> None:
        """An edge u -> v (a second edge u -> v adds its capacity to the first)."""
        self.capacity.setdefault(u, {})
        self.capacity.setdefault(v, {})
        self.capacity[u][v] = self.capacity[u].get(v, 0) + capacity
        self.capacity[v].setdefault(u, 0)  # the residual graph may undo flow along u -> v

    def min_cut(self, source: Vertex, sink: Vertex) -> tuple[float, set[Vertex]]:
        """The maximum flow from `source` to `sink`, and the largest source side S of a
        minimum cut (see [Note: max-flow, min-cut])."""
        residual = {u: dict(edges) for u, edges in self.capacity.items()}
        residual.setdefault(source, {})
        residual.setdefault(sink, {})
        flow = 0
        while True:
            parent = _breadth_first(residual, source, sink)
            if sink not in parent:
                return flow, set(residual) - _reaching(residual, sink)
            path = _path_to(parent, sink)
            pushed = min(residual[u][v] for u, v in path)
            if pushed == math.inf:
                raise ValueError(
                    "min_cut: a path of edges that are never cut joins the "
                    "source to the sink: every cut is infinite"
                )
            for u, v in path:
                residual[u][v] -= pushed
                residual[v][u] += pushed
            flow += pushed


def _breadth_first(
    residual: dict[Vertex, dict[Vertex, float]], source: Vertex, sink: Vertex
) -> dict[Vertex, Vertex | None]:
    """vertex -> the vertex it was first reached from, over edges with capacity left,
    until `sink` is reached: following it back from a vertex gives a shortest path from
    `source`. Without a path to `sink`, every vertex reachable from `source`."""
    parent: dict[Vertex, Vertex | None] = {source: None}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v, left in residual[u].items():
            if left > 0 and v not in parent:
                parent[v] = u
                if v == sink:
                    return parent
                queue.append(v)
    return parent


def _reaching(residual: dict[Vertex, dict[Vertex, float]], sink: Vertex) -> set[Vertex]:
    """The vertices with a path to `sink` over edges with capacity left."""
    found = {sink}
    queue = deque([sink])
    while queue:
        w = queue.popleft()
        for v in residual[w]:  # every edge's reverse is present: these are w's neighbours
            if v not in found and residual[v][w] > 0:
                found.add(v)
                queue.append(v)
    return found


def _path_to(parent: dict[Vertex, Vertex | None], vertex: Vertex) -> list[tuple[Vertex, Vertex]]:
    """The edges from the search's source to `vertex`, in order."""
    path = []
    while parent[vertex] is not None:
        path.append((parent[vertex], vertex))
        vertex = parent[vertex]
    return path[::-1]
