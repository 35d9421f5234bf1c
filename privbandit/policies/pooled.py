"""`PooledClusterPolicy`: what CLUB and SCLUB share.

Each user keeps ridge statistics (`users`); each detected cluster keeps the
pooled statistics of its members (`clusters`, at the slot of its label).  The
served user gets the UCB item of its cluster's pooled model, and every
observation is added to both the user's and its cluster's model.  How clusters
are found (a graph, or split and merge of sets) is the subclass's part.
"""
from __future__ import annotations

from abc import abstractmethod

import numpy as np

from privbandit.accounting.validation import check_positive

from ..kernels import ucb_scores
from ..validation import check_user
from .base import CheckedItemsPolicy
from .radius import ConfidenceRadius
from .ridge import RidgeModels


class PooledClusterPolicy(CheckedItemsPolicy):
    """Per-user and per-cluster ridge models and the cluster UCB.

    dim, n_users, item_bound: as in `CheckedItemsPolicy`; alpha: the
    subclass's cluster-test factor (> 0); radius: the UCB radius; lam: the
    ridge regulariser.  Subclasses implement `_cluster(user)`.
    """

    def __init__(
        self,
        dim: int,
        n_users: int,
        alpha: float,
        radius: ConfidenceRadius,
        lam: float,
        item_bound: float | None,
    ) -> None:
        super().__init__(dim, n_users, item_bound)
        self.alpha = check_positive("alpha", alpha)
        self.radius = radius
        self.users = RidgeModels(self.n_users, self.dim, lam)
        self.clusters = RidgeModels(self.n_users, self.dim, lam)  # pooled statistics, by slot

    @abstractmethod
    def _cluster(self, user: int) -> int:
        """The cluster slot of (already checked) `user`."""

    def replicate_state(self) -> dict[str, np.ndarray]:
        """The users' and clusters' model arrays, "users.inv", ..., "clusters.inv", ...
        (`Policy.replicate_state`)."""
        return {**self.users.arrays("users."), **self.clusters.arrays("clusters.")}

    def _bind_views(self, views: dict[str, np.ndarray]) -> None:
        self.users.adopt(views, "users.")
        self.clusters.adopt(views, "clusters.")

    def scores(self, items: np.ndarray, user: int) -> np.ndarray:
        """UCBs of the K items from the pooled data of `user`'s cluster, (K,)."""
        c = self._cluster(check_user(user, self.n_users))
        items = self._check_round_items(items)
        m = self.clusters
        beta = self.radius(float(m.logdet[c]), m.lam)
        return ucb_scores(m.theta[c], m.inv[c], items, beta)

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        """Index of the highest UCB (lowest index on ties)."""
        return int(np.argmax(self.scores(items, user)))

    def _add(self, user: int, x: np.ndarray, reward: float) -> None:
        """Add the observation to the user's model and to its cluster's pooled model."""
        self.users.add(user, x, reward)
        self.clusters.add(self._cluster(user), x, reward)
