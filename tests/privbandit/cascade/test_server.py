"""The server's heterogeneity test on a well-separated toy instance, and its cluster statistics."""
import numpy as np
import pytest

from privbandit.cascade import CascadeServer
from privbandit.kernels import cluster_error_rate

DIM = 3
TRUTH = np.array([0, 0, 0, 1, 1, 1])
THETAS = np.array([[0.8, 0.0, 0.0], [0.0, 0.8, 0.0]])


def _upload(rng, agent, n):
    """n unit items with Bernoulli clicks of mean x . theta (clipped): (gram, moment, n)."""
    x = rng.standard_normal((n, DIM))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    p = np.clip(x @ THETAS[TRUTH[agent]], 0.0, 1.0)
    clicks = (rng.random(n) < p).astype(float)
    return x.T @ x, x.T @ clicks, n


@pytest.mark.parametrize("seed", range(3))
def test_edges_between_clusters_deleted_within_kept(seed):
    rng = np.random.default_rng(seed)
    server = CascadeServer(TRUTH.size, DIM, lam=1.0, alpha_d=1.5)
    for _ in range(4):
        for agent in range(TRUTH.size):
            server.receive(agent, *_upload(rng, agent, 2000))
    adj = server.graph.adjacency
    same = TRUTH[:, None] == TRUTH[None, :]
    off_diag = ~np.eye(TRUTH.size, dtype=bool)
    assert not adj[~same].any(), "an edge across clusters survived"
    assert adj[same & off_diag].all(), "an edge within a cluster was deleted"
    assert cluster_error_rate(TRUTH, server.labels()) == 0.0


def test_no_deletion_while_estimates_are_uncertain():
    rng = np.random.default_rng(5)
    server = CascadeServer(TRUTH.size, DIM, lam=1.0, alpha_d=1.5)
    for agent in range(TRUTH.size):
        server.receive(agent, *_upload(rng, agent, 3))
    assert server.deleted == 0 and server.graph.n_components == 1


def test_cluster_statistics_pool_the_uploading_agents_component():
    rng = np.random.default_rng(1)
    server = CascadeServer(TRUTH.size, DIM, lam=2.0, alpha_d=1.5)
    for agent in range(TRUTH.size):
        server.receive(agent, *_upload(rng, agent, 3000))
    gram, theta = server.receive(0, *_upload(rng, 0, 3000))
    members = server.members(0)
    np.testing.assert_array_equal(members, [0, 1, 2])
    expected = 2.0 * np.eye(DIM) + server.gram[members].sum(axis=0)
    np.testing.assert_allclose(gram, expected)
    np.testing.assert_allclose(theta, np.linalg.solve(expected, server.moment[members].sum(0)))


def test_without_clustering_everyone_is_pooled_and_no_edge_is_tested():
    rng = np.random.default_rng(2)
    server = CascadeServer(TRUTH.size, DIM, lam=1.0, alpha_d=1.5, clustering=False)
    for agent in range(TRUTH.size):
        gram, _ = server.receive(agent, *_upload(rng, agent, 2000))
    np.testing.assert_allclose(gram, np.eye(DIM) + server.gram.sum(axis=0))
    assert server.graph is None and not server.labels().any()
