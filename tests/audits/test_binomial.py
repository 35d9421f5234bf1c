"""Clopper–Pearson bounds: against scipy's exact interval, and their basic properties."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest

from privbandit.audits.binomial import cp_lower, cp_upper


@pytest.mark.parametrize("k,n", [(0, 10), (3, 10), (10, 10), (517, 1000), (1, 1)])
def test_matches_scipy_exact_interval(k, n):
    # a two-sided exact interval at level 1 - 2a has the one-sided bounds at error a
    ci = binomtest(k, n).proportion_ci(confidence_level=0.9, method="exact")
    assert cp_lower(k, n, 0.05) == pytest.approx(ci.low, abs=1e-12)
    assert cp_upper(k, n, 0.05) == pytest.approx(ci.high, abs=1e-12)


@given(n=st.integers(1, 5000), frac=st.floats(0, 1), alpha=st.floats(1e-6, 0.4))
def test_bounds_bracket_the_estimate(n, frac, alpha):
    k = int(round(frac * n))
    lo, hi = float(cp_lower(k, n, alpha)), float(cp_upper(k, n, alpha))
    assert 0.0 <= lo <= k / n <= hi <= 1.0


@given(n=st.integers(2, 2000), alpha=st.floats(1e-6, 0.4))
def test_monotone_in_successes(n, alpha):
    k = np.arange(n + 1)
    assert np.all(np.diff(cp_lower(k, n, alpha)) >= 0)
    assert np.all(np.diff(cp_upper(k, n, alpha)) >= 0)


def test_coverage_of_the_upper_bound():
    # P(p <= upper) >= 1 - alpha: count misses over many binomial draws
    rng = np.random.default_rng(3)
    p, n, alpha = 0.3, 50, 0.05
    k = rng.binomial(n, p, 20000)
    miss = np.mean(cp_upper(k, n, alpha) < p)
    assert miss <= alpha
