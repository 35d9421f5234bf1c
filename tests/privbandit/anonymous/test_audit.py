"""The differencing audit of Algorithm 1's own elicitation."""
import numpy as np
import pytest

from privbandit.accounting.errors import InvalidParameterError
from privbandit.anonymous import AnonymousBaSE, ElicitationObserver, algorithm_assignment
from privbandit.anonymous.audit import RELATION
from privbandit.anonymous.errors import AssumptionError
from privbandit.audits import CONSISTENT, Claim, NeighbouringPair, ThresholdTester, run_audit
from privbandit.envs.anonymous import AnonymousBanditEnv, clustered_means
from privbandit.mechanisms.anonymous import split_groups

N, K, C, U = 24, 3, 2, 6


@pytest.fixture(scope="module")
def setting():
    rng = np.random.default_rng(0)
    means = clustered_means(N, K, U, rng)
    assignment = algorithm_assignment(AnonymousBaSE(N, K, C, U, 3000), rng)
    return means, assignment


def test_observer_replays_the_algorithms_own_group(setting):
    means, assignment = setting
    obs = ElicitationObserver(means, assignment, C, canary=0, view="transcript")
    groups, _ = split_groups(assignment, C)
    assert any(set(obs.group) == set(g[g >= 0]) for g in groups)
    out = obs(1, np.random.default_rng(1), 50)
    assert out.shape == (50, 2 * C + 2)
    est = ElicitationObserver(means, assignment, C, canary=0)(1, np.random.default_rng(1), 50)
    k = int(np.flatnonzero(obs.group == 0)[0]) + 1
    np.testing.assert_allclose(est, out[:, 0] - out[:, k])


def test_differencing_beats_chance_without_noise(setting):
    means, assignment = setting
    obs = ElicitationObserver(means, assignment, C, canary=0)
    rng = np.random.default_rng(2)
    d0, d1 = obs(0, rng, 4000), obs(1, rng, 4000)
    accuracy = 0.5 * (1 + np.mean(d1 > 0.5) - np.mean(d0 > 0.5))
    assert accuracy > 0.6
    bound = ThresholdTester().bound(d0, d1, delta=0.0, confidence=0.95)
    assert bound.epsilon > 0.5


def test_laplace_option_is_consistent_with_its_claim(setting):
    means, assignment = setting
    env = AnonymousBanditEnv(means, C, laplace_epsilon=0.5)
    obs = ElicitationObserver(means, assignment, C, canary=0, laplace_epsilon=0.5)
    report = run_audit(
        obs, NeighbouringPair(0, 1, RELATION), ThresholdTester(),
        Claim.from_event(env.aggregator.event), samples=4000, rng=np.random.default_rng(3),
    )
    assert report.verdict == CONSISTENT
    assert report.claimed_epsilon == pytest.approx(0.5)


def test_uncovered_canary_and_bad_dataset_are_refused(setting):
    means, assignment = setting
    lonely = np.zeros(N, dtype=int)
    lonely[0] = 1  # user 0 alone on arm 1: no group
    with pytest.raises(AssumptionError, match="canary must be covered"):
        ElicitationObserver(means, lonely, C, canary=0)
    obs = ElicitationObserver(means, assignment, C, canary=0)
    with pytest.raises(InvalidParameterError, match="dataset must be the canary's round-0"):
        obs(0.5, np.random.default_rng(0), 10)
