"""High-probability noise bounds: never below the empirical quantile, tighter than the paper's."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms.noise_bounds import (
    psd_shift,
    symmetric_noise_norm_bound,
    vector_noise_norm_bound,
)
from privbandit.mechanisms.samplers import FAST
from privbandit.mechanisms.tree import psd_bound


def symmetric_noise(rng, variance, dim, n):
    """n matrices with N(0, variance) off-diagonal and N(0, 2 variance) diagonal entries."""
    z = rng.standard_normal((n, dim, dim))
    return (z + np.swapaxes(z, 1, 2)) * math.sqrt(variance / 2)


@settings(max_examples=15)
@given(seed=st.integers(0, 2**32 - 1), dim=st.integers(1, 30), variance=st.floats(0.01, 100.0),
       alpha=st.sampled_from([0.5, 0.2, 0.05]))
def test_symmetric_bound_holds_with_probability_at_least_one_minus_alpha(seed, dim, variance,
                                                                         alpha):
    rng = np.random.default_rng(seed)
    n = 2000
    norms = np.abs(np.linalg.eigvalsh(symmetric_noise(rng, variance, dim, n))).max(axis=1)
    bound = symmetric_noise_norm_bound(variance, dim, alpha)
    exceed = np.count_nonzero(norms > bound)
    assert exceed <= alpha * n + 4 * math.sqrt(alpha * n)  # binomial(n, alpha) upper tail


@settings(max_examples=15)
@given(seed=st.integers(0, 2**32 - 1), dim=st.integers(1, 200), variance=st.floats(0.01, 100.0),
       alpha=st.sampled_from([0.5, 0.2, 0.05]))
def test_vector_bound_holds_with_probability_at_least_one_minus_alpha(seed, dim, variance,
                                                                      alpha):
    rng = np.random.default_rng(seed)
    n = 4000
    norms = np.linalg.norm(rng.normal(0, math.sqrt(variance), (n, dim)), axis=1)
    exceed = np.count_nonzero(norms > vector_noise_norm_bound(variance, dim, alpha))
    assert exceed <= alpha * n + 4 * math.sqrt(alpha * n)


def test_bounds_are_close_to_the_quantiles_they_bound():
    rng = np.random.default_rng(3)
    norms = np.abs(np.linalg.eigvalsh(symmetric_noise(rng, 1.0, 20, 4000))).max(axis=1)
    assert np.quantile(norms, 0.95) < symmetric_noise_norm_bound(1.0, 20, 0.05) < \
        1.5 * np.quantile(norms, 0.95)
    vec = np.linalg.norm(rng.standard_normal((4000, 50)), axis=1)
    assert np.quantile(vec, 0.95) < vector_noise_norm_bound(1.0, 50, 0.05) < \
        1.2 * np.quantile(vec, 0.95)


def test_the_samplers_symmetric_noise_is_what_the_bound_assumes():
    rng = np.random.default_rng(4)
    draws = np.array([FAST.symmetric_gaussian(1.5, 12, rng) for _ in range(600)])
    norms = np.abs(np.linalg.eigvalsh(draws)).max(axis=1)
    assert np.count_nonzero(norms > symmetric_noise_norm_bound(1.5**2, 12, 0.1)) <= 60 + 30


@pytest.mark.parametrize(("dim", "horizon"), [(3, 100), (11, 10**5), (31, 10**6)])
def test_tighter_than_shariff_sheffet_for_the_same_tree(dim, horizon):
    nodes = math.ceil(math.log2(horizon)) + 1
    ours = symmetric_noise_norm_bound(nodes * 1.0, dim, 0.05 / horizon)
    assert 2.5 * ours < psd_bound(1.0, dim, horizon, 0.05)
    assert psd_shift(4.0, dim, 0.01) == 2 * symmetric_noise_norm_bound(4.0, dim, 0.01)


@pytest.mark.parametrize(("call", "name", "value", "allowed"), [
    (lambda: symmetric_noise_norm_bound(-1.0, 3, 0.1), "variance", -1.0, "a finite number >= 0"),
    (lambda: symmetric_noise_norm_bound(1.0, 0, 0.1), "dim", 0, "an integer >= 1"),
    (lambda: vector_noise_norm_bound(1.0, 3, 1.0), "alpha", 1.0, "a failure probability in (0, 1)"),
    (lambda: vector_noise_norm_bound(1.0, 3, 0.0), "alpha", 0.0, "a failure probability in (0, 1)"),
    (lambda: psd_shift(math.nan, 3, 0.1), "variance", math.nan, "a finite number >= 0"),
])
def test_bad_input(call, name, value, allowed):
    with pytest.raises(InvalidParameterError,
                       match=re.escape(f"{name} must be {allowed}; got {value!r}")):
        call()
