"""CLUB: online clustering of bandits on a user graph (Gentile, Li, Zappella 2014).

Each user i keeps ridge statistics (V_i, b_i, theta_i, T_i).  Users are the
nodes of a graph (complete at the start, or a sparse random graph); the
connected components are the detected clusters.  At round t the served user
i is recommended the item maximising the UCB computed from the pooled data of
its component, V = lam I + sum_j (V_j - lam I), b = sum_j b_j.  After the
feedback, the edge (i, j) is deleted for every neighbour j with

    ||theta_i - theta_j|| > alpha (F(T_i) + F(T_j)),   F(T) = sqrt((1 + ln(1 + T)) / (1 + T))

(the threshold form of seed 000's eq. 3, as in the FCLUB public code; alpha = 1.5
there).  Component statistics are kept incrementally (Sherman-Morrison) and
rebuilt only for the parts of a component that splits.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError, config_error
from ..kernels import UserGraph, club_confidence
from .base import check_user
from .pooled import PooledClusterPolicy
from .radius import ConfidenceRadius


class CLUB(PooledClusterPolicy):
    """CLUB with graph-based cluster detection; see the module docstring.

    dim, n_users: sizes; alpha: edge-deletion factor; graph: the initial user
    graph (`kernels.UserGraph`; default complete, or e.g.
    `UserGraph.random(n, 3 ln n / n, rng)` as Gentile et al. suggest); beta
    and the other radius keywords as in `LinUCB` (`ConfidenceRadius`).

    Shapes: items (K, d) with ||x_k|| <= item_bound; select returns an int;
    `cluster_labels()` gives each user's component label (its smallest member).

    Privacy guarantee: none (a non-private baseline); it reads raw rewards.
    """

    name = "club"

    def __init__(
        self,
        dim: int,
        n_users: int,
        *,
        alpha: float = 1.5,
        graph: UserGraph | None = None,
        beta: float | str = "oful",
        beta_scale: float = 1.0,
        lam: float = 1.0,
        noise_scale: float = 0.5,
        confidence: float = 0.1,
        theta_bound: float = 1.0,
        item_bound: float | None = 1.0,
    ) -> None:
        radius = ConfidenceRadius(beta, beta_scale, noise_scale, confidence, theta_bound)
        super().__init__(dim, n_users, alpha, radius, lam, item_bound)
        if graph is None:
            graph = UserGraph.complete(self.n_users)
        elif not isinstance(graph, UserGraph):
            raise config_error("graph", graph, "None or a kernels.UserGraph")
        elif graph.n != self.n_users:
            raise ShapeError(f"graph must have n_users={self.n_users} nodes; got {graph.n}")
        self.graph = graph
        self._rebuild(np.arange(self.n_users))

    def _rebuild(self, members: np.ndarray) -> None:
        """Recompute the pooled statistics of every component among `members`."""
        labels = self.graph.labels[members]
        for label in np.unique(labels):
            self.clusters.set(label, *self.users.pooled(members[labels == label]))

    def _cluster(self, user: int) -> int:
        return self.graph.labels[user]

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Add the observation to the user and its component, then prune the user's edges."""
        user = check_user(user, self.n_users)
        x, reward = self._observation(items, action, feedback)
        component = self.graph.component(user)
        self._add(user, x, reward)
        self._prune(user, component)

    def _prune(self, user: int, component: np.ndarray) -> None:
        nbrs = self.graph.neighbors(user)
        if nbrs.size == 0:
            return
        u = self.users
        gaps = np.linalg.norm(u.theta[nbrs] - u.theta[user], axis=1)
        limits = self.alpha * (club_confidence(u.count[user]) + club_confidence(u.count[nbrs]))
        far = nbrs[gaps > limits]
        if far.size and self.graph.delete_edges(user, far):
            self._rebuild(component)

    def cluster_labels(self) -> np.ndarray:
        return self.graph.labels.copy()

    def params(self) -> dict[str, Any]:
        return {
            "dim": self.dim, "n_users": self.n_users, "alpha": self.alpha,
            "lam": self.users.lam, "item_bound": self.item_bound, **self.radius.params(),
        }
