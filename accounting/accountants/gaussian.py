"""Exact accounting for compositions of Gaussian releases.

The adaptive composition of Gaussian releases with GDP parameters mu_i is
exactly mu-GDP with mu = sqrt(sum mu_i^2) (Dong, Roth & Su 2019, Corollary
3.3), and a mu-GDP mechanism is (epsilon, delta)-DP exactly when
delta >= Phi(-epsilon/mu + mu/2) - e^epsilon Phi(-epsilon/mu - mu/2)
(Balle & Wang 2018, Theorem 8, the analytic Gaussian mechanism; Dong et al.
Corollary 2.13).  A tree of Gaussian nodes therefore reduces to one Gaussian.
"""
from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import log_ndtr

from ..events import GaussianEvent
from .base import Accountant


def gaussian_delta(mu: float, epsilon: float) -> float:
    """Exact delta(epsilon) of a mu-GDP mechanism (analytic Gaussian), in log space."""
    if mu <= 0:
        return 0.0
    a = log_ndtr(-epsilon / mu + mu / 2)
    b = epsilon + log_ndtr(-epsilon / mu - mu / 2)
    # The true value is > 0 for every mu > 0 (no Gaussian is pure DP): never round to 0.
    if b >= a:
        return math.ulp(0.0)
    return max(float(math.exp(a) * -math.expm1(b - a)), math.ulp(0.0))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """Smallest epsilon >= 0 with gaussian_delta(mu, epsilon) <= delta (bisection)."""
    if mu <= 0 or gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    if delta <= 0:
        return math.inf
    hi = max(1.0, mu * mu)
    while gaussian_delta(mu, hi) > delta:
        hi *= 2.0
    eps = brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0, hi, xtol=1e-13, rtol=1e-13)
    # step up to the safe side of the root
    while gaussian_delta(mu, eps) > delta:
        eps = math.nextafter(eps, math.inf) * (1 + 1e-14)
    return float(eps)


class ExactGaussianAccountant(Accountant):
    """Exact (epsilon, delta) for any composition of Gaussian releases.

    State: total mu^2.  Only `GaussianEvent` leaves are supported (trees,
    repetitions and compositions of them included); anything else is refused.
    """

    name = "exact-gaussian"
    needs_delta = True
    leaf_costs = {GaussianEvent: lambda e, k: k * e.mu**2}

    def _initial_state(self) -> float:
        return 0.0

    def _add(self, state: float, cost: float) -> float:
        return state + cost

    @property
    def mu(self) -> float:
        """The GDP parameter of everything composed so far."""
        return math.sqrt(self._state)

    def _epsilon(self, delta: float) -> float:
        return gaussian_epsilon(self.mu, delta)

    def _delta(self, epsilon: float) -> float:
        return gaussian_delta(self.mu, epsilon)
