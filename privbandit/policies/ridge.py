"""`RidgeModels`: a batch of ridge-regression models kept as inverses.

Model m holds V_m = lam I + sum x x^T (stored as its inverse), b_m = sum r x,
theta_m = V_m^-1 b_m, ln(det V_m / det(lam I)) and its sample count.  Every
update is one Sherman-Morrison step and one determinant-lemma step, O(d^2).
Shared by LinUCB, LinTS, CLUB, SCLUB and the federated algorithms.
"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from privbandit.accounting.validation import check_positive

from ..errors import config_error
from ..kernels import sherman_morrison
from ..validation import check_dim


class RidgeModels:
    """n_models ridge regressions in dimension dim with regulariser lam.

    Arrays (read them, do not write them): gram (n, d, d) = V (None unless
    `track_gram`), inv (n, d, d)
    = V^-1, b (n, d), theta (n, d), logdet (n,) = ln(det V / det(lam I)),
    count (n,) int.
    """

    def __init__(
        self, n_models: int, dim: int, lam: float = 1.0, *, track_gram: bool = True
    ) -> None:
        self.n_models = check_dim("n_models", n_models)
        self.dim = check_dim("dim", dim)
        self.lam = check_positive("lam", lam)
        # V itself is only kept when asked for (aggregation by CLUB/SCLUB, federation)
        self.gram = (
            np.tile(np.eye(self.dim) * self.lam, (self.n_models, 1, 1)) if track_gram else None
        )
        self.inv = np.tile(np.eye(self.dim) / self.lam, (self.n_models, 1, 1))
        self.b = np.zeros((self.n_models, self.dim))
        self.theta = np.zeros((self.n_models, self.dim))
        self.logdet = np.zeros(self.n_models)
        self.count = np.zeros(self.n_models, dtype=np.int64)

    def arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        """Its arrays by name, each name after `prefix` (gram only when tracked): a policy's
        part of `Policy.replicate_state`."""
        names = ("gram", "inv", "b", "theta", "logdet", "count")
        return {prefix + name: getattr(self, name) for name in names
                if getattr(self, name) is not None}

    def adopt(self, views: Mapping[str, np.ndarray], prefix: str = "") -> None:
        """Keep the arrays named in `views` (as by `arrays(prefix)`; other names are
        skipped) in those views from now on: a policy's part of
        `Policy.bind_replicate_state`, which checks them."""
        for name in self.arrays(prefix):
            if name in views:
                setattr(self, name[len(prefix):], views[name])

    def add(self, m: int, x: np.ndarray, reward: float) -> None:
        """Add the observation (x, reward) to model m: O(d^2)."""
        inv = self.inv[m]
        quad = sherman_morrison(inv, x)
        if self.gram is not None:
            self.gram[m] += np.multiply.outer(x, x)
        b = self.b[m]
        b += reward * x
        np.matmul(inv, b, out=self.theta[m])  # theta = V^-1 b, cached for scoring
        self.logdet[m] += math.log1p(quad)  # determinant lemma
        self.count[m] += 1

    def set(self, m: int, gram: np.ndarray, b: np.ndarray, count: int) -> None:
        """Replace model m by the statistics (V, b, count): one inversion, O(d^3).

        Used when clusters split or merge, never on the per-round path.
        """
        self.inv[m] = np.linalg.inv(gram)
        if self.gram is not None:
            self.gram[m] = gram
        self.b[m] = b
        self.theta[m] = self.inv[m] @ b
        _, logabs = np.linalg.slogdet(gram)
        self.logdet[m] = logabs - self.dim * math.log(self.lam)
        self.count[m] = count

    def pooled(self, members: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """(V, b, count) of the pooled data of models `members`: lam I + sum (V_j - lam I).

        Needs `track_gram`.
        """
        if self.gram is None:
            raise config_error("track_gram", False, "True to pool models")
        members = np.asarray(members, dtype=np.intp)
        gram = self.gram[members].sum(axis=0) - (members.size - 1) * self.lam * np.eye(self.dim)
        return gram, self.b[members].sum(axis=0), int(self.count[members].sum())
