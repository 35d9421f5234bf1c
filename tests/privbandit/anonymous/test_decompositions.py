"""C-anonymous decompositions: validity, the size bound, the polytope LP and Carathéodory."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.anonymous.decompositions import (
    DECOMPOSITIONS,
    FREE,
    Decomposition,
    anonymity_point,
    dominating_point,
    greedy_decomposition,
    in_polytope,
    informative_mask,
    is_u_batched,
    lp_decomposition,
    pair_demand,
    randomized_decomposition,
    verify_decomposition,
)
from privbandit.anonymous.decompositions.caratheodory import caratheodory, reduce_support
from privbandit.anonymous.decompositions.polytope import normalised_weights
from privbandit.anonymous.errors import DecompositionError
from privbandit.errors import ConfigError, ShapeError


@st.composite
def u_batched_graphs(draw):
    """(active (N, K), D, C, U): planted optimal arms, U users per arm at least."""
    k = draw(st.integers(1, 5))
    c = draw(st.integers(1, 4))
    u = draw(st.integers(c + 1, 3 * (c + 1) * k))
    n = k * u + draw(st.integers(0, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    planted = np.r_[np.repeat(np.arange(k), u), rng.integers(0, k, n - k * u)]
    active = rng.random((n, k)) < draw(st.floats(0.0, 1.0))
    active[np.arange(n), planted] = True
    return active, draw(st.integers(1, 300)), c, u


def alpha_bound(k, c, u):
    return max(1, math.ceil(k * (c + 1) / u))


@settings(max_examples=40)
@given(u_batched_graphs())
def test_lp_decomposition_is_valid_and_within_size_bound(graph):
    active, d, c, u = graph
    n, k = active.shape
    dec = lp_decomposition(active, d, c)
    verify_decomposition(dec, active, d, c)
    assert dec.details["topped_up"] == 0
    assert dec.details["alpha"] <= alpha_bound(k, c, u) + 1e-9
    assert dec.size <= alpha_bound(k, c, u) * d + n * k + 1


@settings(max_examples=40)
@given(u_batched_graphs(), st.sampled_from(["deficit", "uniform"]), st.integers(0, 2**32 - 1))
def test_randomized_and_greedy_are_valid(graph, weighting, seed):
    active, d, c, _ = graph
    rng = np.random.default_rng(seed)
    dec = randomized_decomposition(active, d, c, rng, weighting=weighting)
    verify_decomposition(dec, active, d, c)
    greedy = greedy_decomposition(active, d, c)
    verify_decomposition(greedy, active, d, c)
    assert greedy.size == d * active.any(axis=0).sum()


@settings(max_examples=40)
@given(u_batched_graphs())
def test_lp_points_and_vertices_stay_in_the_polytope(graph):
    active, _, c, _ = graph
    w = normalised_weights(active)
    point = anonymity_point(active, c)
    for block, x, beta in zip(point.blocks, point.points, point.betas, strict=True):
        assert in_polytope(x, block, c)
        assert np.all(x[:, block] >= beta * w[:, block] - 1e-9)
        assert np.all(x[~active] == 0)
        vertices, lam = caratheodory(x, block, c)
        assert np.all((vertices == 0) | (vertices == 1))
        assert all(in_polytope(v, block, c, tol=0) for v in vertices)
        assert lam.min() > 0 and lam.sum() == pytest.approx(1.0)
        np.testing.assert_allclose(np.tensordot(lam, vertices, axes=1), x, atol=1e-7)


def test_lemma5_one_block_when_u_is_large():
    k, c = 3, 2
    active = np.ones((k * k * (c + 1), k), dtype=bool)
    beta, x = dominating_point(active, np.ones(k, dtype=bool), c)
    assert beta == pytest.approx(1.0)
    assert anonymity_point(active, c).alpha == pytest.approx(1.0)


def test_in_polytope_rejects_each_violated_constraint():
    arms = np.array([True, False])
    good = np.array([[1.0, 0], [1.0, 0], [1.0, 0]])
    assert in_polytope(good, arms, 2)
    assert not in_polytope(good[:2], arms, 2)  # column sum below C + 1
    assert not in_polytope(good + np.array([0, 0.5]), arms, 2)  # mass outside S
    assert not in_polytope(np.array([[1.0, 0.5], [1, 0], [1, 0]]), np.ones(2, bool), 2)
    assert not in_polytope(good * 1.5, arms, 2)  # above 1


def test_reduce_support_keeps_the_point():
    rng = np.random.default_rng(0)
    points = rng.integers(0, 2, (9, 2, 2)).astype(float)
    weights = rng.random(9)
    weights /= weights.sum()
    kept, lam = reduce_support(points, weights)
    assert len(kept) <= 5
    np.testing.assert_allclose(np.tensordot(lam, kept, axes=1),
                               np.tensordot(weights, points, axes=1), atol=1e-12)


def test_informative_mask_counts_group_sizes():
    patterns = np.array([[0, 0, 0, 1, FREE], [1, 1, 0, 1, 1]])
    assert informative_mask(patterns, 2).tolist() == [
        [True, True, True, False, False], [True, True, False, True, True]]


def test_verify_catches_outside_demand_set_and_deficits():
    active = np.array([[True, False]] * 3 + [[False, True]] * 3)
    ok = Decomposition(np.array([[0, 0, 0, 1, 1, 1]]), np.array([4]), "manual")
    verify_decomposition(ok, active, 4, 2)
    with pytest.raises(DecompositionError, match="outside its demand set"):
        verify_decomposition(Decomposition(np.array([[1, 0, 0, 1, 1, 1]]), np.array([4]), "x"),
                             active, 4, 2)
    with pytest.raises(DecompositionError, match="fewer than its demand"):
        verify_decomposition(ok, active, 5, 2)


@pytest.mark.parametrize("name", sorted(DECOMPOSITIONS))
def test_too_few_candidates_names_the_assumption(name):
    active = np.array([[True, True]] * 4 + [[True, False]] * 4)
    with pytest.raises(DecompositionError, match=r"U >= C \+ 1 fails: arm 1 is active for only 4"):
        DECOMPOSITIONS[name](active, 10, 4, np.random.default_rng(0))


@pytest.mark.parametrize("active, match", [
    (np.ones((3,), dtype=bool), "non-empty"),
    (np.ones((3, 2), dtype=int), "boolean"),
])
def test_active_shape_errors(active, match):
    with pytest.raises(ShapeError, match=match):
        greedy_decomposition(active, 3, 1)


def test_user_without_arms_is_refused():
    active = np.array([[True, False], [False, False]])
    with pytest.raises(ConfigError, match="at least one active arm per user"):
        lp_decomposition(active, 3, 1)


def test_is_u_batched():
    active = np.array([[True, True]] * 4 + [[True, False]] * 2)
    assert is_u_batched(active, 3)
    assert not is_u_batched(active, 4)


def test_pair_demand_rounds_up():
    active = np.array([[True, True, True], [True, False, False]])
    assert pair_demand(active, 10).tolist() == [[4, 4, 4], [10, 0, 0]]


def test_filled_refuses_inactive_arms():
    dec = Decomposition(np.array([[0, FREE]]), np.array([1]), "manual")
    active = np.array([[True, False], [True, False]])
    assert dec.filled(active, np.array([0, 0])).patterns.tolist() == [[0, 0]]
    with pytest.raises(ConfigError, match="arms must be"):
        dec.filled(active, np.array([0, 1]))
