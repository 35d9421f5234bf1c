"""Confidence bounds from an exact Gram matrix and noisy moments: coverage over simulated noise."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from privbandit.private import RewardNoiseRidge, sum_noise_bound

DRAWS = 200


def _allowed(failure: float) -> int:
    """Failures a correct bound may show in DRAWS draws (one-sided binomial, 1e-4)."""
    return int(binom.ppf(1 - 1e-4, DRAWS, failure))


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 12), st.integers(1, 40), st.floats(0.01, 100.0), st.floats(0.02, 0.3),
       st.data())
def test_the_sum_bound_holds_for_the_worst_subsets_an_adversary_can_pick(
        dim, units, variance, failure, data):
    """For every draw, the subsets most aligned with the noise (the top units along many
    directions, every size) stay within the bound, save in at most a failure share of draws."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    bad = 0
    for _ in range(DRAWS):
        noise = rng.normal(0.0, np.sqrt(variance), (units, dim))
        directions = rng.standard_normal((16, dim))
        order = np.argsort(-(noise @ directions.T), axis=0)  # units by alignment
        sums = np.cumsum(noise[order], axis=0)  # (size, direction, dim): top-k sums
        norms = np.linalg.norm(sums, axis=-1).max(axis=1)
        bounds = np.array([sum_noise_bound(variance, dim, k, units, failure)
                           for k in range(1, units + 1)])
        bad += bool(np.any(norms > bounds))
    assert bad <= _allowed(failure)


@settings(max_examples=10, deadline=None)
@given(st.integers(2, 8), st.integers(5, 400), st.integers(1, 6), st.floats(0.1, 30.0),
       st.data())
def test_the_upper_confidence_bound_covers_every_item(dim, records, members, sd, data):
    """UCB = x . theta~ + beta ||x||_(M^-1) + H ||M^-1 x|| is >= x . theta for every item in
    all but a (confidence + failure) share of draws of rewards and privacy noise."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    confidence, failure, units = 0.05, 0.05, 10
    ridge = RewardNoiseRidge(dim, 1.0, 0.5, 1.0, confidence)
    theta = rng.standard_normal(dim)
    theta *= rng.random() / np.linalg.norm(theta)
    bad = 0
    for _ in range(DRAWS):
        x = rng.standard_normal((records, dim))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        y = x @ theta + rng.uniform(-0.5, 0.5, records)  # 0.5-sub-Gaussian noise
        h = rng.normal(0.0, sd, (members, dim)).sum(axis=0)
        bound = sum_noise_bound(sd**2, dim, members, units, failure)
        model = ridge.model(x.T @ x, y @ x + h, bound)
        items = rng.standard_normal((32, dim))
        items /= np.linalg.norm(items, axis=1, keepdims=True)
        bad += bool(np.any(model.scores(items) < items @ theta))
    assert bad <= _allowed(confidence + failure)


def test_the_bound_is_the_smaller_of_its_two_forms_and_zero_without_noise():
    assert sum_noise_bound(0.0, 3, 2, 5, 0.1) == 0.0
    assert sum_noise_bound(1.0, 3, 0, 5, 0.1) == 0.0
    one, many = sum_noise_bound(1.0, 10, 1, 20, 0.1), sum_noise_bound(1.0, 10, 20, 20, 0.1)
    assert one < many < 20 * one  # the spectral form wins for large sets
