"""`RidgeModels`: a batch of ridge-regression models kept as inverses.

Model m holds V_m = lam I + sum x x^T (stored as its inverse), b_m = sum r x,
theta_m = V_m^-1 b_m, ln(det V_m / det(lam I)) and its sample count.  Every
update is one Sherman-Morrison step and one determinant-lemma step, O(d^2).
Shared by LinUCB, LinTS, CLUB, SCLUB and the federated algorithms.
"""
from __future__ import annotations

import numpy as np

from accounting.validation import check_positive

from ..kernels import logdet_increment, sherman_morrison
from .base import check_dim


class RidgeModels:
    """n_models ridge regressions in dimension dim with regulariser lam.

    Arrays (read them, do not write them): gram (n, d, d) = V, inv (n, d, d)
    = V^-1, b (n, d), theta (n, d), logdet (n,) = ln(det V / det(lam I)),
    count (n,) int.
    """

    def __init__(self, n_models: int, dim: int, lam: float = 1.0) -> None:
        self.n_models = check_dim("n_models", n_models)
        self.dim = check_dim("dim", dim)
        self.lam = check_positive("lam", lam)
        self.gram = np.tile(np.eye(self.dim) * self.lam, (self.n_models, 1, 1))
        self.inv = np.tile(np.eye(self.dim) / self.lam, (self.n_models, 1, 1))
        self.b = np.zeros((self.n_models, self.dim))
        self.theta = np.zeros((self.n_models, self.dim))
        self.logdet = np.zeros(self.n_models)
        self.count = np.zeros(self.n_models, dtype=np.int64)

    def add(self, m: int, x: np.ndarray, reward: float) -> None:
        """Add the observation (x, reward) to model m: O(d^2)."""
        inv = self.inv[m]
        quad = sherman_morrison(inv, x)
        self.gram[m] += np.multiply.outer(x, x)
        self.b[m] += reward * x
        self.theta[m] = inv @ self.b[m]
        self.logdet[m] += logdet_increment(quad)
        self.count[m] += 1
