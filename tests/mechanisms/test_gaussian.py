"""Gaussian vector and symmetric matrix: calibration round trips, variances, bad input."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting import ExactGaussianAccountant, GaussianEvent
from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms.errors import ShapeError
from privbandit.mechanisms.gaussian import (
    DEFAULT_MAX_ENTRIES,
    GaussianVector,
    SymmetricGaussianMatrix,
)
from privbandit.mechanisms.samplers import EXACT, FAST


def assert_moments(samples, variance, z=6.0):
    samples = np.asarray(samples, dtype=float).ravel()
    n = samples.size
    assert abs(samples.mean()) <= z * math.sqrt(variance / n)
    assert abs(samples.var() - variance) <= z * variance * math.sqrt(2 / n)


MECHS = [GaussianVector, SymmetricGaussianMatrix]


@given(
    st.sampled_from(MECHS),
    st.floats(0.05, 10.0),
    st.floats(1e-10, 0.2),
    st.floats(1e-4, 1e4),
    st.sampled_from([FAST, EXACT]),
)
def test_from_privacy_round_trips_through_exact_accountant(cls, epsilon, delta, l2, sampler):
    mech = cls.from_privacy(epsilon, delta, l2, sampler=sampler)
    assert isinstance(mech.event, GaussianEvent) and mech.event.sigma == mech.sigma
    assert mech.l2_sensitivity == l2
    # a symmetric release hides ||D||_F / sqrt(2) (its diagonal noise has twice the variance)
    assert mech.event.l2_sensitivity == l2 * cls._whitening + sampler.l2_slack(DEFAULT_MAX_ENTRIES)
    spent = ExactGaussianAccountant().compose(mech.event).epsilon(delta)
    assert spent == pytest.approx(epsilon, rel=1e-6)


@given(st.integers(0, 2**32 - 1), st.floats(0.01, 100.0))
def test_vector_noise_mean_zero_variance_sigma2(seed, sigma):
    rng = np.random.default_rng(seed)
    mech = GaussianVector(sigma, 1.0, sampler=FAST)
    value = rng.uniform(-5, 5, size=(40, 500))
    out = mech.release(value, rng)
    assert out.shape == value.shape
    assert_moments(out - value, sigma**2)


@given(st.integers(0, 2**32 - 1), st.integers(2, 40), st.floats(0.1, 10.0))
def test_symmetric_matrix_noise_offdiag_sigma2_diag_twice(seed, dim, sigma):
    rng = np.random.default_rng(seed)
    mech = SymmetricGaussianMatrix(sigma, 1.0, sampler=FAST)
    a = rng.standard_normal((dim, dim))
    value = a + a.T
    noise = np.stack([mech.release(value, rng) - value for _ in range(3000 // dim)])
    assert np.array_equal(noise, np.swapaxes(noise, 1, 2))
    rows, cols = np.triu_indices(dim, 1)
    assert_moments(noise[:, rows, cols], sigma**2)
    assert_moments(noise[:, np.arange(dim), np.arange(dim)], 2 * sigma**2)


def test_exact_sampler_releases():
    rng = np.random.default_rng(0)
    vec = GaussianVector(2.0, 1.0, sampler=EXACT)
    assert vec.sampler is EXACT
    assert_moments(vec.release(np.zeros(3000), rng), 4.0)
    mat = SymmetricGaussianMatrix(1.0, 1.0, sampler=EXACT)
    value = np.eye(21)
    out = mat.release(value, rng)
    assert np.array_equal(out, out.T)
    scaled = np.ldexp(out, 40)
    assert np.array_equal(scaled, np.rint(scaled))


def test_small_asymmetry_is_removed():
    value = np.eye(3)
    value[0, 1] += 1e-13
    out = SymmetricGaussianMatrix(1e-12, 1.0, sampler=FAST).release(value, np.random.default_rng(0))
    assert np.array_equal(out, out.T)


def test_fast_release_reproducible():
    mech = GaussianVector(1.0, 1.0, sampler=FAST)
    a = mech.release(np.ones(7), np.random.default_rng(3))
    assert np.array_equal(a, mech.release(np.ones(7), np.random.default_rng(3)))


# -- bad input ---------------------------------------------------------------------------------

RNG = np.random.default_rng(0)
VEC = GaussianVector(1.0, 1.0, sampler=FAST, max_entries=10)
MAT = SymmetricGaussianMatrix(1.0, 1.0, sampler=FAST, max_entries=10)

BAD = [
    (lambda: GaussianVector(0.0, 1.0), InvalidParameterError, "sigma must be a finite number > 0"),
    (lambda: GaussianVector(1.0, -2.0), InvalidParameterError, "l2_sensitivity must be"),
    (lambda: GaussianVector(1.0, 1.0, max_entries=0), InvalidParameterError, "max_entries"),
    (lambda: SymmetricGaussianMatrix(float("inf"), 1.0), InvalidParameterError, "sigma must be"),
    (lambda: GaussianVector.from_privacy(1.0, 0.0, 1.0), InvalidParameterError, "delta must be"),
    (lambda: GaussianVector.from_privacy(0.0, 1e-5, 1.0), InvalidParameterError, "epsilon must"),
    (lambda: SymmetricGaussianMatrix.from_privacy(1.0, 1e-5, 0.0), InvalidParameterError,
     "l2_sensitivity must be"),
    (lambda: VEC.release(np.ones(11), RNG), ShapeError, "11 entries, over max_entries = 10"),
    (lambda: VEC.release([1.0, np.nan], RNG), InvalidParameterError, "NaN/inf"),
    (lambda: VEC.release(np.ones(2, complex), RNG), ShapeError, "complex128"),
    (lambda: VEC.release([True], RNG), ShapeError, "dtype bool"),
    (lambda: VEC.release([1.0], "seed"), InvalidParameterError, "rng must be"),
    (lambda: MAT.release(np.ones((2, 3)), RNG), ShapeError, r"square \(D, D\) matrix"),
    (lambda: MAT.release(np.ones(3), RNG), ShapeError, "square"),
    (lambda: MAT.release(np.eye(5), RNG), ShapeError, "15 entries, over max_entries = 10"),
    (lambda: MAT.release(np.triu(np.ones((3, 3))), RNG), InvalidParameterError,
     "value must be a symmetric matrix"),
    (lambda: MAT.release(np.full((2, 2), np.inf), RNG), InvalidParameterError, "finite"),
]


@pytest.mark.parametrize("call, error, message", BAD)
def test_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_immutable():
    with pytest.raises(AttributeError):
        VEC.sigma = 2.0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        MAT._sigma = 2.0  # type: ignore[misc]
