"""Kernels: rank-one inverses, UCB widths, determinant lemma, user-graph components."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components

from privbandit.errors import ConfigError, ShapeError
from privbandit.kernels import (
    UserGraph,
    club_confidence,
    cluster_error_rate,
    cluster_mixing_rate,
    det_ratio_exceeds,
    logdet_increment,
    logdet_ratio,
    oful_beta,
    quadratic_forms,
    sherman_morrison,
    sherman_morrison_rows,
    ucb_scores,
    ucb_widths,
)


def unit_rows(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    x = rng.standard_normal((n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True) * rng.random((n, 1))


@settings(max_examples=8)
@given(
    dim=st.integers(1, 12),
    lam=st.floats(0.5, 2.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_sherman_morrison_matches_inverse_after_ten_thousand_updates(dim, lam, seed):
    rng = np.random.default_rng(seed)
    xs = unit_rows(rng, 10_000, dim)
    inv = np.eye(dim) / lam
    for x in xs:
        sherman_morrison(inv, x)
    gram = lam * np.eye(dim) + xs.T @ xs
    assert np.max(np.abs(inv - np.linalg.inv(gram))) <= 1e-9


@given(dim=st.integers(1, 8), batch=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_batched_update_equals_one_at_a_time(dim, batch, seed):
    rng = np.random.default_rng(seed)
    vs = unit_rows(rng, batch, dim)
    base = np.stack([np.linalg.inv(np.eye(dim) + np.outer(v, v)) for v in vs])
    xs = unit_rows(rng, batch, dim)
    one = base.copy()
    quads = [sherman_morrison(one[b], xs[b]) for b in range(batch)]
    many = base.copy()
    q = sherman_morrison(many, xs)
    np.testing.assert_allclose(many, one, rtol=0, atol=1e-14)
    np.testing.assert_allclose(q, quads, rtol=1e-13)


def test_rows_update_touches_only_the_given_users():
    rng = np.random.default_rng(1)
    invs = np.tile(np.eye(3), (5, 1, 1))
    xs = unit_rows(rng, 2, 3)
    sherman_morrison_rows(invs, np.array([4, 1]), xs)
    np.testing.assert_allclose(invs[4], np.linalg.inv(np.eye(3) + np.outer(xs[0], xs[0])))
    np.testing.assert_allclose(invs[1], np.linalg.inv(np.eye(3) + np.outer(xs[1], xs[1])))
    for u in (0, 2, 3):
        assert np.array_equal(invs[u], np.eye(3))


def test_downdate_undoes_update_and_a_singular_downdate_is_refused():
    rng = np.random.default_rng(2)
    x = unit_rows(rng, 1, 4)[0]
    inv = np.eye(4)
    sherman_morrison(inv, x)
    sherman_morrison(inv, x, weight=-1.0)
    np.testing.assert_allclose(inv, np.eye(4), atol=1e-14)
    e = np.zeros(4)
    e[0] = 1.0
    before = inv.copy()
    with pytest.raises(ConfigError, match="weight must be a value keeping A positive definite"):
        sherman_morrison(inv, e, weight=-1.0)
    assert np.array_equal(inv, before)


@pytest.mark.parametrize(
    "users, x, error, match",
    [
        (np.array([0, 0]), np.zeros((2, 3)), ConfigError, "users must be distinct user indices"),
        (np.array([0, 1]), np.zeros((2, 4)), ShapeError, r"shapes \(B,\) and \(B, 3\)"),
    ],
)
def test_rows_update_bad_input(users, x, error, match):
    with pytest.raises(error, match=match):
        sherman_morrison_rows(np.tile(np.eye(3), (3, 1, 1)), users, x)


@given(k=st.integers(1, 30), dim=st.integers(1, 8), seed=st.integers(0, 2**32 - 1))
def test_widths_and_scores_equal_a_per_item_loop(k, dim, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((dim, dim))
    inv = np.linalg.inv(a @ a.T + np.eye(dim))
    items = rng.standard_normal((k, dim))
    theta = rng.standard_normal(dim)
    loop = np.array([math.sqrt(x @ inv @ x) for x in items])
    np.testing.assert_allclose(ucb_widths(inv, items), loop, rtol=1e-12)
    np.testing.assert_allclose(ucb_scores(theta, inv, items, 0.7), items @ theta + 0.7 * loop,
                               rtol=1e-12, atol=1e-12)
    batch = quadratic_forms(np.stack([inv, 2 * inv]), np.stack([items, items]))
    np.testing.assert_allclose(batch[1], 2 * loop**2, rtol=1e-12)


@given(dim=st.integers(1, 8), n=st.integers(1, 50), seed=st.integers(0, 2**32 - 1))
def test_determinant_lemma_tracks_log_det(dim, n, seed):
    rng = np.random.default_rng(seed)
    inv = np.eye(dim)
    logdet = 0.0
    xs = unit_rows(rng, n, dim)
    for x in xs:
        logdet += float(logdet_increment(sherman_morrison(inv, x)))
    direct = np.linalg.slogdet(np.eye(dim) + xs.T @ xs)[1]
    assert logdet == pytest.approx(direct, rel=1e-10, abs=1e-10)
    ratio = float(logdet_ratio(np.eye(dim), xs.T @ xs))
    assert ratio == pytest.approx(direct, rel=1e-10, abs=1e-10)


def test_det_ratio_trigger_and_bad_threshold():
    assert bool(det_ratio_exceeds(math.log(2.0) + 1e-12, 2.0))
    assert not bool(det_ratio_exceeds(math.log(2.0) - 1e-12, 2.0))
    np.testing.assert_array_equal(det_ratio_exceeds(np.array([0.0, 1.0]), 1.5), [False, True])
    with pytest.raises(ConfigError, match="threshold must be a number > 0; got 0"):
        det_ratio_exceeds(1.0, 0)


def test_confidence_radii():
    assert float(club_confidence(0)) == pytest.approx(1.0)
    assert float(club_confidence(9)) == pytest.approx(math.sqrt((1 + math.log(10)) / 10))
    expected = 0.5 * math.sqrt(2 * math.log(10) + 3.0) + math.sqrt(2.0) * 1.0
    assert float(oful_beta(3.0, 2.0, 0.5, 0.1, 1.0)) == pytest.approx(expected)


def canonical(adjacency: np.ndarray) -> np.ndarray:
    _, lab = connected_components(adjacency, directed=False)
    first = {c: np.flatnonzero(lab == c).min() for c in np.unique(lab)}
    return np.array([first[c] for c in lab])


@settings(max_examples=40)
@given(n=st.integers(1, 25), p=st.floats(0.0, 1.0), seed=st.integers(0, 2**32 - 1))
def test_user_graph_components_match_scipy_under_deletions(n, p, seed):
    rng = np.random.default_rng(seed)
    graph = UserGraph.random(n, p, rng)
    assert np.array_equal(graph.labels, canonical(graph.adjacency))
    for _ in range(15):
        user = int(rng.integers(n))
        others = rng.choice(n, size=int(rng.integers(0, n + 1)), replace=False)
        before = graph.n_components
        split = graph.delete_edges(user, others)
        assert np.array_equal(graph.labels, canonical(graph.adjacency))
        assert split == (graph.n_components > before)
        assert not graph.adjacency[user, others].any()


def test_user_graph_views_are_read_only_and_bad_graphs_refused():
    graph = UserGraph.complete(4)
    with pytest.raises(ValueError):
        graph.labels[0] = 3
    with pytest.raises(ValueError):
        graph.adjacency[0, 1] = False
    with pytest.raises(ConfigError, match="adjacency must be a symmetric boolean matrix"):
        UserGraph(np.triu(np.ones((3, 3), dtype=bool)))
    with pytest.raises(ShapeError, match="non-empty square matrix"):
        UserGraph(np.ones((2, 3), dtype=bool))
    with pytest.raises(ConfigError, match="n must be an integer >= 1; got 0"):
        UserGraph.complete(0)


@pytest.mark.parametrize(
    "true, found, error",
    [
        ([0, 0, 1, 1], [7, 7, 3, 3], 0.0),
        ([0, 0, 1, 1], [0, 0, 0, 0], 1.0),
        ([0, 0, 1, 1], [5, 5, 2, 3], 0.5),
        ([0, 0, 0, 1], [0, 0, 1, 1], 1.0),
        ([0, 1, 2, 2], [0, 1, 2, 3], 0.5),
    ],
)
def test_cluster_error_rate_examples(true, found, error):
    assert cluster_error_rate(np.array(true), np.array(found)) == pytest.approx(error)


@pytest.mark.parametrize(
    "true, found, mixing",
    [
        ([0, 0, 1, 1], [7, 7, 3, 3], 0.0),
        ([0, 0, 1, 1], [0, 0, 0, 0], 0.5),   # two equal true clusters merged
        ([0, 0, 1, 1], [5, 5, 2, 3], 0.0),   # a split true cluster is wrong, not mixed
        ([0, 0, 0, 1], [0, 0, 1, 1], 0.25),  # one user with another cluster's
        ([0, 1, 2, 2], [0, 1, 2, 3], 0.0),
        ([0, 0, 1, 1, 2, 2], [0, 0, 0, 1, 1, 1], 1 / 3),
        ([0] * 9 + [1], [0] * 10, 0.1),
    ],
)
def test_cluster_mixing_rate_examples(true, found, mixing):
    assert cluster_mixing_rate(np.array(true), np.array(found)) == pytest.approx(mixing)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5)), min_size=1, max_size=40))
def test_cluster_mixing_never_exceeds_the_error_and_ignores_refinements(pairs):
    true, found = (np.array(v) for v in zip(*pairs, strict=True))
    mixing = cluster_mixing_rate(true, found)
    assert 0.0 <= mixing <= cluster_error_rate(true, found)
    refined = true * 10 + found  # each detected cluster inside one true cluster
    assert cluster_mixing_rate(true, refined) == 0.0
    shares = np.bincount(true) / true.size
    assert cluster_mixing_rate(true, np.zeros_like(true)) == pytest.approx(1 - shares.max())
    with pytest.raises(ShapeError, match="equal length"):
        cluster_mixing_rate(true, found[:-1] if found.size > 1 else np.zeros((1, 1)))


@given(st.lists(st.integers(0, 4), min_size=1, max_size=30), st.randoms())
def test_cluster_error_rate_ignores_label_names(labels, rnd):
    labels = np.array(labels)
    names = list(range(100, 105))
    rnd.shuffle(names)
    assert cluster_error_rate(labels, np.array(names)[labels]) == 0.0
