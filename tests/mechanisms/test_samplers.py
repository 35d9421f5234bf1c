"""Noise samplers: distributions, reproducibility, the OpenDP grid and its slack, bad input."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms.errors import ShapeError
from privbandit.mechanisms.samplers import (
    EXACT,
    FAST,
    GridSampler,
    NumpySampler,
    OpenDPSampler,
    resolve_sampler,
)
from privbandit.mechanisms.samplers import GRID as GRID_SAMPLER

K = -40
GRID = 2.0**K


def assert_moments(samples, variance, kurtosis=3.0, z=6.0):
    """Mean 0 and the given variance, within z standard errors."""
    samples = np.asarray(samples, dtype=float).ravel()
    n = samples.size
    assert abs(samples.mean()) <= z * math.sqrt(variance / n)
    spread = z * variance * math.sqrt((kurtosis - 1) / n)
    assert abs(samples.var() - variance) <= spread, (samples.var(), variance, spread)


def on_grid(values, k=K):
    scaled = np.ldexp(np.asarray(values, dtype=float), -k)
    return bool(np.all(scaled == np.rint(scaled)))


# -- the fast sampler ------------------------------------------------------------------


@given(st.integers(0, 2**63 - 1), st.sampled_from([(), (3,), (4, 5), (2, 3, 2)]))
def test_fast_sampler_is_reproducible_bit_for_bit(seed, shape):
    for draw in (
        lambda r: FAST.laplace(0.7, shape, r),
        lambda r: FAST.gaussian(1.3, shape, r),
        lambda r: FAST.add_gaussian(np.ones(shape), 2.0, r),
    ):
        a, b = draw(np.random.default_rng(seed)), draw(np.random.default_rng(seed))
        assert a.shape == shape
        assert np.array_equal(a, b)


@given(st.integers(0, 2**32 - 1), st.floats(0.05, 50.0))
def test_fast_laplace_and_gaussian_moments(seed, scale):
    rng = np.random.default_rng(seed)
    assert_moments(FAST.laplace(scale, 40_000, rng), 2 * scale**2, kurtosis=6.0)
    assert_moments(FAST.gaussian(scale, 40_000, rng), scale**2)


@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.floats(0.1, 10.0))
def test_symmetric_noise_is_symmetric_with_documented_variances(seed, dim, sigma):
    rng = np.random.default_rng(seed)
    draws = np.stack([FAST.symmetric_gaussian(sigma, dim, rng) for _ in range(400)])
    assert np.array_equal(draws, np.swapaxes(draws, 1, 2))
    diag = draws[:, np.arange(dim), np.arange(dim)]
    assert_moments(diag, 2 * sigma**2)
    if dim > 1:
        rows, cols = np.triu_indices(dim, 1)
        upper = draws[:, rows, cols]
        assert_moments(upper, sigma**2)


def test_add_symmetric_reads_only_the_upper_triangle():
    value = np.arange(16.0).reshape(4, 4)
    out = FAST.add_symmetric_gaussian(value, 1e-9, np.random.default_rng(0))
    mirrored = np.triu(value) + np.triu(value, 1).T
    np.testing.assert_allclose(out, mirrored, atol=1e-6)
    assert np.array_equal(out, out.T)


# -- the exact sampler -------------------------------------------------------------------


def test_exact_noise_lies_on_the_grid_and_ignores_rng():
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    noise = EXACT.gaussian(1.0, (21, 21), rng)
    assert noise.shape == (21, 21) and on_grid(noise)
    assert on_grid(EXACT.laplace(0.5, 100, rng))
    assert on_grid(EXACT.symmetric_gaussian(2.0, 6, rng))
    assert rng.bit_generator.state == state  # OpenDP's CSPRNG, never the caller's


def test_exact_release_rounds_the_value_to_the_grid_before_adding():
    # an off-grid value: OpenDP rounds it first, so value + noise is again on the grid
    value = np.full(50, 1.0 / 3.0)
    out = EXACT.add_gaussian(value, 1.0, np.random.default_rng(0))
    assert on_grid(out)
    assert not on_grid(value)


def test_exact_moments():
    rng = np.random.default_rng(0)
    assert_moments(EXACT.gaussian(2.0, 3000, rng), 4.0)
    assert_moments(EXACT.laplace(1.5, 3000, rng), 2 * 1.5**2, kurtosis=6.0)
    sym = np.stack([EXACT.symmetric_gaussian(1.0, 30, rng) for _ in range(3)])
    assert np.array_equal(sym, np.swapaxes(sym, 1, 2))
    rows, cols = np.triu_indices(30, 1)
    assert_moments(sym[:, rows, cols], 1.0)


@pytest.mark.parametrize("entries", [1, 7, 441])
def test_slack_matches_opendp_privacy_map(entries):
    # Laplace: OpenDP maps an L1 distance d to (d + entries * 2**k) / scale
    lap = EXACT.measurement("laplace", 2.0, entries)
    for d in (0.0, 0.25, 1.0):
        assert lap.map(d) == pytest.approx((d + EXACT.l1_slack(entries)) / 2.0, rel=1e-12)
    # Gaussian: OpenDP's zCDP rho never exceeds ((d + l2_slack) / sigma)**2 / 2
    gauss = EXACT.measurement("gaussian", 3.0, entries)
    for d in (1e-12, 0.25, 1.0):
        ours = (d + EXACT.l2_slack(entries)) ** 2 / (2 * 9.0)
        assert gauss.map(d) <= ours * (1 + 1e-12)
        assert gauss.map(d) >= (d / 3.0) ** 2 / 2


def test_slack_values():
    assert FAST.l1_slack(441) == FAST.l2_slack(441) == 0.0
    assert EXACT.l1_slack(441) == 441 * GRID
    assert EXACT.l2_slack(441) >= 21 * GRID
    assert OpenDPSampler(k=-20).l1_slack(3) == 3 * 2.0**-20


def test_resolve_sampler_defaults_to_the_float_safe_grid_sampler():
    assert resolve_sampler(None) is GRID_SAMPLER and GRID_SAMPLER.float_safe
    assert GRID_SAMPLER.seedable and not GRID_SAMPLER.exact
    assert EXACT.exact and EXACT.float_safe and not EXACT.seedable
    assert resolve_sampler(FAST) is FAST and not FAST.exact and not FAST.float_safe
    assert OpenDPSampler(-40) == EXACT and NumpySampler() == FAST
    assert GridSampler(-36) == GRID_SAMPLER and GridSampler(-30) != GRID_SAMPLER


def test_samplers_are_immutable():
    with pytest.raises(AttributeError):
        EXACT.k = 3  # type: ignore[misc]
    with pytest.raises(AttributeError):
        FAST.exact = True  # type: ignore[misc]


def test_empty_shapes():
    rng = np.random.default_rng(0)
    assert FAST.gaussian(1.0, (0, 3), rng).shape == (0, 3)
    assert EXACT.laplace(1.0, 0, rng).shape == (0,)


# -- bad input ---------------------------------------------------------------------------

RNG = np.random.default_rng(0)

BAD = [
    (lambda s: s.laplace(0.0, 3, RNG), InvalidParameterError, "scale must be a finite number > 0"),
    (lambda s: s.gaussian(float("nan"), 3, RNG), InvalidParameterError, "sigma must be"),
    (lambda s: s.gaussian(-1.0, 3, RNG), InvalidParameterError, "got -1.0"),
    (lambda s: s.gaussian(1.0, (2, -1), RNG), InvalidParameterError, "shape must be"),
    (lambda s: s.gaussian(1.0, "3", RNG), InvalidParameterError, "shape must be"),
    (lambda s: s.gaussian(1.0, 3, 42), InvalidParameterError, "rng must be a numpy.random"),
    (lambda s: s.add_gaussian([1.0, np.nan], 1.0, RNG), InvalidParameterError, "NaN/inf"),
    (lambda s: s.add_laplace([True, False], 1.0, RNG), ShapeError, "dtype bool"),
    (lambda s: s.add_laplace(["a"], 1.0, RNG), ShapeError, "real numbers"),
    (lambda s: s.add_gaussian(np.ones(2, complex), 1.0, RNG), ShapeError, "complex128"),
    (lambda s: s.add_symmetric_gaussian(np.ones((2, 3)), 1.0, RNG), ShapeError, "square"),
    (lambda s: s.symmetric_gaussian(1.0, 0, RNG), InvalidParameterError, "dim must be"),
]


@pytest.mark.parametrize("sampler", [FAST, EXACT, GRID_SAMPLER], ids=["fast", "exact", "grid"])
@pytest.mark.parametrize("call, error, message", BAD)
def test_bad_input(sampler, call, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(sampler)


@pytest.mark.parametrize("k", [1, -2000, 2.5, True, "k"])
@pytest.mark.parametrize("cls", [OpenDPSampler, GridSampler])
def test_bad_granularity(cls, k):
    with pytest.raises(InvalidParameterError, match="k must be an integer in"):
        cls(k=k)


def test_bad_sampler():
    with pytest.raises(InvalidParameterError, match="sampler must be a Sampler"):
        resolve_sampler("fast")
