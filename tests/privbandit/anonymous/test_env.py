"""The anonymous environment: feedback only through the C-anonymous aggregator."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.envs.anonymous import AnonymousBanditEnv, clustered_means
from privbandit.errors import ConfigError, ShapeError
from privbandit.mechanisms.anonymous import KAnonymousAggregator, pack_groups
from privbandit.mechanisms.errors import AnonymityError

MEANS = np.array([[0.9, 0.1], [0.2, 0.8], [0.5, 0.5], [0.0, 1.0]])


def test_feedback_only_through_the_aggregator():
    env = AnonymousBanditEnv(MEANS, threshold=3)
    assert isinstance(env.aggregator, KAnonymousAggregator)
    rng = np.random.default_rng(0)
    with pytest.raises(AnonymityError, match="fewer than the threshold C=3"):
        env.aggregator.aggregate(pack_groups([[0, 1]]), np.array([0]), rng)
    with pytest.raises(AnonymityError, match="play check failed"):  # nothing played yet
        env.aggregator.aggregate(pack_groups([[0, 1, 2]]), np.array([0]), rng)
    env.play(np.array([[0, 0, 0, 1]]), np.array([1]))
    sums = env.aggregator.aggregate(pack_groups([[0, 1, 2]]), np.array([0]), rng)
    assert sums.shape == (1,)
    assert "means" not in env.describe() and env.describe()["threshold"] == 3


def test_bernoulli_sums_have_the_right_mean():
    env = AnonymousBanditEnv(MEANS, threshold=4)
    members = np.tile(pack_groups([[0, 1, 2, 3]]), (20_000, 1, 1))
    env.play(np.zeros((1, 4), dtype=int), np.array([20_000]))
    sums = env.aggregator.aggregate(members, np.zeros((20_000, 1), int), np.random.default_rng(1))
    assert sums.mean() == pytest.approx(MEANS[:, 0].sum(), abs=0.03)


def test_the_aggregator_releases_each_played_round_once():
    env = AnonymousBanditEnv(MEANS, threshold=2)
    rng, groups = np.random.default_rng(2), pack_groups([[0, 2], [1, 3]])
    arms = np.array([[0, 1]] * 3)
    env.play(np.array([[0, 1, 0, 1]]), np.array([3]))
    with pytest.raises(AnonymityError, match="no played assignment has its users on these"):
        env.aggregator.aggregate(groups[None], np.array([[1, 0]]), rng)  # arms not played
    with pytest.raises(AnonymityError, match="unreleased: 3"):  # 1,000 rounds from 3 played
        env.aggregator.aggregate(np.tile(groups, (1000, 1, 1)), np.zeros((1000, 2), int), rng)
    assert env.aggregator.aggregate(np.tile(groups, (3, 1, 1)), arms, rng).shape == (3, 2)
    assert env.aggregator.unreleased_rounds == 0
    with pytest.raises(AnonymityError, match="unreleased: 0"):
        env.aggregator.aggregate(groups[None], arms[:1], rng)
    env.play(np.array([[0, 1, 0, 1]]), np.array([1]))  # one more round played, one more sum
    assert env.aggregator.aggregate(groups[None], arms[:1], rng).shape == (1, 2)


def test_regret_and_expected_reward():
    env = AnonymousBanditEnv(MEANS, threshold=2)
    plays = np.array([[0, 1, 0, 1], [1, 0, 1, 0]])
    np.testing.assert_allclose(env.regret(plays), [0.0, 0.8 + 0.6 + 0.0 + 1.0])
    np.testing.assert_allclose(env.expected_reward(plays), [0.9 + 0.8 + 0.5 + 1.0, 0.1 + 0.2 + 0.5])
    assert env.detection_error(np.array([0, 0, 1, 1])) == 0.25


def test_laplace_option_noises_and_declares_its_epsilon():
    env = AnonymousBanditEnv(MEANS, threshold=2, laplace_epsilon=0.5)
    assert env.aggregator.noisy and env.aggregator.event.pure_epsilon == pytest.approx(0.5)
    assert env.describe()["laplace_epsilon"] == 0.5


@given(st.integers(1, 6), st.integers(1, 8), st.integers(0, 30), st.integers(0, 2**32 - 1))
def test_clustered_means_plant_u_users_per_arm(k, u, extra, seed):
    means = clustered_means(k * u + extra, k, u, np.random.default_rng(seed))
    assert means.shape == (k * u + extra, k) and ((means >= 0) & (means <= 1)).all()
    assert AnonymousBanditEnv(means, 1).cluster_size() >= u


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(means=np.ones(3), threshold=1), ShapeError, "means must be a non-empty"),
    (dict(means=MEANS + 1, threshold=1), ConfigError, r"means in \[0, 1\]"),
    (dict(means=MEANS, threshold=0), InvalidParameterError, "threshold must be an integer >= 1"),
    (dict(means=MEANS, threshold=1, reward="poisson"), ConfigError, "reward must be one of"),
    (dict(means=MEANS, threshold=1, laplace_epsilon=-1.0), InvalidParameterError,
     "laplace_epsilon must be a finite number > 0"),
])
def test_bad_environment_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        AnonymousBanditEnv(**kwargs)


def test_cluster_size_too_large_is_refused():
    with pytest.raises(ConfigError, match="cluster_size must be at most n_users / n_arms = 3"):
        clustered_means(10, 3, 4, np.random.default_rng(0))


def test_assignments_are_checked():
    env = AnonymousBanditEnv(MEANS, threshold=2)
    with pytest.raises(ShapeError, match=r"\(R, N=4\)"):
        env.regret(np.zeros((2, 3), int))
    with pytest.raises(ConfigError, match="arm in"):
        env.regret(np.full((1, 4), 2))


def test_round_by_round_protocol_gives_no_individual_feedback():
    from privbandit.envs.base import Environment

    env = AnonymousBanditEnv(MEANS, threshold=3)
    assert isinstance(env, Environment)
    env.reset(np.random.default_rng(2))
    env.observe(0)
    out = env.act(0, np.array([0, 1, 0, 1]))
    assert out.feedback is None and out.regret == pytest.approx(0.0)
    assert out.expected == pytest.approx(0.9 + 0.8 + 0.5 + 1.0) and 0 <= out.reward <= 4
    assert env.detection_error(np.array([0, 1, 1, 1])) == 0.0
    assert env.detection_error(None) is None
