"""Noise bounds and the noise-aware confidence radius hold at their stated levels."""
import math

import numpy as np
import pytest

from privbandit.mechanisms.samplers import FAST
from privbandit.private import NoisyRidge, applied_noise_bound, matrix_noise_bound


def symmetric_noise(rng, size, variance, trials):
    z = rng.normal(0.0, math.sqrt(variance), (trials, size, size))
    return (z + np.swapaxes(z, 1, 2)) / math.sqrt(2.0)


def test_noise_bounds_hold_at_their_level():
    rng = np.random.default_rng(1)
    d, v, failure, trials = 6, 3.0, 0.1, 4000
    noise = symmetric_noise(rng, d + 1, v, trials)
    ops = np.linalg.norm(noise[:, :d, :d], ord=2, axis=(1, 2))
    assert np.mean(ops > matrix_noise_bound(v, d, failure)) <= failure
    theta = rng.normal(size=d)
    theta *= 0.8 / np.linalg.norm(theta)
    u = np.append(theta, -1.0)
    w = noise[:, :d, :] @ u
    assert np.mean(np.linalg.norm(w, axis=1) > applied_noise_bound(v, d, failure, 0.8)) <= failure
    assert matrix_noise_bound(0.0, d, failure) == applied_noise_bound(0.0, d, failure, 1.0) == 0


def test_sampler_noise_matches_the_bounds_model():
    """The symmetric noise the samplers add has the variance the bounds assume."""
    rng = np.random.default_rng(2)
    draws = np.stack([FAST._add_symmetric(np.zeros((4, 4)), 2.0, rng) for _ in range(4000)])
    assert np.var(draws[:, 0, 1]) == pytest.approx(4.0, rel=0.1)
    assert np.var(draws[:, 2, 2]) == pytest.approx(8.0, rel=0.1)


@pytest.mark.parametrize("variance", [0.5, 400.0])  # no shift, then the rho shift
def test_radius_covers_the_truth(variance):
    rng = np.random.default_rng(3)
    d, n, trials = 3, 300, 300
    ridge = NoisyRidge(d, 1.0, 0.5, 1.0, confidence=0.05, noise_failure=0.01)
    theta = np.array([0.6, -0.3, 0.5])
    misses, shifted = 0, 0
    for _ in range(trials):
        x = rng.normal(size=(n, d))
        x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1.0)
        y = x @ theta + rng.normal(0.0, 0.5, n)
        z = np.c_[x, y]
        stats = z.T @ z + symmetric_noise(rng, d + 1, variance, 1)[0]
        shift = ridge.shift(stats[:d, :d], variance)
        shifted += shift > 0
        matrix = stats[:d, :d] + (1.0 + shift) * np.eye(d)
        err = np.linalg.solve(matrix, stats[:d, d]) - theta
        misses += math.sqrt(err @ matrix @ err) > ridge.radius(matrix, variance, shift)
    assert shifted in (0, trials)  # each case exercises one branch
    assert (shifted > 0) == (variance > 100)
    assert misses / trials <= 0.05 + 2 * 0.01


def test_spread_bounds_the_estimates_covariance():
    rng = np.random.default_rng(4)
    d, n, v = 3, 400, 20.0
    ridge = NoisyRidge(d, 1.0, 0.5, 1.0, confidence=0.05, noise_failure=0.01)
    theta = np.array([0.5, 0.5, -0.5])
    x = rng.normal(size=(n, d)) / math.sqrt(d)
    estimates, matrices = [], []
    for _ in range(2000):
        y = x @ theta + rng.normal(0.0, 0.5, n)
        z = np.c_[x, y]
        stats = z.T @ z + symmetric_noise(rng, d + 1, v, 1)[0]
        matrix = stats[:d, :d] + np.eye(d)
        estimates.append(np.linalg.solve(matrix, stats[:d, d]))
        matrices.append(matrix)
    mean_inv = np.linalg.inv(np.mean(matrices, axis=0))
    spread = ridge.covariance(mean_inv, v, 0.0)
    empirical = np.cov(np.array(estimates).T)
    assert np.linalg.eigvalsh(spread - empirical).min() > -0.1 * np.linalg.eigvalsh(spread).max()


def test_radius_is_infinite_for_a_matrix_that_is_not_positive_definite():
    ridge = NoisyRidge(2, 1.0, 0.5, 1.0, confidence=0.05, noise_failure=0.01)
    assert ridge.radius(np.diag([1.0, -1.0]), 1.0, 1.0) == math.inf
