"""`prefix_variances()` and `error_bound(alpha, ...)` against simulated streams.

A stream of shape (R, d) fed zeros releases R independent copies of a (d,)
stream's noise (every entry gets its own draws), so one stream simulates R
trials: the empirical variance per step must match `prefix_variances()`, and
the share of trials whose error exceeds `error_bound` must stay below alpha
(one step, and every step at once with `uniform=True`).
"""
from __future__ import annotations

import math
import time

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.stats import binom, chi2

from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms import CONTINUAL_MECHANISMS, FAST, continual_release

KINDS = sorted(CONTINUAL_MECHANISMS)
TRIALS = 2000


def _noise(kind: str, dim: int, horizon: int, seed: int) -> tuple[object, np.ndarray]:
    """A (dim,) stream, and TRIALS copies of its noise: the releases (horizon, TRIALS, dim)
    of a (TRIALS, dim) stream of the same structure fed zeros."""
    batch = continual_release(kind, (TRIALS, dim), horizon, sigma=1.0, sampler=FAST)
    rng = np.random.default_rng(seed)
    zero = np.zeros((TRIALS, dim))
    out = np.stack([batch.add(zero, rng) for _ in range(horizon)])
    return continual_release(kind, (dim,), horizon, sigma=1.0), out


def _at_most(failures: int, trials: int, alpha: float) -> bool:
    """failures is no more than a Binomial(trials, alpha) reaches with probability 1e-6."""
    return failures <= binom.ppf(1 - 1e-6, trials, alpha)


@settings(max_examples=12)
@given(kind=st.sampled_from(KINDS), dim=st.integers(1, 4), horizon=st.integers(1, 40),
       seed=st.integers(0, 2**32 - 1))
def test_prefix_variances_match_simulated_streams(kind, dim, horizon, seed):
    mech, out = _noise(kind, dim, horizon, seed)
    variances = mech.prefix_variances()
    np.testing.assert_array_equal(variances, continual_release(
        kind, (TRIALS, dim), horizon, sigma=1.0).prefix_variances())
    assert variances.shape == (horizon,)
    empirical = (out**2).mean(axis=(1, 2))
    n = TRIALS * dim  # chi-square with n degrees: relative sd sqrt(2 / n)
    assert np.all(np.abs(empirical / variances - 1) < 6 * math.sqrt(2 / n))


@settings(max_examples=12)
@given(kind=st.sampled_from(KINDS), dim=st.integers(1, 6), horizon=st.integers(1, 40),
       alpha=st.floats(0.005, 0.5), seed=st.integers(0, 2**32 - 1))
@example(kind="tree", dim=1, horizon=1, alpha=0.01, seed=0)
@example(kind="mf", dim=5, horizon=33, alpha=0.005, seed=1)
def test_error_bounds_hold_on_simulated_streams(kind, dim, horizon, alpha, seed):
    mech, out = _noise(kind, dim, horizon, seed)
    norms = np.sqrt((out**2).sum(axis=2))  # (horizon, TRIALS): each trial's error per step
    step = 1 + seed % horizon
    one = mech.error_bound(alpha, step=step)
    assert one == mech.error_bound(alpha, step=step, norm="l2")
    # valid for the noise model (chi-square), whose variances the simulation checks above
    assert one >= math.sqrt(mech.prefix_variance(step) * chi2.ppf(1 - alpha, dim))
    assert _at_most(int((norms[step - 1] > one).sum()), TRIALS, alpha)
    every = mech.error_bound(alpha, uniform=True)
    assert every >= max(mech.error_bound(alpha, step=t) for t in range(1, horizon + 1))
    assert _at_most(int((norms > every).any(axis=0).sum()), TRIALS, alpha)
    for _ in range(horizon):
        mech.add(np.zeros(dim), np.random.default_rng(seed))
    assert mech.error_bound(alpha) == mech.error_bound(alpha, step=horizon)


@settings(max_examples=6)
@given(kind=st.sampled_from(KINDS), dim=st.integers(2, 4), alpha=st.floats(0.05, 0.5),
       shift=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_symmetric_error_bounds_hold_in_both_norms(kind, dim, alpha, shift, seed):
    horizon, trials = 8, 300
    rng = np.random.default_rng(seed)
    worst = {"l2": np.zeros(trials), "operator": np.zeros(trials)}
    for i in range(trials):
        mech = continual_release(kind, (dim, dim), horizon, sigma=1.0, sampler=FAST,
                                 symmetric=True, psd_shift=shift)
        for _ in range(horizon):
            err = mech.add(np.zeros((dim, dim)), rng)
            worst["l2"][i] = max(worst["l2"][i], np.linalg.norm(err))
            worst["operator"][i] = max(worst["operator"][i], np.abs(np.linalg.eigvalsh(err)).max())
    for norm, seen in worst.items():
        last = mech.error_bound(alpha, norm=norm)
        every = mech.error_bound(alpha, uniform=True, norm=norm)
        assert _at_most(int((seen > every).sum()), trials, alpha)
        assert last <= every


def test_the_l2_bound_of_symmetric_noise_is_the_chi_square_of_its_free_entries():
    mech = continual_release("tree", (3, 3), 4, sigma=2.0, symmetric=True)
    mech.add(np.zeros((3, 3)), np.random.default_rng(0))
    v = mech.prefix_variance()
    x = math.log(1 / 0.1)  # Laurent-Massart with 6 free entries of variance 2 v
    assert mech.error_bound(0.1) == pytest.approx(math.sqrt(2 * v * (6 + 2 * math.sqrt(6 * x)
                                                                      + 2 * x)))


@pytest.mark.parametrize(("call", "name", "value"), [
    (lambda m: m.error_bound(0.0), "alpha", 0.0),
    (lambda m: m.error_bound(1.0), "alpha", 1.0),
    (lambda m: m.error_bound(float("nan")), "alpha", "nan"),
    (lambda m: m.error_bound(0.1, step=9), "step", 9),
    (lambda m: m.error_bound(0.1, step=2, uniform=True), "step", 2),
    (lambda m: m.error_bound(0.1, norm="operator"), "norm", "operator"),
    (lambda m: m.error_bound(0.1, norm="max"), "norm", "max"),
])
def test_bad_error_bound_requests_name_the_value(call, name, value):
    mech = continual_release("mf", (3,), 8, sigma=1.0)
    mech.add(np.zeros(3), np.random.default_rng(0))
    with pytest.raises(InvalidParameterError, match=f"^{name} .*{value}"):
        call(mech)


def test_before_any_release_only_explicit_steps_are_bounded():
    mech = continual_release("tree", (3,), 8, sigma=1.0)
    with pytest.raises(InvalidParameterError, match="nothing released yet"):
        mech.error_bound(0.1)
    assert mech.error_bound(0.1, step=3) > 0 and mech.error_bound(0.1, uniform=True) > 0


@pytest.mark.parametrize("kind", KINDS)
def test_prefix_variances_agree_with_each_step(kind):
    mech = continual_release(kind, (2,), 300, sigma=1.7)
    table = mech.prefix_variances()
    steps = np.array([mech.prefix_variance(t) for t in range(1, 301)])
    np.testing.assert_allclose(table, steps, rtol=1e-12, atol=0)
    assert table.max() == mech.max_prefix_variance()


def test_mf_prefix_variances_cost_about_what_the_trees_do():
    """10,000 prefix_variance(t) calls and one prefix_variances() of mf, in the time of the
    tree's (the figures: bench/bench_continual.py)."""
    times = {}
    for kind in ("tree", "mf"):
        mech = continual_release(kind, (3,), 10_000, sigma=1.0)
        start = time.perf_counter()
        mech.prefix_variances()
        for t in range(1, 10_001):
            mech.prefix_variance(t)
        times[kind] = time.perf_counter() - start
    assert times["mf"] < 5 * times["tree"] + 0.5


def test_a_reward_only_release_bounds_its_moments():
    from privbandit.mechanisms import Publication, RewardOnlyRelease

    stream = RewardOnlyRelease(3, 8, sigma=1.0)
    features = Publication("party 0").features(np.eye(3)[:1], why="test")
    stream.add(features, np.ones(1), np.random.default_rng(0))
    inner = stream.mechanism
    assert stream.error_bound(0.1) == inner.error_bound(0.1)
    assert stream.error_bound(0.1, uniform=True) == inner.error_bound(0.1, uniform=True)
    np.testing.assert_array_equal(stream.prefix_variances(), inner.prefix_variances())
