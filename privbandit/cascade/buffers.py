"""Agent-side state of the federated cascading bandits (seed 001, Algorithm 2).

`LocalBuffers` holds, for every agent u, the data gathered since its last
upload: Sigma_loc (d, d), b_loc (d,), T_loc (the number of observed items),
and the state of the det-ratio trigger

    det(Sigma_u + Sigma_loc) > (1 + alpha_c) det(Sigma_u)         (Alg. 2, line 13)

kept without any determinant: the inverse (Sigma_u + Sigma_loc)^-1 is updated
by Sherman-Morrison for every observed item and ln det(Sigma_u + Sigma_loc) -
ln det(Sigma_u) grows by ln(1 + x^T (Sigma_u + Sigma_loc)^-1 x) (matrix
determinant lemma), so one observation costs O(d^2).
"""
from __future__ import annotations

import math

import numpy as np

from privbandit.accounting.validation import check_positive

from ..kernels import sherman_morrison
from ..validation import check_dim


class LocalBuffers:
    """Un-uploaded data and det-ratio trigger state of n agents in dimension d.

    Arrays (read them, do not write them): gram (n, d, d) = Sigma_loc,
    moment (n, d) = b_loc, count (n,) = T_loc, trigger_inv (n, d, d) =
    (Sigma_u + Sigma_loc)^-1, gain (n,) = ln det(Sigma_u + Sigma_loc) - ln det(Sigma_u).
    """

    def __init__(self, n_users: int, dim: int, alpha_c: float, lam: float) -> None:
        self.n_users = check_dim("n_users", n_users)
        self.dim = check_dim("dim", dim)
        self.alpha_c = check_positive("alpha_c", alpha_c)
        self.log_threshold = math.log1p(self.alpha_c)
        self.gram = np.zeros((self.n_users, self.dim, self.dim))
        self.moment = np.zeros((self.n_users, self.dim))
        self.count = np.zeros(self.n_users, dtype=np.int64)
        self.trigger_inv = np.tile(np.eye(self.dim) / check_positive("lam", lam),
                                   (self.n_users, 1, 1))
        self.gain = np.zeros(self.n_users)

    def add(self, agent: int, observed: np.ndarray, clicked: int | None) -> None:
        """Buffer the observed items (m, d) of one round; `clicked` is the row clicked or None."""
        self.gram[agent] += observed.T @ observed
        if clicked is not None:
            self.moment[agent] += observed[clicked]
        self.count[agent] += observed.shape[0]
        inv = self.trigger_inv[agent]
        gain = 0.0
        for x in observed:  # at most K rank-one steps: sequential by definition
            gain += math.log1p(sherman_morrison(inv, x))  # determinant lemma
        self.gain[agent] += gain

    def exceeded(self, agent: int) -> bool:
        """det(Sigma_u + Sigma_loc) > (1 + alpha_c) det(Sigma_u), from the tracked log-ratio."""
        return bool(self.gain[agent] > self.log_threshold)

    def take(self, agent: int) -> tuple[np.ndarray, np.ndarray, int]:
        """The buffered (Sigma_loc, b_loc, T_loc) of `agent`, as copies (the upload)."""
        return self.gram[agent].copy(), self.moment[agent].copy(), int(self.count[agent])

    def reset(self, agent: int, decision_inv: np.ndarray) -> None:
        """Empty the buffer after an upload; the trigger restarts from the new Sigma_u^-1."""
        self.gram[agent] = 0.0
        self.moment[agent] = 0.0
        self.count[agent] = 0
        self.trigger_inv[agent] = decision_inv
        self.gain[agent] = 0.0
