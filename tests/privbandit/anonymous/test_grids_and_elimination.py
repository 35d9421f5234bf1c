"""BaSE grids and the lockstep elimination rule."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.anonymous.batched_elimination import BatchedElimination
from privbandit.anonymous.errors import HorizonTooShortError
from privbandit.anonymous.grids import (
    batch_lengths,
    default_batches,
    geometric_grid,
    make_grid,
    minimax_grid,
)
from privbandit.errors import ConfigError, ShapeError


def test_minimax_grid_matches_formula():
    t, m = 10_000, 4
    a = t ** (1 / (2 - 2 ** (1 - m)))
    expected = [math.floor(a ** (2 - 2 ** (1 - j))) for j in range(1, m)] + [t]
    assert minimax_grid(t, m).tolist() == expected


def test_geometric_grid_matches_formula():
    t, m = 10_000, 4
    assert geometric_grid(t, m).tolist() == [10, 100, 1000, 10_000]


@given(st.integers(100, 10**7), st.integers(1, 6), st.sampled_from(["minimax", "geometric"]))
def test_grids_increase_and_end_at_horizon(horizon, batches, kind):
    try:
        grid = make_grid(kind, horizon, batches)
    except HorizonTooShortError:
        return
    assert grid.size == batches and grid[-1] == horizon
    assert (batch_lengths(grid) > 0).all() and batch_lengths(grid).sum() == horizon


def test_short_horizon_names_the_batches():
    with pytest.raises(HorizonTooShortError, match="too short for 5 batches"):
        geometric_grid(3, 5)


def test_unknown_grid_is_refused():
    with pytest.raises(ConfigError, match="grid must be one of"):
        make_grid("linear", 100, 3)


@pytest.mark.parametrize("horizon, batches", [(16, 2), (10**5, 5), (10**6, 5), (2**32, 5)])
def test_default_batches_is_ceil_log2_log2(horizon, batches):
    assert default_batches(horizon) == batches


def _base(**kw):
    args = dict(instances=2, arms=3, horizon=1000, batches=3, gamma=0.5, variance=1.0)
    args.update(kw)
    return BatchedElimination(**args)


def test_elimination_threshold_is_exact():
    base = _base()
    tau = 100
    width = math.sqrt(0.5 * math.log(1000 * 3) / tau)
    means = np.array([[0.9, 0.9 - width * 1.001, 0.9 - width * 0.999]] * 2)
    base.record(means * tau, np.full((2, 3), tau))
    active = base.end_batch()
    assert active.tolist() == [[True, False, True]] * 2


def test_leader_never_eliminated_and_commit_picks_best():
    base = _base(gamma=1e-6)
    base.record(np.array([[1.0, 5.0, 3.0], [9.0, 1.0, 1.0]]), np.ones((2, 3)))
    active = base.end_batch()
    assert active[0, 1] and active[1, 0]
    assert base.commit().tolist() == [1, 0]


def test_last_batch_does_not_eliminate():
    base = _base(batches=2, gamma=1e-6)
    base.end_batch()
    assert not base.exploring
    base.record(np.array([[1.0, 5.0, 3.0]] * 2), np.ones((2, 3)))
    assert base.end_batch().all()


def test_demand_follows_the_grid():
    base = _base()
    lengths = []
    while base.exploring:
        lengths.append(base.demand())
        base.end_batch()
    assert lengths == batch_lengths(base.grid)[:-1].tolist()


def test_record_shape_is_checked():
    with pytest.raises(ShapeError, match=r"shape \(2, 3\)"):
        _base().record(np.zeros((3, 2)), np.zeros((3, 2)))
