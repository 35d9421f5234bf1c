"""The float-safe default sampler: the ideal discrete distributions, the grid, float safety."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms import samplers
from privbandit.mechanisms.samplers import GRID, GridSampler


def chi_square_p(draws: np.ndarray, weights) -> float:
    """p-value of the draws against the pmf proportional to `weights(z)` (bins with >= 5)."""
    z = np.arange(draws.min(), draws.max() + 1)
    pmf = weights(z.astype(float))
    expected = pmf / pmf.sum() * draws.size
    observed = np.bincount((draws - draws.min()).astype(np.int64), minlength=z.size)
    big = expected >= 5
    tail_obs, tail_exp = observed[~big].sum(), expected[~big].sum()
    obs, exp = np.append(observed[big], tail_obs), np.append(expected[big], tail_exp)
    return float(stats.chisquare(obs, exp).pvalue) if tail_exp > 0 else float(
        stats.chisquare(observed[big], expected[big] * observed[big].sum() / expected[big].sum()
                        ).pvalue)


@pytest.mark.parametrize("t", [0.3, 1.0, 2.5, 7.7, 40.0])
def test_discrete_laplace_matches_its_pmf(t):
    draws = samplers._integer_noise(np.random.default_rng(1), "laplace", t, 200_000)
    assert np.array_equal(draws, np.rint(draws))
    assert chi_square_p(draws, lambda z: np.exp(-np.abs(z) / t)) > 1e-4


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0, 10.3, 50.0])
def test_discrete_gaussian_matches_its_pmf(sigma):
    draws = samplers._integer_noise(np.random.default_rng(2), "gaussian", sigma, 200_000)
    assert chi_square_p(draws, lambda z: np.exp(-z * z / (2 * sigma**2))) > 1e-4


def test_memoryless_tails_are_drawn_beyond_every_block():
    # r above the level means E > 8: the count continues with fresh exponentials
    rng = np.random.default_rng(3)
    r = np.full(20_000, samplers._BLOCK_LEVEL + (1 - samplers._BLOCK_LEVEL) / 2)
    counts = samplers._exponential_counts(r, rng, 1.0, 2.0**40)
    assert counts.min() >= 8
    assert abs((counts - 8).mean() - 1 / math.expm1(1.0)) < 0.03  # geometric, ratio 1/e
    assert counts.max() >= 16  # blocks chain: no support ends at a block edge


def test_split_bernoulli_tests_keep_their_probabilities():
    rng = np.random.default_rng(4)
    for exponent in (0.5, 8.0, 11.0, 20.0):
        n = 4_000_000 if exponent > 8 else 200_000
        e = np.full(n, exponent)
        rate = samplers._bernoulli_exp(rng, rng.random(n), -e).mean()
        p = math.exp(-exponent)
        assert abs(rate - p) <= 6 * math.sqrt(p / n) + 1e-12, (exponent, rate, p)


@given(st.integers(0, 2**32 - 1), st.floats(1e-6, 1e3), st.sampled_from([-36, -30, -20]))
@settings(max_examples=30)
def test_releases_lie_on_the_grid_and_replay_from_the_seed(seed, scale, k):
    sampler = GridSampler(k)
    value = np.random.default_rng(seed).normal(0, 10, 50)
    a = sampler.add_gaussian(value, scale, np.random.default_rng(seed))
    b = sampler.add_gaussian(value, scale, np.random.default_rng(seed))
    assert np.array_equal(a, b)
    scaled = np.ldexp(a, -k)
    assert np.array_equal(scaled, np.rint(scaled))
    lap = sampler.add_laplace(value, scale, np.random.default_rng(seed))
    assert np.array_equal(np.ldexp(lap, -k), np.rint(np.ldexp(lap, -k)))


def test_the_grid_hides_the_input_bits():
    # Mironov's attack needs outputs only one input reaches; on the grid, every
    # output is a grid value whatever the input, and inputs are rounded first.
    rng = np.random.default_rng(5)
    a = GRID.add_laplace(np.zeros(50_000), 1.0, rng)
    b = GRID.add_laplace(np.full(50_000, 1.0 / 3.0), 1.0, rng)
    for out in (a, b):
        assert np.array_equal(np.ldexp(out, 36), np.rint(np.ldexp(out, 36)))
    lowest = lambda x: np.log2(np.abs(x[x != 0]) / np.abs(np.frexp(x[x != 0])[0]))  # noqa: E731
    assert lowest(a).min() >= -36 - 53 and np.ldexp(a, 36).min() < 0


def test_large_values_are_rounded_correctly():
    value = np.array([1e30, -3e17, 2.0**60 + 2.0**8, 0.5])
    out = GRID.add_laplace(value, 1e-3, np.random.default_rng(6))
    assert np.allclose(out, value, rtol=1e-12, atol=1e-1)
    assert np.array_equal(np.ldexp(out, 36), np.rint(np.ldexp(out, 36)))


def test_symmetric_noise_variances():
    rng = np.random.default_rng(7)
    draws = np.stack([GRID.symmetric_gaussian(2.0, 5, rng) for _ in range(4000)])
    assert np.array_equal(draws, np.swapaxes(draws, 1, 2))
    rows, cols = np.triu_indices(5, 1)
    assert abs(draws[:, rows, cols].var() / 4.0 - 1) < 0.05
    assert abs(draws[:, np.arange(5), np.arange(5)].var() / 8.0 - 1) < 0.06


def test_noise_is_slightly_inflated_to_cover_the_sampler_error():
    draws = GRID.laplace(1.0, 400_000, np.random.default_rng(8))
    assert samplers._NOISE_MARGIN == 1 + 2.0**-20
    assert abs(draws.var() / 2.0 - 1) < 0.02


def test_scale_beyond_the_grid_range_is_refused():
    with pytest.raises(InvalidParameterError, match=r"sigma must be at most .*GridSampler\(k\)"):
        GRID.gaussian(1e9, 3, np.random.default_rng(0))
    assert GridSampler(-10).gaussian(1e9, 3, np.random.default_rng(0)).shape == (3,)


def test_wide_noise_is_added_in_int64():
    # sigma / 2**k above 2**43: the integers pass 2**53, so they are summed in int64
    rng = np.random.default_rng(9)
    value = np.array([0.0, 1.0 / 3.0, 2.0**20])
    out = np.stack([GRID.add_gaussian(value, 5000.0, rng) for _ in range(4000)])
    assert np.array_equal(np.ldexp(out, 36), np.rint(np.ldexp(out, 36)))
    assert abs(out.std(axis=0).mean() / 5000.0 - 1) < 0.05
    assert np.allclose(out.mean(axis=0), value, atol=400)
