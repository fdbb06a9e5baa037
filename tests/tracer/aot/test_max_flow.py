"""Edmonds-Karp max-flow/min-cut (tracer/aot/max_flow.py) against hand-worked networks and
against brute force: every cut of small random networks, enumerated."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from tracer.aot.max_flow import FlowNetwork


def network(edges: list[tuple]) -> FlowNetwork:
    net = FlowNetwork()
    for u, v, capacity in edges:
        net.add_edge(u, v, capacity)
    return net


def cut_capacity(edges: list[tuple], source_side: set) -> float:
    return sum(c for u, v, c in edges if u in source_side and v not in source_side)


def test_the_module_docstring_example():
    net = network([("s", "a", 3), ("a", "t", 2), ("s", "t", 1)])
    assert net.min_cut("s", "t") == (3, {"s", "a"})


def test_a_textbook_network():
    # Cormen et al., Introduction to Algorithms, figure 26.1: maximum flow 23
    edges = [
        ("s", "v1", 16),
        ("s", "v2", 13),
        ("v1", "v3", 12),
        ("v2", "v1", 4),
        ("v2", "v4", 14),
        ("v3", "v2", 9),
        ("v3", "t", 20),
        ("v4", "v3", 7),
        ("v4", "t", 4),
    ]
    flow, source_side = network(edges).min_cut("s", "t")
    assert flow == 23
    assert cut_capacity(edges, source_side) == 23
    assert "s" in source_side and "t" not in source_side


def test_infinite_edges_are_never_cut():
    edges = [("s", "a", math.inf), ("a", "b", 5), ("s", "b", 2), ("b", "t", math.inf)]
    flow, source_side = network(edges).min_cut("s", "t")
    assert flow == 7 and source_side == {"s", "a"}


def test_a_path_of_infinite_edges_has_no_finite_cut():
    with pytest.raises(ValueError, match="every cut is infinite"):
        network([("s", "a", math.inf), ("a", "t", math.inf)]).min_cut("s", "t")


def test_without_a_path_the_flow_is_zero_and_only_the_sink_is_cut_off():
    flow, source_side = network([("s", "a", 4), ("t", "a", 1)]).min_cut("s", "t")
    assert flow == 0 and source_side == {"s", "a"}


@pytest.mark.parametrize("seed", range(40))
def test_random_networks_against_every_cut(seed):
    rng = random.Random(seed)
    inner = list(range(rng.randint(1, 5)))
    vertices = ["s", *inner, "t"]
    edges = [
        (u, v, rng.choice([1, 2, 3, 5, 8, math.inf]))
        for u, v in itertools.permutations(vertices, 2)
        if u != "t" and v != "s" and rng.random() < 0.4
    ]
    edges = [e for e in edges if not (e[0] == "s" and e[1] == "t" and e[2] == math.inf)]
    cuts = {}  # source side -> capacity, for every cut
    for r in range(len(inner) + 1):
        for chosen in itertools.combinations(inner, r):
            side = frozenset({"s", *chosen})
            cuts[side] = cut_capacity(edges, side)
    best = min(cuts.values())
    if best == math.inf:
        return  # every cut crosses an infinite edge (checked by the test above)
    flow, source_side = network(edges).min_cut("s", "t")
    assert flow == best
    isolated = set(vertices) - {x for u, v, _ in edges for x in (u, v)} - {"t"}
    source_side |= isolated  # vertices without edges are not in the network: on either side
    assert cut_capacity(edges, source_side) == best
    for side, capacity in cuts.items():  # the largest source side: it holds every other one
        if capacity == best:
            assert side <= source_side | {"s"}
