"""Environments: the seeds' generators, block-wise determinism, cascade oracle, bad input."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.envs import (
    BiasedSphereItems,
    CascadeEnv,
    LinearUsersEnv,
    PoolItems,
    SphereItems,
    clustered_linear_environment,
    clustered_preferences,
    seed000_environment,
    seed001_environment,
    top_k,
)
from privbandit.errors import ConfigError, HorizonError, NormBoundError, ShapeError


def play(env, rounds, seed, choose=lambda rnd: 0):
    env.reset(np.random.default_rng(seed))
    out = []
    for t in range(rounds):
        rnd = env.observe(t)
        out.append((rnd.user, rnd.items.copy(), env.act(t, choose(rnd))))
    return out


def test_seed000_generator_matches_the_papers_form():
    env = seed000_environment(np.random.default_rng(0), n_users=20, n_clusters=4, dim=10)
    theta, labels = env._theta, env.true_clusters()
    np.testing.assert_array_equal(labels, np.repeat(np.arange(4), 5))  # contiguous equal split
    np.testing.assert_allclose(np.linalg.norm(theta, axis=1), 1.0)
    np.testing.assert_allclose(theta[:, -1], np.sqrt(0.5))
    for _, items, _ in play(env, 30, 1):
        assert items.shape == (10, 10)
        np.testing.assert_allclose(np.linalg.norm(items, axis=1), 1.0)
        np.testing.assert_allclose(items[:, -1], np.sqrt(0.5))
        means = items @ theta.T
        assert means.min() >= 0.0 and means.max() <= 1.0


def test_seed001_generator_is_orthonormal_with_unit_items():
    env = seed001_environment(np.random.default_rng(0), n_users=40, n_clusters=5)
    centers = env._theta[np.unique(env.true_clusters(), return_index=True)[1]]
    np.testing.assert_allclose(centers @ centers.T, np.eye(5), atol=1e-12)
    env.reset(np.random.default_rng(3))
    items = env.observe(0).items
    assert items.shape == (200, 20) and env.list_len == 4
    np.testing.assert_allclose(np.linalg.norm(items, axis=1), 1.0)


@given(m=st.integers(2, 6), gap=st.floats(0.0, 0.9), kind=st.sampled_from(["sphere",
       "biased-sphere"]), seed=st.integers(0, 2**32 - 1))
def test_preferences_respect_the_minimum_gap(m, gap, kind, seed):
    theta, labels = clustered_preferences(
        12, m, 6, np.random.default_rng(seed), kind=kind, gap=gap, assignment="random"
    )
    centers = np.array([theta[labels == j][0] for j in range(m)])
    assert np.all(theta == centers[labels])
    dist = np.linalg.norm(centers[:, None] - centers[None], axis=2)
    assert dist[~np.eye(m, dtype=bool)].min() >= gap
    assert np.bincount(labels).max() - np.bincount(labels).min() <= 1


def test_same_seed_same_rounds_bit_for_bit_and_blocks_are_vectorized():
    env = clustered_linear_environment(6, 2, 4, 5, np.random.default_rng(0), block=7)
    calls = []
    draw = env._draw_block

    def counting(size, rng):
        calls.append(size)
        return draw(size, rng)

    env._draw_block = counting
    a = play(env, 30, 11, choose=lambda rnd: int(rnd.t % 5))
    b = play(env, 30, 11, choose=lambda rnd: int(rnd.t % 5))
    assert calls == [7] * 10  # one draw per block of 7 rounds, twice
    for (ua, xa, oa), (ub, xb, ob) in zip(a, b, strict=True):
        assert ua == ub and np.array_equal(xa, xb) and oa == ob
    c = play(env, 30, 12)
    assert any(not np.array_equal(x[1], y[1]) for x, y in zip(a, c, strict=True))


def test_linear_rewards_and_pseudo_regret():
    theta = np.array([[0.6, 0.0], [0.0, 0.9]])
    env = LinearUsersEnv(theta, SphereItems(2, 6), reward="bernoulli")
    for user, items, out in play(env, 200, 5, choose=lambda rnd: 2):
        means = np.clip(items @ theta[user], 0, 1)
        assert out.expected == pytest.approx(means[2], abs=1e-15)
        assert out.regret == pytest.approx(means.max() - means[2])
        assert out.reward in (0.0, 1.0) and out.feedback == out.reward
    gauss = LinearUsersEnv(theta, SphereItems(2, 6), reward="gaussian", noise_sd=0.0)
    for user, items, out in play(gauss, 20, 5):
        assert out.reward == pytest.approx(items[0] @ theta[user])


def test_bernoulli_rewards_have_the_stated_mean():
    theta = np.array([[0.0, 0.0, 1.0]])
    env = LinearUsersEnv(theta, BiasedSphereItems(3, 1), reward="bernoulli")
    rewards = np.array([o.reward for _, _, o in play(env, 4000, 9)])
    # x . theta = 1/sqrt 2 for every item; 4000 draws: sd 0.0072
    assert abs(rewards.mean() - np.sqrt(0.5)) < 0.03


def test_arrival_probabilities_are_followed():
    env = LinearUsersEnv(np.zeros((3, 2)), SphereItems(2, 2), user_probs=[0.0, 0.25, 0.75])
    users = np.array([u for u, _, _ in play(env, 2000, 4)])
    assert (users == 0).sum() == 0
    assert abs((users == 2).mean() - 0.75) < 0.05


def test_cascade_feedback_reward_and_exact_oracle():
    theta = np.array([[0.5, 0.5, 0.0]])
    items = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.6, 0.6, 0.0], [0.0, 0.0, 1.0],
                      [-1.0, 0.0, 0.0]])
    env = CascadeEnv(theta, PoolItems(items, 5, bound=1.0), 2)
    env.reset(np.random.default_rng(0))
    for t in range(300):
        rnd = env.observe(t)
        w = np.clip(rnd.items @ theta[0], 0, 1)
        best = max(1 - (1 - w[a]) * (1 - w[b]) for a, b in itertools.permutations(range(5), 2))
        ranking = np.array([t % 5, (t + 1) % 5])
        out = env.act(t, ranking)
        assert out.expected == pytest.approx(1 - np.prod(1 - w[ranking]))
        assert out.regret == pytest.approx(best - out.expected)
        assert out.regret >= -1e-15
        assert out.feedback in (0, 1, 2) and out.reward == float(out.feedback < 2)
        if w[ranking[0]] == 0.0:  # an unattractive first item is never clicked
            assert out.feedback != 0
    np.testing.assert_array_equal(top_k(np.array([0.2, 0.9, 0.9, 0.1]), 2), [1, 2])


def test_cascade_click_rate_matches_the_model():
    theta = np.array([[1.0, 0.0]])
    items = np.array([[0.3, 0.0], [0.5, 0.0]])
    env = CascadeEnv(theta, PoolItems(items, 2, bound=1.0), 2)
    env.reset(np.random.default_rng(1))
    firsts = []
    for t in range(4000):
        rnd = env.observe(t)
        order = np.argsort(rnd.items[:, 0])  # 0.3 first, then 0.5
        firsts.append(env.act(t, order).feedback)
    firsts = np.array(firsts)
    assert abs((firsts == 0).mean() - 0.3) < 0.03
    assert abs((firsts == 1).mean() - 0.7 * 0.5) < 0.03
    assert abs((firsts == 2).mean() - 0.7 * 0.5) < 0.03


def test_rounds_are_served_in_order():
    env = clustered_linear_environment(2, 1, 2, 3, np.random.default_rng(0))
    with pytest.raises(HorizonError, match="call reset"):
        env.observe(0)
    env.reset(np.random.default_rng(0))
    with pytest.raises(HorizonError, match="expected t=0; got t=1"):
        env.observe(1)
    env.observe(0)
    with pytest.raises(HorizonError, match="act on the round just observed"):
        env.act(1, 0)


@pytest.mark.parametrize(
    "build, error, match",
    [
        (lambda: LinearUsersEnv(np.zeros((0, 3)), SphereItems(3, 4)), ConfigError,
         "n_users must be an integer >= 1"),
        (lambda: LinearUsersEnv(np.zeros((2, 4)), SphereItems(3, 4)), ShapeError,
         r"theta must be an \(n_users, 3\) array"),
        (lambda: SphereItems(3, 0), ConfigError, "n_items must be an integer >= 1; got 0"),
        (lambda: PoolItems(np.eye(3), 5), ConfigError,
         "n_items must be at most the pool's item count 3; got 5"),
        (lambda: CascadeEnv(np.zeros((1, 3)), SphereItems(3, 4), 6), ConfigError,
         r"list_len must be at most the number of items per round \(4\); got 6"),
        (lambda: PoolItems(2 * np.eye(3), 2, bound=1.0), NormBoundError,
         "features must have L2 norm <= bound=1"),
        (lambda: LinearUsersEnv(np.zeros((2, 3)), SphereItems(3, 4), reward="poisson"),
         ConfigError, "reward must be one of"),
        (lambda: LinearUsersEnv(np.zeros((2, 3)), SphereItems(3, 4), user_probs=[0.5, 0.6]),
         ConfigError, "user_probs must be probabilities summing to 1"),
        (lambda: clustered_preferences(3, 4, 2, np.random.default_rng(0)), ConfigError,
         "n_clusters must be at most n_users=3; got 4"),
        (lambda: clustered_preferences(5, 4, 3, np.random.default_rng(0), kind="orthonormal"),
         ConfigError, "n_clusters must be at most dim=3"),
        (lambda: clustered_preferences(4, 4, 2, np.random.default_rng(0), gap=1.9,
                                       max_draws=200), ConfigError, "gap must be a gap reachable"),
    ],
)
def test_environment_bad_input(build, error, match):
    with pytest.raises(error, match=match):
        build()


@settings(max_examples=20)
@given(action=st.one_of(st.integers(-3, -1), st.integers(4, 9)))
def test_actions_out_of_range_are_refused(action):
    env = clustered_linear_environment(2, 1, 2, 4, np.random.default_rng(0))
    env.reset(np.random.default_rng(0))
    env.observe(0)
    with pytest.raises(ConfigError, match=r"action must be an integer in \[0, 4\)"):
        env.act(0, action)


@pytest.mark.parametrize(
    "ranking, error, match",
    [
        ([0, 0], ConfigError, "2 distinct indices"),
        ([0, 9], ConfigError, "2 distinct indices"),
        ([0], ShapeError, "ranked list of 2 integer item indices"),
        ([0.0, 1.0], ShapeError, "ranked list of 2 integer item indices"),
    ],
)
def test_cascade_bad_rankings(ranking, error, match):
    env = CascadeEnv(np.zeros((1, 2)), SphereItems(2, 4), 2)
    env.reset(np.random.default_rng(0))
    env.observe(0)
    with pytest.raises(error, match=match):
        env.act(0, np.array(ranking))


def test_a_key_the_world_setting_does_not_read_is_refused():
    from privbandit.envs.factory import keys_read, make_environment

    rng = np.random.default_rng(0)
    with pytest.raises(ConfigError, match=r"environment.list_len must be unset: setting "
                                          r"'seed000' reads only setting, dim, users"):
        make_environment({"list_len": 3}, rng)
    assert "list_len" in keys_read({"setting": "seed001"})
    assert "list_len" not in keys_read({})  # seed 000's setting, the default
    assert make_environment({"setting": "seed001", "list_len": 3}, rng).list_len == 3
