"""`CascadeClusterOracle` ("oracle-cascade"): the ceiling of federated cascades, not an algorithm.

It is told the world's hidden clusters and runs one cascading UCB (FedInd's
agent: capped UCB scores, the exact top-K list, a ridge model of the examined
items updated every round) per TRUE cluster, fed by every agent of that
cluster from the first round.  That is what a federation with perfect,
instant cluster detection and free sharing would play, so its regret is the
floor any federated cascade can reach in that world, and FedInd's minus its
regret is the most federation can gain (docs/cascade.md reads FGR against it).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..clustering import true_clusters
from ..comm import CommLog
from ..policies.base import Policy
from ..validation import check_user
from .algorithm import IndependentCascadeUCB


class CascadeClusterOracle(Policy):
    """ORACLE -- reads the world's hidden clusters: FedInd's cascading UCB pooled per TRUE
    cluster.

    clusters: (n_users,) the world's true cluster of each agent
    (`Environment.true_clusters()`, hidden from every real algorithm); the other
    arguments and keywords as `IndependentCascadeUCB` (its radius: one agent's, beta
    constant).  A run reports cluster error 0 and no communication; `params()` say
    "oracle": True.

    Privacy guarantee: none, and not an algorithm: it reads hidden structure.
    """

    name = "oracle-cascade"

    def __init__(self, dim: int, clusters: np.ndarray, n_items: int, list_len: int,
                 horizon: int, **radius: Any) -> None:
        self._truth, self.cluster_of = true_clusters(clusters, "agent")
        self.n_users = int(self._truth.size)
        self.model = IndependentCascadeUCB(dim, int(self.cluster_of.max()) + 1, n_items,
                                           list_len, horizon, **radius)
        self._log = CommLog()

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator
               ) -> np.ndarray:
        return self.model.select(items, int(self.cluster_of[check_user(user, self.n_users)]),
                                 t, rng)

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        self.model.update(items, int(self.cluster_of[check_user(user, self.n_users)]), action,
                          feedback, t)

    @property
    def comm(self) -> CommLog:
        return self._log

    def comm_details(self) -> dict[str, Any]:
        return {"triggers": {}}  # pools by fiat: no message

    def cluster_labels(self) -> np.ndarray:
        return self._truth.copy()

    def params(self) -> dict[str, Any]:
        return {**self.model.params(), "n_users": self.n_users,
                "n_clusters": int(self.model.n_users), "oracle": True}
