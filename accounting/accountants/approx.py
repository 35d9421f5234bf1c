"""Approximate DP: each leaf is an (epsilon0, delta0) pair; composition theorems combine them.

Three composition bounds, each a function of the target epsilon returning delta:
- basic: (sum eps_i, 1 - prod (1 - delta_i)) (Dwork & Lei 2009; Kairouz, Oh &
  Viswanath 2015, Theorem 3.5, first term);
- advanced: Dwork, Rothblum & Vadhan 2010, Theorem III.3, in its heterogeneous
  form eps = sqrt(2 ln(1/delta') sum eps_i^2) + sum eps_i (e^{eps_i} - 1),
  delta = delta' + sum delta_i;
- optimal homogeneous: Kairouz, Oh & Viswanath 2015, Theorem 3.3 (exact for k
  copies of one (eps0, delta0) pair), evaluated at any epsilon as the privacy
  profile of the k-fold canonical (eps0, delta0) mechanism (randomized response
  with a delta0 failure symbol), as in Murtagh & Vadhan 2016.  Heterogeneous
  leaves are bounded by the dominating pair (max eps_i, max delta_i).
The accountant reports the smallest delta of the three.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import gammaln, logsumexp

from ..events import GaussianEvent, LaplaceEvent
from .base import Accountant
from .gaussian import gaussian_delta


def basic_composition_delta(eps: np.ndarray, deltas: np.ndarray, counts: np.ndarray,
                            epsilon: float) -> float:
    """Basic composition: 1 - prod(1 - delta_i)^k_i if epsilon covers sum k_i eps_i, else 1."""
    if epsilon < float(np.dot(counts, eps)) * (1 - 1e-12) or np.any(deltas >= 1.0):
        return 1.0
    return float(-math.expm1(float(np.dot(counts, np.log1p(-deltas)))))


def advanced_composition_delta(eps: np.ndarray, deltas: np.ndarray, counts: np.ndarray,
                               epsilon: float) -> float:
    """Dwork-Rothblum-Vadhan advanced composition, solved for delta at `epsilon`."""
    with np.errstate(over="ignore"):  # a huge eps_i: drift inf, delta 1
        drift = float(np.dot(counts, eps * np.expm1(eps)))
    spread = float(np.dot(counts, eps * eps))
    if epsilon <= drift:
        return 1.0
    slack = math.exp(-((epsilon - drift) ** 2) / (2 * spread))
    return min(1.0, slack + float(np.dot(counts, deltas)))


def optimal_homogeneous_delta(eps0: float, delta0: float, count: int, epsilon: float) -> float:
    """Kairouz-Oh-Viswanath optimal delta(epsilon) for `count` copies of (eps0, delta0)-DP.

    delta = 1 - (1 - delta0)^k (1 - d), with d = sum over l < (k eps0 - epsilon) / (2 eps0)
    of C(k, l) (e^{(k-l) eps0} - e^{epsilon + l eps0}) / (1 + e^{eps0})^k.
    """
    last = math.ceil((count * eps0 - epsilon) / (2 * eps0)) - 1  # largest l with a positive term
    if last < 0:
        d = 0.0
    else:
        ls = np.arange(min(last, count) + 1, dtype=float)
        gap = epsilon - (count - 2 * ls) * eps0  # < 0 on every kept term
        log_terms = (
            gammaln(count + 1) - gammaln(ls + 1) - gammaln(count - ls + 1)
            - ls * eps0 - count * math.log1p(math.exp(-eps0))
            + np.log(-np.expm1(np.minimum(gap, -1e-300)))
        )
        d = min(1.0, math.exp(float(logsumexp(log_terms))))
    if d >= 1.0 or delta0 >= 1.0:
        return 1.0
    return float(-math.expm1(count * math.log1p(-delta0) + math.log1p(-d)))


class ApproxDPAccountant(Accountant):
    """(epsilon, delta) composition: best of basic, advanced (DRV) and optimal (KOV).

    Leaves: a Laplace release is (l1_sensitivity / scale, 0)-DP.  A Gaussian
    release has a whole curve of (eps0, delta0) pairs (its exact analytic-
    Gaussian profile, Balle & Wang 2018); the accountant chooses the point per
    query: with one scale t it sets eps0_i = t * mu_i for every Gaussian leaf
    (mu_i = sensitivity / sigma, so small-mu leaves get proportionally small
    eps0, i.e. roughly equal delta0) and delta0_i = delta_Gauss(mu_i, eps0_i),
    and picks the t that minimises the composed delta (a log grid, then Brent's
    method around the best grid point).  Any t gives a valid bound, so the
    search only affects tightness.  `epsilon(delta)` bisects `delta(epsilon)`,
    which is non-increasing, and returns the certified (upper) end.
    Cost: O(total releases) per bound evaluation (the KOV sum).
    """

    name = "approx-dp"
    needs_delta = True
    leaf_costs = {
        LaplaceEvent: lambda e, k: ("pure", e.pure_epsilon, k),
        GaussianEvent: lambda e, k: ("gaussian", e.mu, k),
    }

    def _initial_state(self) -> dict:
        return {}

    def _add(self, state: dict, cost) -> dict:
        kind, parameter, count = cost
        new = dict(state)
        new[(kind, parameter)] = new.get((kind, parameter), 0) + count
        return new

    # -- bounds -------------------------------------------------------------
    def _leaves(self, kind: str) -> tuple[np.ndarray, np.ndarray]:
        items = [(p, k) for (kd, p), k in self._state.items() if kd == kind]
        return (np.array([p for p, _ in items], dtype=float),
                np.array([k for _, k in items], dtype=float))

    def _delta_at_split(self, t: float, epsilon: float) -> float:
        pure_eps, pure_k = self._leaves("pure")
        mus, gauss_k = self._leaves("gaussian")
        gauss_eps = t * mus
        gauss_deltas = np.array([gaussian_delta(m, e) for m, e in zip(mus, gauss_eps, strict=True)])
        eps = np.concatenate([pure_eps, gauss_eps])
        deltas = np.concatenate([np.zeros_like(pure_eps), gauss_deltas])
        counts = np.concatenate([pure_k, gauss_k])
        return min(
            basic_composition_delta(eps, deltas, counts, epsilon),
            advanced_composition_delta(eps, deltas, counts, epsilon),
            optimal_homogeneous_delta(
                float(eps.max()), float(deltas.max()), int(counts.sum()), epsilon
            ),
        )

    def _delta(self, epsilon: float) -> float:
        mus, _ = self._leaves("gaussian")
        if mus.size == 0:
            return self._delta_at_split(1.0, epsilon)  # t is unused without Gaussian leaves
        log_t = np.linspace(math.log(1e-3), math.log(40.0 + float(mus.max())), 24)
        values = [self._delta_at_split(math.exp(x), epsilon) for x in log_t]
        best = int(np.argmin(values))
        if values[best] <= 0.0 or values[best] >= 1.0:
            return values[best]
        lo, hi = log_t[max(best - 1, 0)], log_t[min(best + 1, log_t.size - 1)]
        found = minimize_scalar(
            lambda x: math.log(max(self._delta_at_split(math.exp(x), epsilon), 1e-320)),
            bounds=(lo, hi), method="bounded", options={"xatol": 1e-7},
        )
        return min(values[best], self._delta_at_split(math.exp(found.x), epsilon))

    def _epsilon(self, delta: float) -> float:
        mus, _ = self._leaves("gaussian")
        pure_eps, pure_k = self._leaves("pure")
        basic = float(np.dot(pure_k, pure_eps))
        if delta == 0.0:
            return math.inf if mus.size else basic
        if self._delta(0.0) <= delta:
            return 0.0
        hi = basic if mus.size == 0 else 1.0
        while self._delta(hi) > delta:
            hi *= 2.0
            if hi > 1e12:
                return math.inf
        lo = hi / 2.0 if self._delta(hi / 2.0) > delta else 0.0
        gap = lambda e: math.log(max(self._delta(e), 1e-320)) - math.log(delta)
        if gap(lo) > 0:
            hi = min(hi, brentq(gap, lo, hi, xtol=1e-12 * hi, rtol=1e-12))
        # Step up to the certified side of the root.
        while self._delta(hi) > delta:
            hi *= 1 + 1e-10
        return hi
