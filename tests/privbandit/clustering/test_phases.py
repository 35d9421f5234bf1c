"""Phase-based detection: eq. 3 deletes exactly the far edges, eq. 4 merges transitively."""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from privbandit.clustering.phases import merge_global, partition_of, prune_local, ridge_estimates
from privbandit.kernels import UserGraph, club_confidence


def test_ridge_estimates_solve_each_system():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 3, 3))
    gram = a @ a.transpose(0, 2, 1)
    b = rng.standard_normal((4, 3))
    reg = np.array([0.5, 1.0, 2.0, 3.0])
    theta = ridge_estimates(gram, b, reg)
    for m in range(4):
        assert np.allclose((gram[m] + reg[m] * np.eye(3)) @ theta[m], b[m])


@given(arrays(np.float64, (6, 2), elements=st.floats(-2, 2)),
       arrays(np.int64, 6, elements=st.integers(0, 50)), st.floats(0.1, 3.0))
def test_prune_local_deletes_exactly_the_edges_eq3_rejects(theta, counts, alpha):
    graph = UserGraph.complete(6)
    prune_local(graph, theta, counts, alpha)
    conf = club_confidence(counts)
    for i in range(6):
        for j in range(i + 1, 6):
            far = np.linalg.norm(theta[i] - theta[j]) > alpha * (conf[i] + conf[j])
            expect_deleted = far and counts[i] > 0 and counts[j] > 0
            assert graph.adjacency[i, j] == (not expect_deleted)


def test_prune_local_reports_splits():
    graph = UserGraph.complete(3)
    theta = np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 5.0]])
    assert prune_local(graph, theta, np.array([100, 100, 100]), 1.5)
    assert graph.n_components == 2
    assert not prune_local(graph, theta, np.array([100, 100, 100]), 1.5)


@given(arrays(np.float64, (7, 2), elements=st.floats(-1, 1)),
       arrays(np.int64, 7, elements=st.integers(1, 1000)), st.floats(0.5, 3.0))
def test_merge_is_the_transitive_closure_of_eq4(theta, counts, alpha2):
    labels = merge_global(theta, counts, alpha2)
    conf = club_confidence(counts)
    close = np.linalg.norm(theta[:, None] - theta[None], axis=-1) < alpha2 * (
        conf[:, None] + conf[None])
    for i in range(7):
        for j in range(7):
            if close[i, j]:
                assert labels[i] == labels[j]
    # labels are 0..m-1 in order of first appearance
    _, first = np.unique(labels, return_index=True)
    assert list(labels[np.sort(first)]) == list(range(labels.max() + 1))
    # every cluster is connected through close pairs
    for k in np.unique(labels):
        members = np.flatnonzero(labels == k)
        reached = {members[0]}
        frontier = [members[0]]
        while frontier:
            i = frontier.pop()
            for j in members[close[i, members]]:
                if j not in reached:
                    reached.add(j)
                    frontier.append(j)
        assert reached == set(members)


def test_partition_ignores_order_and_labels():
    a = partition_of([np.array([0, 1]), np.array([2]), np.array([3])], np.array([0, 1, 0]))
    b = partition_of([np.array([3]), np.array([1, 0]), np.array([2])], np.array([5, 5, 2]))
    c = partition_of([np.array([0, 1]), np.array([2]), np.array([3])], np.array([0, 0, 1]))
    assert a == b
    assert a != c
