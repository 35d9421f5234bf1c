"""Laplace means: scale and event, variance 2 scale^2, bounds handling, bad input."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting import BudgetExceededError, LaplaceEvent, Ledger, PureDPAccountant
from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms.errors import OutOfBoundsError, ShapeError
from privbandit.mechanisms.laplace import LaplaceMeans, mean_float_slack, pairwise_mean
from privbandit.mechanisms.samplers import EXACT, FAST


def assert_laplace_moments(noise, scale, z=7.0):
    noise = np.asarray(noise).ravel()
    var, n = 2 * scale**2, noise.size
    assert abs(noise.mean()) <= z * math.sqrt(var / n)
    assert abs(noise.var() - var) <= z * var * math.sqrt(5 / n)  # Laplace kurtosis 6


@given(
    st.floats(0.01, 20.0),
    st.floats(-5.0, 5.0),
    st.floats(0.1, 10.0),
    st.integers(1, 10**6),
    st.sampled_from([FAST, EXACT]),
)
def test_scale_is_sensitivity_over_epsilon_and_event_round_trips(epsilon, lo, width, n, sampler):
    hi = lo + width
    mech = LaplaceMeans(epsilon, lo, hi, n, sampler=sampler)
    declared = (hi - lo) / n
    assert mech.l1_sensitivity == declared
    sens = mech.event.l1_sensitivity
    slack = mean_float_slack(lo, hi, n) + sampler.l1_slack(1)
    assert declared < sens <= (declared + slack) * (1 + 1e-15)
    assert mech.scale == pytest.approx(sens / epsilon, rel=1e-15)
    assert mech.event == LaplaceEvent(mech.scale, sens)
    assert PureDPAccountant().compose(mech.event).epsilon(0.0) == pytest.approx(epsilon, rel=1e-12)


def test_ledger_charges_exactly_the_budget():
    mech = LaplaceMeans(0.5, 0.0, 1.0, 100, sampler=FAST)
    ledger = Ledger("agent", 1.0)
    ledger.charge(mech.event, count=2)
    with pytest.raises(BudgetExceededError):
        ledger.charge(mech.event)


@given(st.integers(0, 2**32 - 1), st.floats(0.1, 5.0), st.integers(1, 50))
def test_noise_mean_zero_variance_two_scale_squared(seed, epsilon, n):
    rng = np.random.default_rng(seed)
    mech = LaplaceMeans(epsilon, 0.0, 1.0, n, sampler=FAST)
    rewards = rng.uniform(0.0, 1.0, size=(400, 50, n))
    noisy = mech.release(rewards, rng)
    assert noisy.shape == (400, 50)
    assert_laplace_moments(noisy - rewards.mean(axis=-1), mech.scale)


def test_exact_sampler_variance_and_grid():
    rng = np.random.default_rng(0)
    mech = LaplaceMeans(1.0, 0.0, 1.0, 4, sampler=EXACT)
    assert mech.sampler is EXACT
    means = np.full(4000, 0.5)
    noisy = mech.release_means(means, rng)
    assert_laplace_moments(noisy - 0.5, mech.scale)
    scaled = np.ldexp(noisy, 40)
    assert np.array_equal(scaled, np.rint(scaled))  # OpenDP's 2**-40 grid


def test_fast_releases_are_reproducible():
    mech = LaplaceMeans(1.0, 0.0, 1.0, 3, sampler=FAST)
    rewards = np.random.default_rng(1).uniform(size=(5, 3))
    a = mech.release(rewards, np.random.default_rng(9))
    b = mech.release(rewards, np.random.default_rng(9))
    assert np.array_equal(a, b)


@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.floats(-100.0, 100.0))
def test_pairwise_mean_is_accurate_within_its_bound(seed, n, lo):
    rng = np.random.default_rng(seed)
    hi = lo + 7.0
    x = rng.uniform(lo, hi, size=(3, n))
    exact = np.array([math.fsum(row) / n for row in x])
    assert np.all(np.abs(pairwise_mean(x) - exact) <= mean_float_slack(lo, hi, n) / 2)


def test_clip_mode_clips_rewards_and_means_into_bounds():
    mech = LaplaceMeans(1.0, 0.0, 1.0, 2, sampler=FAST)
    rng = np.random.default_rng(0)
    tiny = LaplaceMeans(1e9, 0.0, 1.0, 2, sampler=FAST)  # negligible noise shows the clipping
    np.testing.assert_allclose(tiny.release([[2.0, 0.0], [-1.0, 0.5]], rng), [0.5, 0.25],
                               atol=1e-6)
    np.testing.assert_allclose(tiny.release_means([1.5, -3.0], rng), [1.0, 0.0], atol=1e-6)
    assert mech.release([[2.0, 0.0]], rng).shape == (1,)


# -- bad input ---------------------------------------------------------------------------------

BAD_BUILD = [
    ((0.0, 0.0, 1.0, 10), {}, "epsilon must be a finite number > 0"),
    ((1.0, 1.0, 1.0, 10), {}, r"\(lo, hi\) must be finite bounds with lo < hi; got \(1.0, 1.0\)"),
    ((1.0, 2.0, 1.0, 10), {}, "lo < hi"),
    ((1.0, float("nan"), 1.0, 10), {}, "lo must be a finite real number"),
    ((1.0, 0.0, float("inf"), 10), {}, "hi must be a finite real number"),
    ((1.0, 0.0, 1.0, 0), {}, "n must be an integer >= 1"),
    ((1.0, 0.0, 1.0, 2.5), {}, "n must be an integer >= 1"),
    ((1.0, 0.0, 1.0, 10), {"out_of_bounds": "ignore"}, "out_of_bounds must be one of"),
    ((1.0, 0.0, 1.0, 10), {"sampler": np.random.default_rng()}, "sampler must be a Sampler"),
]


@pytest.mark.parametrize("args, kw, message", BAD_BUILD)
def test_bad_construction(args, kw, message):
    with pytest.raises(InvalidParameterError, match=message):
        LaplaceMeans(*args, **kw)


MECH = LaplaceMeans(1.0, 0.0, 1.0, 3, out_of_bounds="reject", sampler=FAST)
RNG = np.random.default_rng(0)

BAD_RELEASE = [
    (lambda: MECH.release(np.ones((2, 4)), RNG), ShapeError, r"shape \(\.\.\., K, n\) with n = 3"),
    (lambda: MECH.release(np.ones(3), RNG), ShapeError, "shape"),
    (lambda: MECH.release([[0.1, np.nan, 0.2]], RNG), InvalidParameterError, "NaN/inf"),
    (lambda: MECH.release([[0.1, np.inf, 0.2]], RNG), InvalidParameterError, "finite entries"),
    (lambda: MECH.release(np.ones((2, 3), bool), RNG), ShapeError, "dtype bool"),
    (lambda: MECH.release([["a", "b", "c"]], RNG), ShapeError, "real numbers"),
    (lambda: MECH.release([[0.1, 1.5, 0.2]], RNG), OutOfBoundsError,
     r"rewards must lie in \[lo, hi\] = \[0, 1\] \(out_of_bounds='reject'\); got 1 entries "
     r"outside, e.g. 1.5"),
    (lambda: MECH.release_means([0.5, -0.1], RNG), OutOfBoundsError, "means must lie in"),
    (lambda: MECH.release_means(0.5, RNG), ShapeError, r"means must have shape \(\.\.\., K\)"),
    (lambda: MECH.release_means([0.5], None), InvalidParameterError, "rng must be"),
]


@pytest.mark.parametrize("call, error, message", BAD_RELEASE)
def test_bad_release(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_mechanism_is_immutable():
    with pytest.raises(AttributeError):
        MECH.scale = 0.0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        MECH._epsilon = 5.0  # type: ignore[misc]
