"""Threshold and Gaussian-DP testers: soundness, power, determinism, bad input."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting.accountants.gaussian import gaussian_epsilon
from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits import GaussianDPTester, LinearDiscriminant, Scalar, ThresholdTester
from privbandit.mechanisms.errors import ShapeError


def randomized_response(epsilon, bit, n, rng):
    """Report `bit` with probability e^eps / (1 + e^eps): exactly eps-DP."""
    keep = rng.random(n) < math.exp(epsilon) / (1 + math.exp(epsilon))
    return np.where(keep, bit, 1 - bit).astype(float)


@settings(derandomize=True, max_examples=30)
@given(epsilon=st.floats(0.05, 3.0), seed=st.integers(0, 2**32 - 1))
def test_threshold_bound_never_exceeds_a_discrete_mechanisms_epsilon(epsilon, seed):
    rng = np.random.default_rng(seed)
    x0 = randomized_response(epsilon, 0, 2000, rng)
    x1 = randomized_response(epsilon, 1, 2000, rng)
    b = ThresholdTester().bound(x0, x1, delta=0.0, confidence=0.999)
    assert 0.0 <= b.epsilon <= epsilon


@settings(derandomize=True, max_examples=30)
@given(mu=st.floats(0.1, 3.0), seed=st.integers(0, 2**32 - 1))
def test_gdp_bound_never_exceeds_a_gaussians_mu(mu, seed):
    rng = np.random.default_rng(seed)
    x0, x1 = rng.normal(0, 1, 2000), rng.normal(mu, 1, 2000)
    b = GaussianDPTester().bound(x0, x1, delta=1e-5, confidence=0.999)
    assert b.details["mu_lower"] <= mu
    assert b.epsilon == pytest.approx(gaussian_epsilon(b.details["mu_lower"], 1e-5))


def test_identical_distributions_give_no_evidence():
    rng = np.random.default_rng(5)
    b = ThresholdTester().bound(rng.laplace(size=5000), rng.laplace(size=5000),
                                delta=0.0, confidence=0.95)
    assert b.epsilon < 0.15


@pytest.mark.parametrize("flip", [False, True])
def test_threshold_power_on_laplace_either_direction(flip):
    rng = np.random.default_rng(2)
    x0, x1 = rng.laplace(0, 1, 20000), rng.laplace(1, 1, 20000)
    if flip:
        x0, x1 = x1, x0
    b = ThresholdTester().bound(x0, x1, delta=0.0, confidence=0.95)
    assert 0.8 < b.epsilon <= 1.0


def test_delta_lowers_the_threshold_bound():
    rng = np.random.default_rng(4)
    x0, x1 = rng.laplace(0, 1, 20000), rng.laplace(1, 1, 20000)
    t = ThresholdTester()
    assert (t.bound(x0, x1, delta=0.05, confidence=0.95).epsilon
            < t.bound(x0, x1, delta=0.0, confidence=0.95).epsilon)


def test_gdp_tester_is_tighter_than_threshold_for_gaussians():
    rng = np.random.default_rng(6)
    x0, x1 = rng.normal(0, 1, 20000), rng.normal(1, 1, 20000)
    gdp = GaussianDPTester().bound(x0, x1, delta=1e-5, confidence=0.95).epsilon
    thr = ThresholdTester().bound(x0, x1, delta=1e-5, confidence=0.95).epsilon
    assert gdp > 1.5 * thr
    assert 0.9 * gaussian_epsilon(1.0, 1e-5) < gdp <= gaussian_epsilon(1.0, 1e-5)


def test_details_and_determinism():
    rng = np.random.default_rng(7)
    x0, x1 = rng.normal(0, 1, (400, 3)), rng.normal(0.5, 1, (400, 3))
    t = ThresholdTester(LinearDiscriminant())
    a = t.bound(x0, x1, delta=0.0, confidence=0.9)
    assert a == t.bound(x0, x1, delta=0.0, confidence=0.9)
    assert a.details["selection_runs"] == [80, 80]
    assert a.details["evaluation_runs"] == [320, 320]
    assert a.details["region"] in ("s > t", "s <= t")
    assert a.details["statistic"] == "linear-discriminant"


def test_discrete_outputs_use_every_cut():
    # a point mass the neighbour never produces: the tester finds the region {s > 0.5}
    x0 = np.zeros(1000)
    x1 = np.r_[np.ones(500), np.zeros(500)]
    b = ThresholdTester().bound(x0, x1, delta=0.0, confidence=0.95)
    assert b.details["threshold"] == 0.5
    assert b.epsilon > 3


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: ThresholdTester(holdout=1.0), r"holdout must be a float in \(0, 1\); got 1.0"),
        (lambda: ThresholdTester(holdout=0), r"holdout must be a float in \(0, 1\); got 0"),
        (lambda: ThresholdTester(candidates=0), "candidates must be an integer >= 1; got 0"),
        (lambda: ThresholdTester(statistic=3), "statistic must be an object with fit"),
    ],
)
def test_bad_construction(make, match):
    with pytest.raises(InvalidParameterError, match=match):
        make()


@pytest.mark.parametrize(
    "tester,kwargs,error,match",
    [
        (GaussianDPTester(), {"delta": 0.0, "confidence": 0.9}, InvalidParameterError,
         r"delta must be a number in \(0, 1\) for the Gaussian-DP tester; got 0.0"),
        (ThresholdTester(), {"delta": 0.0, "confidence": 1.0}, InvalidParameterError,
         r"confidence must be a number in \[0, 1\); got 1.0"),
        (ThresholdTester(), {"delta": 0.0, "confidence": 0.0}, InvalidParameterError,
         r"confidence must be a number in \(0, 1\); got 0.0"),
        (ThresholdTester(), {"delta": -0.1, "confidence": 0.9}, InvalidParameterError,
         r"delta must be a number in \[0, 1\); got -0.1"),
    ],
)
def test_bad_bound_arguments(tester, kwargs, error, match):
    with pytest.raises(error, match=match):
        tester.bound(np.zeros(10), np.ones(10), **kwargs)


def test_too_few_runs():
    with pytest.raises(ShapeError, match=r"outputs1 must hold >= 4 runs along axis 0; got shape"):
        ThresholdTester(Scalar()).bound(np.zeros(10), np.zeros(3), delta=0.0, confidence=0.9)
