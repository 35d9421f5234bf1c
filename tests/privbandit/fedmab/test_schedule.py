"""Epoch sizes S(r) and radii C(r): the specification's formulas, checked independently."""
import math
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.fedmab import EpochSchedule, confidence_radius
from privbandit.runtime import play_algorithm


def radius_by_hand(s, r, n, eps, k, t):
    lr = math.log(2 * 4 * k * r * r * t)  # ln(2 / beta_r), beta_r = 1/(4 K r^2 T)
    sampling = math.sqrt(lr / (2 * n * s))
    b = 1.0 / (eps * s * n)
    noise = math.sqrt(8 * lr) * b * (math.sqrt(n * r) + math.sqrt(lr))
    return sampling + noise


params = dict(
    eps=st.floats(0.05, 5.0), k=st.integers(2, 200), t=st.integers(100, 10**7),
    n=st.integers(1, 100),
)


@given(**params)
def test_doubling_schedule_is_the_smallest_size_meeting_two_to_the_minus_r(eps, k, t, n):
    sched = EpochSchedule.build(eps, k, t, n)
    assert all(b > a for a, b in pairwise(sched.sizes))
    assert sched.sizes[-1] >= t and all(s < t for s in sched.sizes[:-1])
    for r, (size, radius) in enumerate(zip(sched.sizes, sched.radii, strict=True), start=1):
        assert radius == pytest.approx(radius_by_hand(size, r, n, eps, k, t), rel=1e-12)
        assert sched.targets[r - 1] == 2.0**-r
        assert radius <= 2.0**-r * (1 + 1e-12)
        floor = sched.sizes[r - 2] + 1 if r > 1 else 1
        if size > floor:  # not forced up by monotonicity: size - 1 misses the target
            assert confidence_radius(size - 1, r, n, eps, k, t) > 2.0**-r


@given(**params, rounds=st.integers(1, 8))
def test_r_round_targets_fall_geometrically_to_the_full_horizon_radius(eps, k, t, n, rounds):
    sched = EpochSchedule.build(eps, k, t, n, rounds)
    assert len(sched) <= rounds
    c_min = radius_by_hand(max(1, t // k), rounds, n, eps, k, t)
    for r, target in enumerate(sched.targets, start=1):
        expected = 0.5 if rounds == 1 else 0.5 * (2 * c_min) ** ((r - 1) / (rounds - 1))
        assert target == pytest.approx(expected, rel=1e-12)
        assert sched.radii[r - 1] <= target * (1 + 1e-12) or sched.sizes[r - 1] == (
            sched.sizes[r - 2] + 1 if r > 1 else 1)


@given(st.floats(0.05, 2.0), st.integers(1, 50))
def test_more_privacy_or_fewer_uploaders_means_longer_epochs(eps, n):
    strict = EpochSchedule.build(eps, 100, 10**6, n)
    loose = EpochSchedule.build(2 * eps, 100, 10**6, n)
    more = EpochSchedule.build(eps, 100, 10**6, n + 1)
    assert strict.sizes[0] >= loose.sizes[0] and strict.sizes[0] >= more.sizes[0]


@pytest.mark.parametrize(
    "args, match",
    [
        ((0.0, 10, 100, 5), "epsilon must be a finite number > 0; got 0.0"),
        ((-1.0, 10, 100, 5), "epsilon must be a finite number > 0; got -1.0"),
        ((1.0, 1, 100, 5), "n_arms must be an integer >= 2; got 1"),
        ((1.0, 10, 0, 5), "horizon must be an integer >= 1; got 0"),
        ((1.0, 10, 100, 0), "n_uploaders must be an integer >= 1; got 0"),
        ((1.0, 10, 100, 5, 0), r"rounds must be None \(no limit\) or an integer R >= 1; got 0"),
    ],
)
def test_bad_schedule_parameters(args, match):
    with pytest.raises(InvalidParameterError, match=match):
        EpochSchedule.build(*args)


def test_rounds_bound_is_the_papers_condition_and_a_smaller_r_warns():
    import warnings

    import numpy as np

    from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
    from privbandit.fedmab import CDPMAB, RoundsBelowBoundWarning, rounds_bound

    assert rounds_bound(10**6, 50) == pytest.approx(2 * math.log(10**6) / math.log(50))
    assert rounds_bound(10**6, 1) is None  # one agent: no federation to compare
    env = MultiAgentBernoulliMAB(np.linspace(0.1, 0.9, 4), n_users=8)
    with pytest.warns(RoundsBelowBoundWarning, match=r"R >= 2 ln T / ln M = 9\.53.*rounds >= 10"):
        play_algorithm(CDPMAB(1.0, 20_000, rounds=3), env, np.random.default_rng(0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RoundsBelowBoundWarning)
        play_algorithm(CDPMAB(1.0, 20_000, rounds=10), env, np.random.default_rng(0))
        play_algorithm(CDPMAB(1.0, 20_000), env, np.random.default_rng(0))  # no limit
