"""Renyi DP over a grid of orders (Mironov 2017) with the improved conversion.

RDP curves add under composition at every order (Mironov 2017, Proposition 1).
Curves are exact for both leaf types:
- Gaussian, sensitivity s, noise sigma: alpha s^2 / (2 sigma^2) (Mironov,
  Proposition 7 / Table II);
- Laplace, L1 sensitivity s, scale b, eps0 = s / b (Mironov, Proposition 6):
  1/(alpha-1) log[alpha/(2alpha-1) e^{(alpha-1) eps0} + (alpha-1)/(2alpha-1) e^{-alpha eps0}].
  For a vector release the divergence is a sum over coordinates of that curve
  at each coordinate's shift; the curve is a log-sum-exp of affine functions of
  the shift, so it is convex with value 0 at 0, hence superadditive, and an
  L1-bounded shift is worst when it sits on one coordinate.
- a secure sum of discrete Gaussian shares (`SecureSumEvent`): the bound
  min(alpha s^2/2 + tau d, alpha (s + tau sqrt(d))^2 / 2) of Kairouz, Liu &
  Steinke 2021, Proposition 14 (`secure_sum.secure_sum_rdp`): an upper bound,
  attained for one share (the discrete Gaussian) at the orders where
  (alpha - 1) Delta is an integer (Canonne, Kamath & Steinke 2020).

Conversion to (epsilon, delta): at each order alpha,
    delta <= exp((alpha-1)(r - epsilon + log(1 - 1/alpha)) - log(alpha))
(Canonne, Kamath & Steinke 2020, Proposition 12; Asoodeh et al. 2020, eq. 20;
Balle et al. 2020, Theorem 21 in the same form), and, since the RDP curve is
non-decreasing in the order, delta(epsilon) <= delta(0) = TV <= sqrt(1 - e^{-r})
(Bretagnolle-Huber).  The best order wins.  This is the conversion of
dp-accounting's `RdpAccountant`, and the default grid is its grid, so the two
agree.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import invalid
from ..events import GaussianEvent, LaplaceEvent, SecureSumEvent
from .base import Accountant
from .secure_sum import secure_sum_rdp

DEFAULT_ORDERS: tuple[float, ...] = tuple(
    [round(1.1 + 0.1 * i, 1) for i in range(99)]
    + [float(a) for a in range(11, 64)]
    + [128.0, 256.0, 512.0, 1024.0]
)
# Below this order the per-order bound is numerically unstable and never useful.
_MIN_CONVERSION_ORDER = 1.01
_SMALLEST = math.ulp(0.0)
_TINY_LAPLACE_EPSILON = 1e-5


def gaussian_rdp(orders: np.ndarray, mu: float) -> np.ndarray:
    """RDP curve of a Gaussian release with mu = sensitivity / sigma."""
    return np.asarray(orders, dtype=float) * (mu * mu / 2.0)


def laplace_rdp(orders: np.ndarray, epsilon0: float) -> np.ndarray:
    """Exact RDP curve of a Laplace release with pure epsilon0 = sensitivity / scale."""
    a = np.asarray(orders, dtype=float)
    if epsilon0 < _TINY_LAPLACE_EPSILON:
        # The closed form cancels to rounding noise here; epsilon0-DP implies
        # epsilon0^2/2-zCDP (Bun & Steinke, Prop. 1.4), an upper bound that is
        # tight to a relative O(epsilon0).
        return a * (epsilon0 * epsilon0 / 2.0)
    lead = np.log(a / (2 * a - 1)) + (a - 1) * epsilon0
    tail = np.log((a - 1) / (2 * a - 1)) - a * epsilon0
    return np.logaddexp(lead, tail) / (a - 1)


def rdp_delta(orders: np.ndarray, rdp: np.ndarray, epsilon: float) -> float:
    """Smallest delta at `epsilon` over the orders (see the module docstring)."""
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_tv = np.where(r > 0, 0.5 * np.log(-np.expm1(-r)), -np.inf)
    log_order = (a - 1) * (r - epsilon + np.log1p(-1 / a)) - np.log(a)
    log_order = np.where(a > _MIN_CONVERSION_ORDER, log_order, np.inf)
    best = float(np.min(np.minimum(log_tv, log_order)))
    if best == -math.inf:
        return 0.0
    # Never round a positive bound down to 0: delta = 0 is a pure-DP claim.
    return max(math.exp(min(0.0, best)), _SMALLEST)


def rdp_epsilon(orders: np.ndarray, rdp: np.ndarray, delta: float) -> float:
    """Smallest epsilon at `delta` over the orders (the inverse of `rdp_delta`)."""
    r = np.asarray(rdp, dtype=float)
    if not np.any(r > 0):
        return 0.0
    if delta <= 0:
        return math.inf
    a = np.asarray(orders, dtype=float)
    eps = r + np.log1p(-1 / a) - np.log(delta * a) / (a - 1)
    eps = np.where(a > _MIN_CONVERSION_ORDER, eps, np.inf)
    eps = np.where(delta**2 + np.expm1(-r) > 0, 0.0, eps)  # Bretagnolle-Huber suffices
    return float(max(0.0, np.min(eps)))


def _check_orders(orders) -> np.ndarray:
    try:
        a = np.asarray(orders, dtype=float)
    except (TypeError, ValueError):
        raise invalid("orders", orders, "a non-empty sequence of finite orders > 1") from None
    if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)) or not np.all(a > 1):
        raise invalid("orders", orders, "a non-empty sequence of finite orders > 1")
    out = np.unique(a)
    out.setflags(write=False)
    return out


class RDPAccountant(Accountant):
    """Renyi-DP accounting over a grid of orders; the state is the RDP curve.

    Gaussian and Laplace leaves are supported with exact curves, secure sums
    with Kairouz, Liu & Steinke's bound (module docstring).  `orders`
    defaults to dp-accounting's grid (1.1 ... 10.9 by 0.1, 11 ... 63, 128,
    256, 512, 1024).  With delta = 0 the answer is infinite (no finite order
    certifies pure DP).
    """

    name = "rdp"
    needs_delta = True

    def __init__(self, orders=DEFAULT_ORDERS) -> None:
        self.orders = _check_orders(orders)
        super().__init__()

    leaf_costs = {
        GaussianEvent: lambda e, k: ("gaussian", e.mu, k),
        LaplaceEvent: lambda e, k: ("laplace", e.pure_epsilon, k),
        SecureSumEvent: lambda e, k: ("secure-sum", e, k),
    }
    _curves = {"gaussian": gaussian_rdp, "laplace": laplace_rdp,
               "secure-sum": secure_sum_rdp}

    def _initial_state(self) -> np.ndarray:
        return np.zeros_like(self.orders)

    def _add(self, state: np.ndarray, cost) -> np.ndarray:
        kind, parameter, count = cost
        return state + count * self._curves[kind](self.orders, parameter)

    @property
    def rdp(self) -> np.ndarray:
        """The RDP curve of everything composed so far, one value per order."""
        return self._state.copy()

    def _epsilon(self, delta: float) -> float:
        return rdp_epsilon(self.orders, self._state, delta)

    def _delta(self, epsilon: float) -> float:
        return rdp_delta(self.orders, self._state, epsilon)

    def __repr__(self) -> str:
        return f"RDPAccountant(orders={self.orders.size}, releases={self.releases})"
