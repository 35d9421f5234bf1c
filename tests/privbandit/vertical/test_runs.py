"""Runs of VFUCB/VFTS and baselines: results, communication counts, privacy statement."""
from __future__ import annotations

import json

import numpy as np
import pytest

from privbandit.accounting.errors import NotDifferentiallyPrivateError
from privbandit.accounting.ledger import Ledger
from privbandit.envs.vertical import VerticalSplit
from privbandit.errors import ConfigError
from privbandit.mechanisms.masks import MASK_EVENT
from privbandit.policies import LinTS, LinUCB
from privbandit.vertical.ties import TieTolerant

from .runs import run_partial_local, run_vertical

WIDTHS, K, D, T = (4, 3, 3), 8, 10, 30


@pytest.mark.parametrize("seal", [False, True])
def test_bytes_and_messages_per_party_per_round(split_world, seal):
    result = run_vertical(LinUCB(D, beta=0.5), split_world, T, 1, seal_traffic=seal)
    comm = result.comm
    assert comm["rounds"] == T
    hellos = int(seal)  # sealed: each passive party opens its session channel once
    assert comm["messages_by_party"] == {
        "generator": 3, "active": 2 * T, "passive-1": T + hellos, "passive-2": T + hellos,
    }
    assert comm["bytes_by_party"]["active"] == 2 * T * 24
    per_round = {p: comm["bytes_by_party"][p] / T for p in ("passive-1", "passive-2")}
    plain = 24 + 8 * K * D
    for p, nbytes in per_round.items():
        overhead = nbytes - plain
        # sealed: a fixed AEAD header + tag per message (ids, session, counter, keys)
        assert overhead == 0 if not seal else 0 < overhead < 200, (p, overhead)
    # mask delivery: each party's d x d_j block of float64, plus sealing headers
    mask_bytes = comm["bytes_by_party"]["generator"]
    assert 8 * D * D < mask_bytes < 8 * D * D + 3 * 200
    assert comm["bytes"] == sum(comm["bytes_by_party"].values())
    assert comm["messages_by_direction"] == {"upload": 2 * (T + hellos),
                                             "download": 3 + 2 * T, "peer": 0, "release": 0}


def test_same_seed_same_run_bit_for_bit(world):
    runs = [
        run_vertical(LinTS(D, v=0.2), VerticalSplit(world, WIDTHS), T, 9, seal_traffic=False)
        for _ in range(2)
    ]
    np.testing.assert_array_equal(runs[0].regret, runs[1].regret)
    np.testing.assert_array_equal(runs[0].reward, runs[1].reward)
    other = run_vertical(LinTS(D, v=0.2), VerticalSplit(world, WIDTHS), T, 10, seal_traffic=False)
    assert not np.array_equal(runs[0].reward, other.reward)


def test_the_result_states_plainly_that_masks_are_not_dp(split_world):
    ledger = Ledger("passive parties' features", epsilon=1.0)
    result = run_vertical(TieTolerant(LinUCB(D, beta=0.5)), split_world, T, 2, ledger=ledger)
    assert result.algorithm == "vfucb"
    assert result.privacy.relation.value == "masking" and not result.privacy.is_dp
    assert result.privacy.details["event"] == MASK_EVENT.reason
    assert result.ledgers[0]["not_dp_releases"] == [MASK_EVENT.reason]
    assert result.ledgers[0]["epsilon_spent"] == 0.0
    assert result.params["widths"] == list(WIDTHS) and result.params["tie_tolerance"] == 1e-9
    json.dumps(result.to_dict(max_points=10))
    # and no DP ledger can be charged with it
    with pytest.raises(NotDifferentiallyPrivateError):
        ledger.charge(MASK_EVENT)


def test_vfts_is_named_and_timed(split_world):
    result = run_vertical(LinTS(D, v=0.1), split_world, T, 3)
    assert result.algorithm == "vfts"
    assert {"setup", "passive", "active", "simulate"} <= set(result.timings)
    assert result.timings["passive"] > 0 and result.timings["active"] > 0


def test_partial_local_uses_only_the_active_columns(world):
    result = run_partial_local(LinUCB(4, beta=0.5), world, WIDTHS, T, 4)
    assert result.algorithm == "partial-linucb"
    assert result.params["active_share"] == 0.4 and result.params["dim"] == 4
    assert result.environment["view"] == "active party only"
    with pytest.raises(ConfigError, match="linear Policy of the active width d_0=4"):
        run_partial_local(LinUCB(10, beta=0.5), world, WIDTHS, T, 4)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"env": "world"}, "env must be a VerticalSplit"),
        ({"horizon": 0}, "horizon must be an integer >= 1; got 0"),
        ({"seed": -1}, "seed must be an integer >= 0 or a numpy.random.SeedSequence; got -1"),
        ({"ledger": "ledger"}, "ledger must be None or a Ledger; got 'ledger'"),
    ],
)
def test_bad_run_arguments_are_refused(split_world, kwargs, match):
    args = {"policy": LinUCB(D), "env": split_world, "horizon": T, "seed": 1, **kwargs}
    with pytest.raises(ConfigError, match=match):
        run_vertical(**args)


def test_tie_tolerant_takes_the_lowest_near_tie():
    class Fixed(LinUCB):
        def scores(self, items, user):
            return np.array([0.3, 1.0 - 1e-13, 1.0, 1.0 - 1e-6])

    items = np.eye(4)
    assert TieTolerant(Fixed(4)).select(items, 0, 0, np.random.default_rng(0)) == 1
    assert TieTolerant(Fixed(4), tolerance=1e-14).select(items, 0, 0, None) == 2
    with pytest.raises(ConfigError, match="policy must be a Policy with a scores"):
        TieTolerant(LinTS(4))


def test_study_entries_run_the_protocol_and_the_baselines():
    from privbandit.registry import get_algorithm
    from privbandit.vertical import study  # noqa: F401  (registers the entries)

    config = {"horizon": 20, "environment": {"dim": 10, "items": 5, "parties": 2}}
    vf = get_algorithm("vfucb").run({**config, "seal_traffic": False}, 3)
    part = get_algorithm("partial-lints").run({**config, "active_share": 0.4}, 3)
    assert vf.algorithm == "vfucb" and vf.params["widths"] == [5, 5]
    assert part.algorithm == "partial-lints" and part.params["widths"] == [4, 6]
    with pytest.raises(ConfigError, match=r"unknown key 'colour' in \[environment\]; allowed: d"):
        get_algorithm("vfts").run({"horizon": 5, "environment": {"colour": 1}}, 3)
    with pytest.raises(ConfigError, match=r"unknown key 'alpha' in \[algorithm.params\] of vfts"):
        get_algorithm("vfts").run({"horizon": 5, "alpha": 1}, 3)
