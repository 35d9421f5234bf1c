"""The billboard: public coins, released-only actions, and the refusal of other records."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.errors import ConfigError
from privbandit.mechanisms import FAST
from privbandit.private import (
    Billboard,
    BillboardError,
    NoisyRidge,
    PartyStreams,
    ReleasePlan,
)


def _billboard(rate=0.3, merged_rate=None, units=4, dim=3):
    streams = PartyStreams([np.arange(units)], dim,
                           ReleasePlan(1.0, 1e-5, 100, "mf", "fixed", 10, FAST), record_bound=2.0)
    ridge = NoisyRidge(dim, 1.0, 0.5, 1.0, 0.05, 1e-4)
    return Billboard(streams, ridge, rate, merged_rate)


@pytest.mark.parametrize(("rate", "merged"), [(0.0, None), (1.5, None), (0.5, 0.0), ("a", None)])
def test_bad_rates_are_refused_naming_the_value(rate, merged):
    with pytest.raises(ConfigError, match="rate"):
        _billboard(rate, merged)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.05, 0.95))
def test_coins_are_public_and_the_shared_share_follows_the_rate(seed, rate):
    a, b = _billboard(rate), _billboard(rate)
    items = np.eye(3)
    ra, rb = np.random.default_rng(seed), np.random.default_rng(seed)
    got_a = [a.decide(t, 0, items, np.arange(4), ra) is not None for t in range(2000)]
    got_b = [b.decide(t, 0, items, np.arange(4), rb) is not None for t in range(2000)]
    assert got_a == got_b  # the same first generator, the same coins, whatever the data
    assert abs(np.mean(got_a) - rate) < 5 * np.sqrt(rate * (1 - rate) / 2000)


def test_merged_units_share_at_their_own_rate():
    board = _billboard(0.05, 0.9)
    rng = np.random.default_rng(0)
    items = np.eye(3)
    merged = np.mean([board.decide(t, 0, items, np.arange(4), rng, merged=True) is not None
                      for t in range(1000)])
    assert merged > 0.8


def test_only_the_chosen_action_of_that_round_is_recorded():
    board = _billboard(1.0)
    rng = np.random.default_rng(1)
    items = np.eye(3)
    action = board.decide(0, 2, items, np.arange(4), rng)
    stat = np.outer(np.append(items[action], 1.0), np.append(items[action], 1.0))
    with pytest.raises(BillboardError):
        board.record(0, 2, (action + 1) % 3, stat)  # another action
    with pytest.raises(BillboardError):
        board.record(1, 2, action, stat)  # another round
    board.record(0, 2, action, stat)
    assert board.streams._pending_counts[2] == 1
    with pytest.raises(BillboardError):
        board.record(0, 2, action, stat)  # a ticket is used once


def test_a_ranking_is_chosen_and_recorded_as_a_list():
    board = _billboard(1.0)
    ranking = board.decide(0, 1, np.eye(3), np.arange(4), np.random.default_rng(2),
                           rank=lambda s: np.argsort(-s, kind="stable")[:2])
    assert len(ranking) == 2
    board.record(0, 1, np.asarray(ranking), np.eye(4))


def test_a_unit_stops_sharing_at_its_cap_unless_merged():
    board = Billboard(_billboard(1.0).streams, _billboard().ridge, 1.0, cap=3)
    rng, items = np.random.default_rng(3), np.eye(3)
    for t in range(3):
        action = board.decide(t, 0, items, np.arange(4), rng)
        board.record(t, 0, action, np.eye(4))
    assert board.decide(3, 0, items, np.arange(4), rng) is None  # capped
    assert board.decide(4, 0, items, np.arange(4), rng, merged=True) is not None
    with pytest.raises(ConfigError, match="cap"):
        Billboard(board.streams, board.ridge, 0.5, cap=0)
