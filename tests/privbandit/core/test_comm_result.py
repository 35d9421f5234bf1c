"""CommLog counting and RunResult serialisation."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.comm import (
    DOWNLOAD,
    PEER,
    RELEASE,
    SERVER,
    UPLOAD,
    CommLog,
    party,
    payload_bytes,
)
from privbandit.errors import ConfigError, ShapeError
from privbandit.result import RunResult


def test_comm_log_counts_rounds_messages_and_bytes_by_direction_and_party():
    log = CommLog()
    log.record(UPLOAD, 3, 300, round=5, sender=party("agent", 2))
    log.record(DOWNLOAD, 1, 40, round=5, sender=SERVER)
    log.record(DOWNLOAD, 2, 16, round=9, sender=SERVER)
    log.record(PEER, 4, 8)
    log.record(RELEASE, 1, 8, round=9)
    log.record(UPLOAD, 0, 0, round=11)  # no message: the round does not count
    summary = log.summary()
    assert summary == {
        "rounds": 2,
        "messages": 11,
        "bytes": 372,
        "messages_by_direction": {"upload": 3, "download": 3, "peer": 4, "release": 1},
        "bytes_by_direction": {"upload": 300, "download": 56, "peer": 8, "release": 8},
        "messages_by_party": {"agent 2": 3, "server": 3},
        "bytes_by_party": {"agent 2": 300, "server": 56},
    }
    assert json.loads(json.dumps(summary)) == summary
    assert log.by_direction("upload") == (3, 300) and log.by_party("server") == (3, 56)
    assert log.by_party("agent 7") == (0, 0)


@given(st.lists(st.tuples(st.sampled_from(["upload", "download"]), st.integers(0, 5),
                          st.integers(0, 100), st.none() | st.integers(0, 20))))
def test_comm_log_totals_are_sums(records):
    log = CommLog()
    for direction, messages, nbytes, rnd in records:
        log.record(direction, messages, nbytes, round=rnd)
    assert log.messages == sum(r[1] for r in records)
    assert log.nbytes == sum(r[2] for r in records)
    assert log.rounds == len({r[3] for r in records if r[3] is not None and r[1] > 0})


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"direction": "broadcast"}, r"direction must be one of \('upload'"),
        ({"direction": "upload", "messages": -1}, "messages must be an integer >= 0; got -1"),
        ({"direction": "upload", "messages": True}, "messages must be an integer >= 0; got True"),
        ({"direction": "upload", "nbytes": 1.5}, "nbytes must be an integer >= 0; got 1.5"),
        ({"direction": "upload", "round": -2}, "round must be an integer >= 0; got -2"),
    ],
)
def test_comm_log_bad_input(kwargs, match):
    log = CommLog()
    with pytest.raises(InvalidParameterError, match=match):
        log.record(**kwargs)
    assert log.summary() == CommLog().summary()  # a refused record changes nothing


def test_payload_bytes_and_party_names():
    assert payload_bytes(np.zeros((3, 3)), np.zeros(3), 1.0) == 72 + 24 + 8
    assert party("passive", 0) == "passive 0"
    with pytest.raises(InvalidParameterError, match="index must be an integer >= 0"):
        party("agent", -1)
    with pytest.raises(ConfigError, match="sender must be None or a party's name"):
        CommLog().record(UPLOAD, sender="")


def make_result(horizon: int = 50) -> RunResult:
    rng = np.random.default_rng(0)
    return RunResult(
        algorithm="linucb",
        params={"dim": np.int64(3), "beta": 0.5},
        regret=rng.random(horizon),
        reward=rng.random(horizon),
        comm=CommLog().summary(),
        ledgers=[{"unit": "user-0", "epsilon_spent": np.float64(0.5)}],
        cluster_error=np.array([1.0, 0.5, 0.0]),
        cluster_error_rounds=np.array([9, 19, 49]),
        cluster_mixing=np.array([1.0, 0.25, 0.0]),
        privacy=PrivacyStatement(Relation.RECORD, 0.5, 0.0, "pure-dp", False, unit="user-0"),
        ledger_trace={"user-0": [[0, 0.0], [20, np.float64(0.5)]]},
        timings={"simulate": 0.1},
        seed=7,
        environment={"name": "toy"},
    )


def test_result_round_trips_through_json():
    result = make_result()
    data = json.loads(json.dumps(result.to_dict()))
    back = RunResult.from_dict(data)
    assert np.array_equal(back.regret, result.regret)
    assert np.array_equal(back.reward, result.reward)
    assert np.array_equal(back.cluster_error_rounds, result.cluster_error_rounds)
    assert np.array_equal(back.cluster_mixing, result.cluster_mixing)
    assert back.params == {"dim": 3, "beta": 0.5}
    assert back.privacy == result.privacy and back.ledger_trace == {"user-0": [[0, 0.0], [20, 0.5]]}
    assert back.total_regret == pytest.approx(result.total_regret)
    np.testing.assert_allclose(result.cumulative_regret(), np.cumsum(result.regret))


@given(horizon=st.integers(1, 500), points=st.integers(2, 40))
def test_downsampled_curves_keep_the_last_round(horizon, points):
    result = make_result(horizon).__class__(
        "x", {}, np.ones(horizon), np.zeros(horizon)
    )
    data = result.to_dict(max_points=points)
    assert "regret" not in data
    assert data["rounds"][-1] == horizon - 1
    assert len(data["rounds"]) <= points
    assert data["cumulative_regret"] == [r + 1.0 for r in data["rounds"]]
    with pytest.raises(ConfigError, match="saved with to_dict"):
        RunResult.from_dict(data)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"regret": np.ones((2, 2))}, ShapeError, "regret must be a 1-D array"),
        ({"reward": np.ones(3)}, ShapeError, "regret and reward must have equal length"),
        ({"cluster_error_rounds": None}, ConfigError, "given exactly when cluster_error is given"),
        ({"cluster_error_rounds": np.array([1, 2])}, ShapeError, "must match cluster_error"),
        ({"cluster_mixing": np.array([0.0, 1.0])}, ShapeError, "cluster_mixing must come with "
         r"cluster_error, of its shape \(3,\); got \(2,\)"),
    ],
)
def test_result_bad_input(kwargs, error, match):
    base = {
        "algorithm": "a", "params": {}, "regret": np.ones(4), "reward": np.ones(4),
        "cluster_error": np.array([0.0, 1.0, 0.0]), "cluster_error_rounds": np.array([0, 1, 3]),
    }
    base.update(kwargs)
    with pytest.raises(error, match=match):
        RunResult(**base)
    with pytest.raises(ConfigError, match="max_points must be None or an integer >= 2"):
        make_result().to_dict(max_points=1)


def test_run_records_the_rounds_the_policy_communicated_in():
    from privbandit.envs import LinearUsersEnv, SphereItems
    from privbandit.policies import LinUCB
    from privbandit.runtime import run

    class Chatty(LinUCB):
        """LinUCB that uploads at every 7th round."""

        def __init__(self) -> None:
            super().__init__(3, 1, beta=0.3)
            self.log = CommLog()

        @property
        def comm(self) -> CommLog:
            return self.log

        def update(self, items, user, action, feedback, t):
            super().update(items, user, action, feedback, t)
            if t % 7 == 0:
                self.log.record("upload", 1, 8, round=t)

    env = LinearUsersEnv(np.full((1, 3), 0.5), SphereItems(3, 4))
    result = run(Chatty(), env, 50, 1)
    np.testing.assert_array_equal(result.comm_rounds, np.arange(0, 50, 7))
    assert result.to_dict(max_points=10)["comm_rounds_curve"][-1] == 8
    again = RunResult.from_dict(json.loads(json.dumps(result.to_dict())))
    np.testing.assert_array_equal(again.comm_rounds, result.comm_rounds)
    assert run(LinUCB(3, 1), env, 10, 1).comm_rounds is None
