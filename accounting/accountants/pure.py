"""Pure differential privacy with basic composition."""
from __future__ import annotations

import math

from ..events import LaplaceEvent
from .base import Accountant


class PureDPAccountant(Accountant):
    """Basic composition: epsilons add (Dwork & Roth 2014, Theorem 3.16).

    Supports Laplace releases (epsilon = l1_sensitivity / scale, Dwork et al.
    2006); Gaussian releases have no pure-DP guarantee and are refused.
    `delta(epsilon)` is 0 when epsilon covers the sum, else 1 (no guarantee).
    """

    name = "pure-dp"
    leaf_costs = {LaplaceEvent: lambda e, k: k * e.pure_epsilon}

    def _initial_state(self) -> float:
        return 0.0

    def _add(self, state: float, cost: float) -> float:
        return state + cost

    def _epsilon(self, delta: float) -> float:
        return self._state

    def _delta(self, epsilon: float) -> float:
        return 0.0 if epsilon >= self._state * (1 - 1e-12) else 1.0

    @property
    def pure_epsilon(self) -> float:
        """The total pure epsilon."""
        return self._state if math.isfinite(self._state) else math.inf
