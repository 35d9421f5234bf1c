"""The privacy of a sum of discrete Gaussian shares (the distributed discrete Gaussian).

A sum Z of n independent discrete Gaussians N_Z(0, sigma^2) per entry is not
a discrete Gaussian, but close to one when sigma is not tiny.  Kairouz, Liu &
Steinke (ICML 2021, "The distributed discrete Gaussian mechanism for federated
learning with secure aggregation"), Proposition 14 and Theorem 1: for
sigma >= 1/2, every integer shift Delta in Z^d and every order alpha >= 1,

    D_alpha(Z + Delta || Z) <= min( alpha s^2 / 2 + tau d,
                                    alpha (s + tau sqrt(d))^2 / 2 ),

with s = ||Delta||_2 / (sqrt(n) sigma) and
tau = 10 sum_(k=1)^(n-1) exp(-2 pi^2 sigma^2 k / (k + 1)).  As tau d <= alpha
tau d for alpha >= 1, the release is rho-zCDP with
rho = min(s^2 / 2 + tau d, (s + tau sqrt(d))^2 / 2) (their Theorem 1 states it
as (1/2) eps^2-concentrated DP with eps = min(sqrt(s^2 + 2 tau d),
s + tau sqrt(d))).  With n = 1, tau = 0 and this is the discrete Gaussian's
exact rho = s^2 / 2 (Canonne, Kamath & Steinke 2020, Theorem 4).  tau falls
like exp(-pi^2 sigma^2): below 1e-300 from sigma = 9 grid steps, so with the
fine grids used here it only matters for tests at small sigma.
"""
from __future__ import annotations

import math

import numpy as np

from ..events import SecureSumEvent


def secure_sum_tau(sigma: float, shares: int) -> float:
    """KLS 2021's tau = 10 sum_(k=1)^(shares-1) exp(-2 pi^2 sigma^2 k / (k + 1))."""
    if shares <= 1:
        return 0.0
    k = np.arange(1, shares, dtype=float)
    return float(10.0 * np.exp(-2.0 * math.pi**2 * sigma * sigma * k / (k + 1)).sum())


def _terms(event: SecureSumEvent) -> tuple[float, float, int]:
    return event.mu, secure_sum_tau(event.sigma, event.shares), event.dimension


def secure_sum_rho(event: SecureSumEvent) -> float:
    """zCDP rho of one release: min(s^2/2 + tau d, (s + tau sqrt(d))^2 / 2)."""
    s, tau, d = _terms(event)
    return min(s * s / 2 + tau * d, (s + tau * math.sqrt(d)) ** 2 / 2)


def secure_sum_rdp(orders: np.ndarray, event: SecureSumEvent) -> np.ndarray:
    """RDP curve of one release: min(alpha s^2/2 + tau d, alpha (s + tau sqrt(d))^2 / 2)."""
    s, tau, d = _terms(event)
    a = np.asarray(orders, dtype=float)
    return np.minimum(a * (s * s / 2) + tau * d, a * ((s + tau * math.sqrt(d)) ** 2 / 2))
