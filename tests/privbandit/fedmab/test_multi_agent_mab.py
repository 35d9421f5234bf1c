"""The multi-agent Bernoulli environment (privbandit/envs/multi_agent_mab.py)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.errors import RewardError, ShapeError


def test_homogeneous_rows_are_shared_and_heterogeneous_targets_the_global_mean():
    env = MultiAgentBernoulliMAB([0.2, 0.9, 0.5], n_users=4)
    assert not env.heterogeneous and env.means.shape == (4, 3) and env.best_arm == 1
    np.testing.assert_allclose(env.gaps, [0.7, 0.0, 0.4])
    het = MultiAgentBernoulliMAB([[0.9, 0.1], [0.0, 0.6]])
    assert het.heterogeneous
    np.testing.assert_allclose(het.global_means, [0.45, 0.35])
    assert het.best_arm == 0  # agent 1's local best (arm 1) is globally worse


def test_regret_is_the_sum_of_global_gaps_and_reward_uses_local_means():
    het = MultiAgentBernoulliMAB([[0.9, 0.1], [0.0, 0.6]])
    arms = np.array([[0, 0], [1, 1], [0, 1]])
    np.testing.assert_allclose(het.regret(arms), [0.0, 0.2, 0.1])
    np.testing.assert_allclose(het.expected_reward(arms), [0.9, 0.7, 1.5])


@given(st.integers(1, 5), st.integers(2, 6), st.integers(0, 50), st.integers(0, 2**32 - 1))
def test_draw_sums_are_binomial_counts_in_range_and_seeded(m, k, pulls, seed):
    env = MultiAgentBernoulliMAB.uniform(m, k, np.random.default_rng(seed), heterogeneous=True)
    arms = np.arange(k)[::2]
    sums = env.draw_sums(arms, pulls, np.random.default_rng(seed))
    assert sums.shape == (m, arms.size) and sums.min() >= 0 and sums.max() <= pulls
    np.testing.assert_array_equal(sums, env.draw_sums(arms, pulls, np.random.default_rng(seed)))
    assert np.all(env.regret(np.full((1, m), env.best_arm)) == 0.0)
    assert np.all(env.regret(np.zeros((1, m), dtype=int)) >= 0.0)


def test_sums_concentrate_on_the_means():
    env = MultiAgentBernoulliMAB([0.1, 0.8], n_users=2)
    sums = env.draw_sums(np.array([0, 1]), 20000, np.random.default_rng(0))
    np.testing.assert_allclose(sums / 20000, env.means, atol=0.02)


def test_pull_returns_bernoulli_rewards():
    env = MultiAgentBernoulliMAB([0.0, 1.0], n_users=3)
    rewards = env.pull(np.array([0, 1, 1]), np.random.default_rng(0))
    assert rewards.tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize(
    "means, n_users, error, match",
    [
        ([0.2, 1.5], 2, RewardError,
         r"means must be Bernoulli reward means in \[0, 1\]; got .*1.5"),
        ([[-0.1, 0.5]], None, RewardError, r"in \[0, 1\]; got values \[-0.1\]"),
        ([0.2, np.nan], 2, RewardError, "nan"),
        ([0.2, 0.4], None, InvalidParameterError, "n_users must be an integer >= 1 when"),
        ([0.2, 0.4], 0, InvalidParameterError, "n_users must be an integer >= 1; got 0"),
        ([[0.2, 0.4]], 3, InvalidParameterError, r"n_users must be None or 1"),
        ([0.5], 2, ShapeError, ">= 2 arms"),
        (np.zeros((2, 2, 2)), None, ShapeError, r"means must be \(K,\) or \(M, K\)"),
    ],
)
def test_bad_environments_are_refused(means, n_users, error, match):
    with pytest.raises(error, match=match):
        MultiAgentBernoulliMAB(means, n_users=n_users)


def test_bad_arms_are_refused():
    env = MultiAgentBernoulliMAB([0.2, 0.4], n_users=2)
    with pytest.raises(InvalidParameterError, match=r"arms must be arm indices in \[0, 2\)"):
        env.draw_sums(np.array([2]), 3, np.random.default_rng(0))
    with pytest.raises(ShapeError, match=r"shape \(\.\.\., 2\)"):
        env.regret(np.array([0, 1, 1]))
    with pytest.raises(InvalidParameterError, match="pulls must be an integer >= 0"):
        env.draw_sums(np.array([0]), -1, np.random.default_rng(0))


def test_round_by_round_protocol():
    from privbandit.envs.base import Environment, Round
    from privbandit.errors import HorizonError

    env = MultiAgentBernoulliMAB([[0.9, 0.1], [0.0, 0.6]])
    assert isinstance(env, Environment)
    with pytest.raises(HorizonError, match="reset"):
        env.observe(0)
    env.reset(np.random.default_rng(4))
    assert env.observe(0) == Round(0, None, None)
    out = env.act(0, np.array([0, 1]))
    assert out.regret == pytest.approx(0.1) and out.expected == pytest.approx(1.5)
    assert out.feedback.shape == (2,) and out.reward == out.feedback.sum()
    with pytest.raises(HorizonError, match="expected t=1; got t=2"):
        env.observe(2)
    with pytest.raises(HorizonError, match="act on the round just observed"):
        env.act(1, np.array([0, 1]))
