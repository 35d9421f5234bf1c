"""The one run loop: steps of one or many rounds, observers, and the result it builds."""
from __future__ import annotations

import numpy as np
import pytest

from privbandit.accounting import LaplaceEvent, Ledger
from privbandit.envs import seed000_environment
from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.errors import BanditError, ConfigError
from privbandit.policies import CLUB, LinUCB
from privbandit.protocol import Protocol, StepProtocol
from privbandit.runtime import Observer, play, run


def small_env(seed: int = 0):
    return seed000_environment(np.random.default_rng(seed), n_users=6, n_clusters=2, dim=4,
                               n_items=5)


class Blocks(StepProtocol):
    """Steps of 7 rounds (a run of period 2 repeated, then one odd round); one ledger
    charged once per step; labels for the detection error from the second step on."""

    name = "blocks"

    def start(self, env, horizon, rng):
        super().start(env, horizon, rng)
        self.steps = 0
        self.ledger = Ledger("party 0", 100.0)

    def step(self, env, t, rng):
        self.steps += 1
        self.ledger.charge(LaplaceEvent(1.0, 1.0))
        return [(np.array([1.0, 2.0]), np.array([0.5, 0.25]), 3), (np.array([9.0]),
                                                                     np.array([0.0]), 1)]

    def ledgers(self):
        return [self.ledger]

    def cluster_labels(self):
        return None if self.steps < 2 else np.zeros(2, dtype=np.int64)


class Stops(Observer):
    """Asks for control back every 5 rounds and records the round counts it saw."""

    def start(self, run):
        self.seen = []

    def next_stop(self, t):
        return (t // 5 + 1) * 5

    def after_step(self, run, t):
        self.seen.append(t)


class TwoUsers(MultiAgentBernoulliMAB):
    def true_clusters(self):
        return np.array([0, 1])


def test_steps_spanning_rounds_are_split_where_observers_ask():
    env = TwoUsers([[0.2, 0.9], [0.9, 0.2]])
    stops = Stops()
    result = play(Blocks(), env, 16, rng=np.random.default_rng(0), observers=[stops])
    one_step = [1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 9.0]
    np.testing.assert_array_equal(result.regret, (one_step * 3)[:16])
    assert stops.seen == [5, 7, 10, 14, 15, 16]  # 5-round stops inside 7-round steps
    # measured at the end of every natural step and at the last round, once there are
    # labels: the extra stops add no measurement
    np.testing.assert_array_equal(result.cluster_error_rounds, [13, 15])
    assert result.cluster_error.tolist() == [1.0, 1.0]  # one detected cluster for two
    # three steps, three charges: the trace dates each at the observation after it
    assert result.ledger_trace == {"party 0": [[0, 0.0], [6, 1.0], [13, 2.0], [15, 3.0]]}
    assert result.ledgers[0]["epsilon_spent"] == 3.0
    assert result.privacy.relation.value == "none" and result.comm == {}


def test_policy_checkpoints_and_trace_are_unchanged_by_extra_stops():
    plain = run(CLUB(4, 6), small_env(), 300, 3, cluster_every=60)
    stopped = run(CLUB(4, 6), small_env(), 300, 3, cluster_every=60, observers=[Stops()])
    np.testing.assert_array_equal(plain.regret, stopped.regret)
    np.testing.assert_array_equal(plain.cluster_error_rounds, [59, 119, 179, 239, 299])
    np.testing.assert_array_equal(plain.cluster_error, stopped.cluster_error)


class Lazy(Protocol):
    def advance(self, env, t, regret, reward, rng):
        return 0


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"protocol": object()}, ConfigError, "protocol must be a Protocol"),
    ({"env": object()}, ConfigError, r"env must be an Environment \(envs.base\)"),
    ({"rng": 3}, ConfigError, "rng must be a numpy.random.Generator"),
    ({"horizon": 0}, ConfigError, "horizon must be an integer >= 1"),
    ({"protocol": Lazy()}, BanditError, "Lazy.advance must play between 1 and 1 rounds"),
])
def test_bad_runs_are_refused(kwargs, error, match):
    args = {"protocol": LinUCB(4, 6), "env": small_env(), "horizon": 10,
            "rng": np.random.default_rng(0), **kwargs}
    with pytest.raises(error, match=match):
        play(args.pop("protocol"), args.pop("env"), args.pop("horizon"), **args)


def test_progress_is_an_observer(capsys):
    run(LinUCB(4, 6), small_env(), 200, 1, progress=True)
    assert "rounds: 200/200 (100%)" in capsys.readouterr().err


def test_the_function_and_the_package_share_a_name():
    import privbandit
    from privbandit import runtime

    assert privbandit.run is runtime.run


def test_checkpoints_measure_again_only_when_the_labels_change():
    class Counting(type(seed000_environment(np.random.default_rng(0)))):
        calls = 0

        def detection_error(self, labels):
            Counting.calls += 1
            return super().detection_error(labels)

    env = seed000_environment(np.random.default_rng(0))
    env.__class__ = Counting
    result = run(CLUB(10, 20), env, 2000, 0, cluster_every=20)
    fresh = seed000_environment(np.random.default_rng(0))
    truth = [fresh.detection_error(labels) for labels in _labels_at(result.cluster_error_rounds)]
    assert np.array_equal(result.cluster_error, truth)
    assert 0 < Counting.calls < result.cluster_error.size


def _labels_at(rounds):
    """CLUB's detected labels after each of `rounds` in the same run."""
    policy, env = CLUB(10, 20), seed000_environment(np.random.default_rng(0))
    labels = []

    class Recorder(Observer):
        def after_step(self, state, t):
            if t - 1 in wanted:
                labels.append(policy.cluster_labels())

    wanted = set(rounds.tolist())
    run(policy, env, 2000, 0, cluster_every=20, observers=[Recorder()])
    return labels
