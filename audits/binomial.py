"""Exact (Clopper–Pearson) one-sided confidence bounds on a binomial proportion.

`cp_lower(k, n, alpha)` and `cp_upper(k, n, alpha)` hold with probability at
least 1 - alpha each (Clopper & Pearson 1934): they invert the binomial tail
through the beta quantile.  Vectorized over k and n.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import beta


def cp_lower(successes, trials, alpha: float) -> np.ndarray:
    """Largest p0 with P(Bin(n, p0) >= k) <= alpha; 0 when k = 0."""
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore"):
        out = beta.ppf(alpha, k, n - k + 1)
    return np.where(k <= 0, 0.0, out)


def cp_upper(successes, trials, alpha: float) -> np.ndarray:
    """Smallest p0 with P(Bin(n, p0) <= k) <= alpha; 1 when k = n."""
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    with np.errstate(invalid="ignore"):
        out = beta.ppf(1.0 - alpha, k + 1, n - k)
    return np.where(k >= n, 1.0, out)
