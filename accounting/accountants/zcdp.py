"""Zero-concentrated DP (Bun & Steinke 2016) with the tight conversion to (epsilon, delta).

A rho-zCDP mechanism has Renyi divergence at most alpha * rho at every order
alpha > 1, so rho adds under composition (Bun & Steinke 2016, Lemma 2.3).
The conversion is Canonne, Kamath & Steinke 2020 ("The discrete Gaussian for
differential privacy"), Proposition 12 applied to the zCDP curve (their
Corollary 13):

    delta(epsilon) = inf_{alpha > 1} exp((alpha - 1)(alpha rho - epsilon))
                                     * (1 - 1/alpha)^(alpha - 1) / alpha,

which is never worse than, and usually well below, the classical
epsilon = rho + 2 sqrt(rho ln(1/delta)) of Bun & Steinke, Proposition 1.3.
Every alpha > 1 gives a valid bound, so a root-finder that lands slightly off
the optimum only loses tightness, never validity.
"""
from __future__ import annotations

import math

from scipy.optimize import brentq

from ..events import GaussianEvent, LaplaceEvent, SecureSumEvent
from .base import Accountant
from .secure_sum import secure_sum_rho

# Written with a = alpha - 1 > 0, where log(1 - 1/alpha) = log(a) - log1p(a).


def zcdp_delta(rho: float, epsilon: float) -> float:
    """delta(epsilon) of a rho-zCDP mechanism (Canonne-Kamath-Steinke 2020, Cor. 13)."""
    if rho <= 0:
        return 0.0

    def log_delta(a: float) -> float:
        return a * ((a + 1) * rho - epsilon) + a * (math.log(a) - math.log1p(a)) - math.log1p(a)

    # The exponent is convex in alpha; its derivative is increasing with one root.
    def slope(a: float) -> float:
        return (2 * a + 1) * rho - epsilon + math.log(a) - math.log1p(a)

    lo = 1e-12
    if slope(lo) >= 0:  # optimum at alpha -> 1, where the bound tends to 1
        return min(1.0, math.exp(min(0.0, log_delta(lo))))
    hi = max(1.0, (epsilon + math.log(2.0)) / (2 * rho))
    a = brentq(slope, lo, hi, xtol=1e-14, rtol=1e-14)
    # Never round a positive bound down to 0: delta = 0 is a pure-DP claim.
    return max(math.exp(min(0.0, log_delta(a))), math.ulp(0.0))


def zcdp_epsilon(rho: float, delta: float) -> float:
    """epsilon(delta) of a rho-zCDP mechanism: the inverse of `zcdp_delta`.

    For one order the bound solves to epsilon = alpha rho + log(1 - 1/alpha)
    + (ln(1/delta) - ln alpha) / (alpha - 1); its derivative in alpha vanishes
    where (alpha - 1)^2 rho = ln(1/delta) - ln(alpha), a single root.
    """
    if rho <= 0:
        return 0.0
    if delta <= 0:
        return math.inf
    big_l = -math.log(delta)

    def eps_at(a: float) -> float:
        return (a + 1) * rho + (big_l - math.log1p(a)) / a + math.log(a) - math.log1p(a)

    a = brentq(
        lambda a: a * a * rho - big_l + math.log1p(a),
        1e-300, math.sqrt(big_l / rho) + 1e-300, xtol=1e-15, rtol=1e-14,
    )
    return max(0.0, eps_at(a))


class ZCDPAccountant(Accountant):
    """zCDP accounting: rho adds up; (epsilon, delta) by the tight CKS conversion.

    Leaves: a Gaussian release with sensitivity s and noise sigma is
    s^2 / (2 sigma^2)-zCDP (Bun & Steinke 2016, Proposition 1.6); a pure
    epsilon-DP Laplace release is epsilon^2 / 2-zCDP (Proposition 1.4); a
    secure sum of discrete Gaussian shares (`SecureSumEvent`) is rho-zCDP with
    Kairouz, Liu & Steinke's (2021, Theorem 1) rho (`secure_sum_rho`).
    State: the total rho.
    """

    name = "zcdp"
    needs_delta = True
    leaf_costs = {
        GaussianEvent: lambda e, k: k * e.mu**2 / 2,
        LaplaceEvent: lambda e, k: k * e.pure_epsilon**2 / 2,
        SecureSumEvent: lambda e, k: k * secure_sum_rho(e),
    }

    def _initial_state(self) -> float:
        return 0.0

    def _add(self, state: float, cost: float) -> float:
        return state + cost

    @property
    def rho(self) -> float:
        """The zCDP parameter of everything composed so far."""
        return self._state

    def _epsilon(self, delta: float) -> float:
        return zcdp_epsilon(self._state, delta)

    def _delta(self, epsilon: float) -> float:
        return zcdp_delta(self._state, epsilon)
