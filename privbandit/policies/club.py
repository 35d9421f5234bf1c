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

from accounting.validation import check_positive

from ..errors import ShapeError, config_error
from ..kernels import UserGraph, club_confidence, ucb_scores
from .base import Policy, check_action, check_dim, check_items, check_reward, check_user
from .radius import ConfidenceRadius
from .ridge import RidgeModels


class CLUB(Policy):
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
        delta: float = 0.1,
        theta_bound: float = 1.0,
        item_bound: float | None = 1.0,
    ) -> None:
        self.dim = check_dim("dim", dim)
        self.n_users = check_dim("n_users", n_users)
        self.alpha = check_positive("alpha", alpha)
        if graph is None:
            graph = UserGraph.complete(self.n_users)
        elif not isinstance(graph, UserGraph):
            raise config_error("graph", graph, "None or a kernels.UserGraph")
        elif graph.n != self.n_users:
            raise ShapeError(f"graph must have n_users={self.n_users} nodes; got {graph.n}")
        self.graph = graph
        self.radius = ConfidenceRadius(beta, beta_scale, noise_scale, delta, theta_bound)
        self.item_bound = None if item_bound is None else check_positive("item_bound", item_bound)
        self.users = RidgeModels(self.n_users, self.dim, lam)
        # pooled statistics of each component, stored at the slot of its label
        self.clusters = RidgeModels(self.n_users, self.dim, lam)
        self._rebuild(np.arange(self.n_users))
        self._checked: np.ndarray | None = None

    def _rebuild(self, members: np.ndarray) -> None:
        """Recompute the pooled statistics of every component among `members`."""
        labels = self.graph.labels[members]
        for label in np.unique(labels):
            self.clusters.set(label, *self.users.pooled(members[labels == label]))

    def scores(self, items: np.ndarray, user: int) -> np.ndarray:
        """UCBs of the K items from the pooled data of `user`'s component, (K,)."""
        c = self.graph.labels[check_user(user, self.n_users)]
        self._checked = items = check_items(items, self.dim, self.item_bound)
        m = self.clusters
        beta = self.radius(float(m.logdet[c]), m.lam)
        return ucb_scores(m.theta[c], m.inv[c], items, beta)

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        """Index of the highest UCB (lowest index on ties)."""
        return int(np.argmax(self.scores(items, user)))

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Add the observation to the user and its component, then prune the user's edges."""
        user = check_user(user, self.n_users)
        if items is not self._checked:
            items = check_items(items, self.dim, self.item_bound)
        self._checked = None
        x = items[check_action(action, items.shape[0])]
        reward = check_reward(feedback)
        self.users.add(user, x, reward)
        component = self.graph.component(user)
        self.clusters.add(self.graph.labels[user], x, reward)
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
