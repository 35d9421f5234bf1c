"""Policies and the run loop: LinUCB, LinTS, CLUB, SCLUB; determinism; bad input."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.envs import LinearUsersEnv, SphereItems, clustered_linear_environment
from privbandit.errors import ConfigError, NormBoundError, RewardError, ShapeError
from privbandit.kernels import UserGraph
from privbandit.policies import CLUB, SCLUB, LinTS, LinUCB, Policy
from privbandit.runtime import run, seed_streams

GAP_THETA = np.array([[0.7, 0.25, 0, 0, 0]] * 4 + [[0.7, -0.25, 0, 0, 0]] * 4)
GAP_LABELS = np.repeat([0, 1], 4)


def gap_env() -> LinearUsersEnv:
    """Two clusters of 4 users at gap exactly 0.5; d = 5, K = 20, Gaussian noise 0.1."""
    assert np.linalg.norm(GAP_THETA[0] - GAP_THETA[-1]) == pytest.approx(0.5)
    return LinearUsersEnv(GAP_THETA, SphereItems(5, 20), reward="gaussian", noise_sd=0.1,
                          clusters=GAP_LABELS)


def unit_items(rng, k, d):
    x = rng.standard_normal((k, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_linucb_regret_is_sublinear_on_one_user():
    theta = np.array([[0.6, -0.3, 0.5, 0.2, 0.1]])
    env = LinearUsersEnv(theta, SphereItems(5, 20), reward="gaussian", noise_sd=0.1)
    result = run(LinUCB(5, 1), env, 2000, seed=3)
    cum = result.cumulative_regret()
    first, second = cum[999], cum[-1] - cum[999]
    assert second < 0.5 * first  # the slope of the last half is below the first half's


@settings(max_examples=20)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 40))
def test_linucb_scores_equal_a_from_scratch_computation(seed, steps):
    rng = np.random.default_rng(seed)
    policy = LinUCB(4, 2, beta="oful", lam=0.7)
    xs, rs = [], []
    for t in range(steps):
        items = unit_items(rng, 6, 4)
        a = policy.select(items, 1, t, rng)
        r = float(rng.random())
        policy.update(items, 1, a, r, t)
        xs.append(items[a])
        rs.append(r)
    x, r = np.array(xs), np.array(rs)
    gram = 0.7 * np.eye(4) + x.T @ x
    inv = np.linalg.inv(gram)
    theta = inv @ (x.T @ r)
    logdet = np.linalg.slogdet(gram)[1] - 4 * np.log(0.7)
    beta = 0.5 * np.sqrt(2 * np.log(10) + logdet) + np.sqrt(0.7)
    items = unit_items(rng, 6, 4)
    expected = items @ theta + beta * np.sqrt(np.einsum("kd,de,ke->k", items, inv, items))
    np.testing.assert_allclose(policy.scores(items, 1), expected, rtol=1e-9, atol=1e-12)
    # user 0 has seen nothing: its scores are the prior's
    assert np.allclose(policy.scores(items, 0), (0.5 * np.sqrt(2 * np.log(10)) + np.sqrt(0.7))
                       * np.linalg.norm(items, axis=1) / np.sqrt(0.7))


def test_ties_go_to_the_lowest_index_and_shared_model_pools_users():
    policy = LinUCB(3, 3, shared=True, beta=0.0)
    items = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    assert policy.select(items, 0, 0, np.random.default_rng(0)) == 0  # all scores 0
    policy.update(items, 2, 1, 1.0, 0)
    assert policy.select(items, 0, 1, np.random.default_rng(0)) == 1  # user 0 learnt from 2


def test_linucb_decisions_are_invariant_to_an_orthogonal_change_of_basis():
    """What vertical LinUCB on masked contexts relies on: the same scores to rounding, so
    the same decisions wherever the best two scores are not tied to rounding (there, the
    rotation's rounding picks, as another CPU's would)."""
    rng = np.random.default_rng(5)
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    plain, masked = LinUCB(6, 1), LinUCB(6, 1)
    ties = 0
    for t in range(300):
        items = unit_items(rng, 10, 6)
        scores = plain.scores(items, 0)
        np.testing.assert_allclose(masked.scores(items @ q.T, 0), scores, rtol=1e-9)
        a = plain.select(items, 0, t, rng)
        b = masked.select(items @ q.T, 0, t, rng)
        second, best = np.sort(scores)[-2:]
        if best - second > 1e-9 * abs(best):
            assert a == b, t
        else:
            ties += 1
        r = float(items[a, 0] > 0)
        plain.update(items, 0, a, r, t)
        masked.update(items @ q.T, 0, a, r, t)
    assert ties <= 3


def test_lints_draws_exactly_d_normals_per_select_and_is_reproducible():
    rng_items = np.random.default_rng(0)
    items = unit_items(rng_items, 8, 4)
    policy = LinTS(4, 1, v=0.3)
    policy.update(items, 0, 2, 1.0, 0)
    rng, shadow = np.random.default_rng(9), np.random.default_rng(9)
    a = policy.select(items, 0, 1, rng)
    z = shadow.standard_normal(4)
    sample = policy.models.theta[0] + 0.3 * np.linalg.cholesky(policy.models.inv[0]) @ z
    assert a == int(np.argmax(items @ sample))
    assert rng.random() == shadow.random()  # both streams are at the same place


def test_club_separates_two_clusters_at_gap_half_within_4000_rounds():
    for seed in (0, 1):
        result = run(CLUB(5, 8), gap_env(), 4000, seed, cluster_every=500)
        assert result.cluster_error[0] == 1.0  # one cluster at the start: all users wrong
        assert result.cluster_mixing[0] > 0.0  # ... in a cluster that mixes both
        assert result.cluster_mixing[-1] == 0.0
        assert result.cluster_error[-1] == 0.0
        assert result.cluster_error_rounds[-1] == 3999


def test_sclub_separates_two_clusters_at_gap_half_within_6000_rounds():
    policy = SCLUB(5, 8)
    result = run(policy, gap_env(), 6000, 0, cluster_every=1000)
    assert result.cluster_error[-1] == 0.0
    labels = policy.cluster_labels()
    assert len(set(labels[:4])) == 1 and len(set(labels[4:])) == 1 and labels[0] != labels[4]


def test_club_on_an_edgeless_graph_is_per_user_linucb():
    env = clustered_linear_environment(4, 2, 3, 6, np.random.default_rng(1))
    club = run(CLUB(3, 4, graph=UserGraph(np.zeros((4, 4), dtype=bool)), beta=0.4), env, 300, 2)
    lin = run(LinUCB(3, 4, beta=0.4), env, 300, 2)
    np.testing.assert_allclose(club.regret, lin.regret, rtol=0, atol=1e-12)


@pytest.mark.parametrize("make", [
    lambda: LinUCB(4, 6), lambda: LinTS(4, 6), lambda: CLUB(4, 6), lambda: SCLUB(4, 6),
])
def test_same_seed_same_result_bit_for_bit(make):
    world = seed_streams(4)["world"]
    env = clustered_linear_environment(6, 2, 4, 8, world)
    a, b = run(make(), env, 400, 11), run(make(), env, 400, 11)
    assert np.array_equal(a.regret, b.regret) and np.array_equal(a.reward, b.reward)
    c = run(make(), env, 400, 12)
    assert not np.array_equal(a.regret, c.regret)
    record = json.loads(json.dumps(a.to_dict(max_points=50)))
    assert record["algorithm"] == make().name and record["horizon"] == 400
    assert (a.cluster_error is None) == (make().cluster_labels() is None)


def test_seed_sequences_are_not_consumed_by_a_run():
    seq = np.random.SeedSequence(8, spawn_key=(2,))
    env = clustered_linear_environment(3, 1, 3, 4, np.random.default_rng(0))
    a = run(LinUCB(3, 3), env, 100, seq)
    b = run(LinUCB(3, 3), env, 100, seq)
    assert np.array_equal(a.regret, b.regret)


ITEMS = np.eye(3)[:2] * 0.5


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda p: p.select(np.zeros((4, 2)), 0, 0, None), ShapeError,
         r"items must be a \(K, 3\) array of contexts; got \(4, 2\)"),
        (lambda p: p.select(np.zeros((0, 3)), 0, 0, None), ShapeError,
         "items must hold at least one item"),
        (lambda p: p.select(np.full((2, 3), 0.9), 0, 0, None), NormBoundError,
         r"items must have L2 norm <= 1 \(the declared item_bound\); got an item of norm 1.55"),
        (lambda p: p.select(np.array([[np.nan, 0, 0]]), 0, 0, None), NormBoundError,
         "items must be finite"),
        (lambda p: p.select(ITEMS, 5, 0, None), ConfigError,
         r"user must be an integer in \[0, 2\); got 5"),
        (lambda p: p.update(ITEMS, 0, 0, float("nan"), 0), RewardError,
         "reward must be a finite real number; got nan"),
        (lambda p: p.update(ITEMS, 0, 0, "high", 0), RewardError,
         "reward must be a finite real number; got 'high'"),
        (lambda p: p.update(ITEMS, 0, 2, 1.0, 0), ConfigError,
         r"action must be an integer in \[0, 2\); got 2"),
    ],
)
@pytest.mark.parametrize("make", [
    lambda: LinUCB(3, 2), lambda: LinTS(3, 2), lambda: CLUB(3, 2), lambda: SCLUB(3, 2),
])
def test_policy_bad_round_input(make, call, error, match):
    policy = make()
    assert isinstance(policy, Policy)
    with pytest.raises(error, match=match):
        call(policy)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: LinUCB(3, 0), "n_users must be an integer >= 1; got 0"),
        (lambda: LinUCB(0, 2), "dim must be an integer >= 1; got 0"),
        (lambda: LinUCB(3, 2, beta="huge"), "beta must be 'oful' or a finite number >= 0"),
        (lambda: LinUCB(3, 2, beta=-1.0), "beta must be a finite number >= 0; got -1.0"),
        (lambda: LinUCB(3, 2, confidence=0.0),
         r"confidence must be a failure probability in \(0, 1\); got 0.0"),
        (lambda: LinUCB(3, 2, lam=0.0), "lam must be a finite number > 0; got 0.0"),
        (lambda: LinUCB(3, 2, item_bound=-1), "item_bound must be a finite number > 0"),
        (lambda: LinTS(3, 2, v=float("nan")), "v must be a finite number >= 0; got nan"),
        (lambda: CLUB(3, 2, alpha=0), "alpha must be a finite number > 0; got 0"),
        (lambda: CLUB(3, 2, graph="complete"), "graph must be None or a kernels.UserGraph"),
        (lambda: CLUB(3, 0), "n_users must be an integer >= 1; got 0"),
        (lambda: SCLUB(3, 2, alpha_p=-1), "alpha_p must be a finite number > 0; got -1"),
        (lambda: run(LinUCB(3, 1), "env", 10, 0), "env must be an Environment"),
        (lambda: run(LinUCB(3, 1), gap_env(), 0, 0), "horizon must be an integer >= 1; got 0"),
        (lambda: run(LinUCB(5, 8), gap_env(), 5, -1), "seed must be an integer >= 0"),
    ],
)
def test_policy_bad_construction(build, match):
    with pytest.raises(InvalidParameterError, match=match):
        build()


def test_club_graph_of_the_wrong_size_is_refused():
    with pytest.raises(ShapeError, match="graph must have n_users=3 nodes; got 4"):
        CLUB(2, 3, graph=UserGraph.complete(4))
