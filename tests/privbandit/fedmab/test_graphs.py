"""Graph generators and utilities: connectivity, components, eccentricity, sinks."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.fedmab import (
    DisconnectedGraphError,
    Graph,
    GraphError,
    components,
    diameter,
    disjoint_union,
    eccentricity,
    fully_connected,
    is_connected,
    random_connected,
    require_connected,
    ring,
    sinks,
    star,
)

from .round_reference import bfs_distances


def bfs_eccentricity(adj: np.ndarray) -> list[int]:
    """Independent reference: BFS from every node."""
    return [max(bfs_distances(adj, s).values()) for s in range(adj.shape[0])]


@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_generators_have_the_textbook_shape(n):
    full, hub = fully_connected(n), star(n)
    assert full.n_edges == n * (n - 1) // 2 and hub.n_edges == n - 1
    assert is_connected(full) and is_connected(hub)
    assert diameter(full) == min(1, n - 1)
    assert diameter(hub) == min(2, n - 1)
    assert hub.degrees[0] == n - 1


@pytest.mark.parametrize("n", [3, 4, 9, 10])
def test_ring_has_n_edges_and_diameter_half_n(n):
    g = ring(n)
    assert g.n_edges == n and set(g.degrees.tolist()) == {2} and diameter(g) == n // 2


@given(st.integers(1, 30), st.floats(0.0, 0.3), st.integers(0, 2**32 - 1))
def test_random_connected_is_connected_and_seeded(n, p, seed):
    g = random_connected(n, p, np.random.default_rng(seed))
    assert is_connected(g)
    assert g.n_edges >= n - 1
    again = random_connected(n, p, np.random.default_rng(seed))
    np.testing.assert_array_equal(g.adjacency, again.adjacency)


@given(st.lists(st.integers(1, 7), min_size=1, max_size=5), st.integers(0, 2**32 - 1))
def test_eccentricity_sinks_and_components_of_unions(sizes, seed):
    rng = np.random.default_rng(seed)
    parts = [random_connected(s, 0.2, rng) for s in sizes]
    g = disjoint_union(parts)
    comps = components(g)
    assert [c.size for c in comps] == sizes
    assert [int(c[0]) for c in comps] == list(np.cumsum([0, *sizes[:-1]]))
    ecc = eccentricity(g)
    expected = np.concatenate([bfs_eccentricity(p.adjacency) for p in parts])
    np.testing.assert_array_equal(ecc, expected)
    heads = sinks(g)
    for comp, head in zip(comps, heads, strict=True):
        assert head in comp and ecc[head] == ecc[comp].min()
        assert head == comp[np.argmin(ecc[comp])]  # lowest index on ties
    assert is_connected(g) == (len(sizes) == 1)


def test_star_sink_is_its_hub_and_ring_sink_is_node_zero():
    g = disjoint_union([star(6, center=3), ring(5)])
    assert sinks(g).tolist() == [3, 6]


def test_from_edges_and_subgraph():
    g = Graph.from_edges(4, [(0, 1), (1, 2), (2, 3)])
    assert g.edges().tolist() == [[0, 1], [1, 2], [2, 3]]
    assert diameter(g) == 3
    assert g.subgraph(np.array([1, 2])).n_edges == 1
    with pytest.raises(ValueError):
        g.adjacency[0, 1] = False  # read-only


@pytest.mark.parametrize(
    "build, error, match",
    [
        (lambda: Graph(np.zeros((2, 3), bool)), GraphError, "square"),
        (lambda: Graph(np.eye(3, dtype=bool)), GraphError, "self-loops"),
        (lambda: Graph(np.triu(np.ones((3, 3), bool), 1)), GraphError, "symmetric"),
        (lambda: Graph.from_edges(3, [(0, 3)]), InvalidParameterError, "edges must be pairs"),
        (lambda: ring(2), InvalidParameterError, "n_nodes must be an integer >= 3; got 2"),
        (lambda: star(3, center=3), InvalidParameterError,
         r"center must be a node index in \[0, 3\)"),
        (lambda: fully_connected(0), InvalidParameterError,
         "n_nodes must be an integer >= 1; got 0"),
        (lambda: random_connected(4, 1.5, np.random.default_rng(0)), InvalidParameterError,
         r"edge_prob must be a probability in \[0, 1\]; got 1.5"),
        (lambda: disjoint_union([]), InvalidParameterError, "graphs must be a non-empty sequence"),
        (lambda: require_connected(disjoint_union([ring(3), star(2)])), DisconnectedGraphError,
         r"graph must be connected; got .* 2 components of sizes \[3, 2\]"),
        (lambda: diameter(disjoint_union([star(2), star(2)])), DisconnectedGraphError,
         "must be connected"),
    ],
)
def test_bad_graphs_are_refused_with_named_errors(build, error, match):
    with pytest.raises(error, match=match):
        build()
