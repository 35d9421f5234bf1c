"""Communication graphs of federated agents: generators and the few utilities the
protocols need (connectivity, components, hop distances, eccentricity, sinks).

A `Graph` is a frozen, undirected, simple graph over agents 0..M-1 stored as a
read-only boolean adjacency matrix (M, M): symmetric, no self-loops.  Hybrid
networks (HDP-MAB) are one graph whose connected components are the
components; a singleton component is an agent linked to the server alone.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components, shortest_path

from privbandit.accounting.validation import check_count

from ..errors import config_error
from .errors import DisconnectedGraphError, GraphError


@dataclass(frozen=True, eq=False)
class Graph:
    """An undirected simple graph; `adjacency` (M, M) bool is copied and made read-only."""

    adjacency: np.ndarray
    name: str = "graph"

    def __post_init__(self) -> None:
        adj = np.array(self.adjacency, dtype=bool, copy=True)
        if adj.ndim != 2 or adj.shape[0] != adj.shape[1] or adj.shape[0] == 0:
            raise GraphError(
                f"adjacency must be a non-empty square (M, M) matrix; got shape {adj.shape}"
            )
        if np.any(np.diag(adj)):
            loops = np.flatnonzero(np.diag(adj)).tolist()
            raise GraphError(f"adjacency must have no self-loops; got loops at nodes {loops}")
        if not np.array_equal(adj, adj.T):
            raise GraphError("adjacency must be symmetric (links are two-way); got asymmetric")
        adj.setflags(write=False)
        object.__setattr__(self, "adjacency", adj)

    @classmethod
    def from_edges(cls, n_nodes: int, edges: Sequence[tuple[int, int]], name: str = "graph"):
        """A graph on `n_nodes` nodes with the undirected `edges` (pairs of node indices)."""
        n = check_count("n_nodes", n_nodes)
        pairs = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
        if pairs.size and (pairs.min() < 0 or pairs.max() >= n):
            raise config_error("edges", edges, f"pairs of node indices in [0, {n})")
        adj = np.zeros((n, n), dtype=bool)
        adj[pairs[:, 0], pairs[:, 1]] = True
        adj[pairs[:, 1], pairs[:, 0]] = True
        return cls(adj, name)

    @property
    def n_nodes(self) -> int:
        return int(self.adjacency.shape[0])

    @property
    def n_edges(self) -> int:
        return int(np.count_nonzero(self.adjacency)) // 2

    @property
    def degrees(self) -> np.ndarray:
        """(M,) number of neighbours of each node."""
        return self.adjacency.sum(axis=1)

    def edges(self) -> np.ndarray:
        """(E, 2) undirected edges as (i, j) with i < j, in row-major order."""
        i, j = np.nonzero(np.triu(self.adjacency, k=1))
        return np.stack([i, j], axis=1)

    def subgraph(self, nodes: np.ndarray) -> "Graph":
        """The graph induced on `nodes` (relabelled 0..len(nodes)-1 in the given order)."""
        idx = np.asarray(nodes, dtype=np.int64)
        return Graph(self.adjacency[np.ix_(idx, idx)], f"{self.name}[{idx.size} nodes]")

    def __repr__(self) -> str:
        return f"Graph({self.name!r}, nodes={self.n_nodes}, edges={self.n_edges})"


# -- generators -----------------------------------------------------------------
def fully_connected(n_nodes: int) -> Graph:
    """Every pair of agents linked (diameter 1 for M >= 2)."""
    n = check_count("n_nodes", n_nodes)
    return Graph(~np.eye(n, dtype=bool), f"fully-connected({n})")


def star(n_nodes: int, center: int = 0) -> Graph:
    """One hub linked to every other agent (diameter 2 for M >= 3)."""
    n = check_count("n_nodes", n_nodes)
    if isinstance(center, bool) or not isinstance(center, (int, np.integer)) or not (
        0 <= center < n
    ):
        raise config_error("center", center, f"a node index in [0, {n})")
    adj = np.zeros((n, n), dtype=bool)
    adj[center, :] = adj[:, center] = True
    adj[center, center] = False
    return Graph(adj, f"star({n})")


def ring(n_nodes: int) -> Graph:
    """A cycle 0-1-...-(M-1)-0 (diameter floor(M/2)); needs M >= 3."""
    n = check_count("n_nodes", n_nodes, minimum=3)
    i = np.arange(n)
    return Graph.from_edges(n, np.stack([i, (i + 1) % n], axis=1), f"ring({n})")


def random_connected(n_nodes: int, edge_prob: float, rng: np.random.Generator) -> Graph:
    """A random connected graph: a uniform random recursive spanning tree plus
    independent extra edges, each present with probability `edge_prob`.

    The tree (every node after the first in a random order attaches to a
    uniformly chosen earlier node) guarantees connectivity without rejection.
    """
    n = check_count("n_nodes", n_nodes)
    if isinstance(edge_prob, bool) or not isinstance(edge_prob, (int, float)) or not (
        0.0 <= edge_prob <= 1.0
    ):
        raise config_error("edge_prob", edge_prob, "a probability in [0, 1]")
    order = rng.permutation(n)
    parents = order[(rng.random(n - 1) * np.arange(1, n)).astype(np.int64)]
    adj = np.triu(rng.random((n, n)) < edge_prob, k=1)
    adj = adj | adj.T
    adj[order[1:], parents] = adj[parents, order[1:]] = True
    return Graph(adj, f"random({n}, p={edge_prob:g})")


def disjoint_union(graphs: Sequence[Graph], name: str = "union") -> Graph:
    """Place `graphs` side by side (node blocks in order); no edges between them."""
    if not graphs or not all(isinstance(g, Graph) for g in graphs):
        raise config_error("graphs", graphs, "a non-empty sequence of Graph")
    sizes = [g.n_nodes for g in graphs]
    adj = np.zeros((sum(sizes), sum(sizes)), dtype=bool)
    start = 0
    for g, size in zip(graphs, sizes, strict=True):
        adj[start:start + size, start:start + size] = g.adjacency
        start += size
    return Graph(adj, name)


# -- utilities ------------------------------------------------------------------
def hop_distances(graph: Graph) -> np.ndarray:
    """(M, M) shortest-path hop counts; `inf` between different components."""
    return shortest_path(csr_matrix(graph.adjacency), method="D", unweighted=True)


def components(graph: Graph) -> tuple[np.ndarray, ...]:
    """The connected components as sorted index arrays, ordered by smallest member."""
    _, labels = connected_components(csr_matrix(graph.adjacency), directed=False)
    # connected_components numbers components in order of their smallest node
    return tuple(np.flatnonzero(labels == q) for q in range(labels.max() + 1))


def is_connected(graph: Graph) -> bool:
    return len(components(graph)) == 1


def require_connected(graph: Graph, name: str = "graph") -> Graph:
    """Return `graph` if connected; otherwise raise `DisconnectedGraphError`."""
    if not isinstance(graph, Graph):
        raise config_error(name, graph, "a Graph")
    parts = components(graph)
    if len(parts) > 1:
        raise DisconnectedGraphError(
            f"{name} must be connected; got {graph!r} with {len(parts)} components "
            f"of sizes {[p.size for p in parts]}"
        )
    return graph


def eccentricity(graph: Graph) -> np.ndarray:
    """(M,) int: each node's largest hop distance to a node of its own component."""
    dist = hop_distances(graph)
    dist[~np.isfinite(dist)] = -1.0
    return dist.max(axis=1).astype(np.int64)


def diameter(graph: Graph) -> int:
    """Largest eccentricity of a connected graph (DDP-MAB's t_r bound)."""
    return int(eccentricity(require_connected(graph)).max())


def sinks(graph: Graph) -> np.ndarray:
    """(Q,) the sink agent of each component: minimum eccentricity, lowest index on ties.

    The paper's FindSinkAgents (seed 002, Alg. 4): the sink's eccentricity is
    the component's local delay, so the sink minimises it.
    """
    ecc = eccentricity(graph)
    return np.array([part[np.argmin(ecc[part])] for part in components(graph)], dtype=np.int64)
