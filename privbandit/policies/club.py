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

Replicates in lockstep (`runtime.lockstep`): `BatchedCLUB` plays R CLUB
replicates round by round in one vectorized pass -- scores, argmax, the
user's and its component's rank-one updates and the edge test against every
neighbour -- on stacked arrays the replicates' models and graphs are views
of; an edge deletion (and the rebuild of a split component) is the
replicate's own step, rare once the graph has settled.
"""
from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ShapeError, config_error
from ..kernels import UserGraph, club_confidence, sherman_morrison, ucb_scores
from ..validation import check_user
from .base import Policy
from .lockstep import BatchedPolicy, check_replicates, part, stack_state
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
        self.rebuild(np.arange(self.n_users))

    def rebuild(self, members: np.ndarray) -> None:
        """Recompute the pooled statistics of every component among `members` (after a
        split of the component they formed: `update`, or a batched twin's edge deletion)."""
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
            self.rebuild(component)

    def cluster_labels(self) -> np.ndarray:
        return self.graph.labels.copy()

    def replicate_state(self) -> dict[str, np.ndarray]:
        """The models' arrays and the graph's, "graph.adjacency" and "graph.labels"
        (`Policy.replicate_state`)."""
        graph = self.graph
        return {**super().replicate_state(), "graph.adjacency": graph.adjacency,
                "graph.labels": graph.labels}

    def _bind_views(self, views: dict[str, np.ndarray]) -> None:
        super()._bind_views(views)
        self.graph.adopt(views.get("graph.adjacency"), views.get("graph.labels"))

    def params(self) -> dict[str, Any]:
        return {
            "dim": self.dim, "n_users": self.n_users, "alpha": self.alpha,
            "lam": self.users.lam, "item_bound": self.item_bound, **self.radius.params(),
        }


def add_rows(models: dict[str, np.ndarray], r: np.ndarray, rows: np.ndarray, x: np.ndarray,
             y: np.ndarray) -> None:
    """`RidgeModels.add` of (x[i], y[i]) to model rows[i] of replicate r[i], batched."""
    inv = models["inv"][r, rows]
    quad = sherman_morrison(inv, x)
    models["inv"][r, rows] = inv
    models["gram"][r, rows] += x[:, :, None] * x[:, None, :]
    b = models["b"][r, rows] + y[:, None] * x
    models["b"][r, rows] = b
    models["theta"][r, rows] = np.matmul(inv, b[..., None])[..., 0]
    models["logdet"][r, rows] += np.log1p(quad)
    models["count"][r, rows] += 1


class BatchedPooled(BatchedPolicy):
    """Replicates of a pooled cluster policy in lockstep: each plays the best of the UCBs
    its subclass's `scores` gives for rows of replicates (CLUB, SCLUB)."""

    def select(self, items: np.ndarray, users: np.ndarray, t: int,
               rngs: Sequence[np.random.Generator]) -> np.ndarray:
        return self.scores(self.replicates, items, users).argmax(axis=1)

    @abstractmethod
    def scores(self, which: np.ndarray, items: np.ndarray, users: np.ndarray) -> np.ndarray:
        """UCBs (Q, K) of items (Q, K, d) for users (Q,) of the replicates `which` (Q,)."""


class BatchedCLUB(BatchedPooled):
    """`CLUB` replicates in lockstep (see the module docstring).

    Per round and replicate: the served user's component model scores the
    items; the observation updates the user's and the component's model; the
    user's edges to neighbours whose estimates are far (eq. 3's threshold) are
    found for every replicate at once, and only the replicates with such an
    edge delete it (and rebuild a split component) through their own graph.
    """

    def __init__(self, policies: Sequence[Policy]) -> None:
        super().__init__(check_replicates(policies, CLUB))
        first = self.policies[0]
        self.radius, self.lam, self.alpha = first.radius, first.users.lam, first.alpha
        stacked = stack_state(self.policies)  # the graphs edit their views in place
        self.users, self.clusters = part(stacked, "users."), part(stacked, "clusters.")
        self.adj, self.labels = stacked["graph.adjacency"], stacked["graph.labels"]
        self._c = np.zeros(len(self.policies), dtype=np.intp)

    def update(self, items: np.ndarray, users: np.ndarray, actions: np.ndarray,
               rewards: np.ndarray, t: int) -> None:
        self.learn(self.replicates, users, items[self.replicates, actions], rewards)

    # -- rows of replicates (a batched caller may serve some of its CLUBs only) ------------
    def scores(self, which: np.ndarray, items: np.ndarray, users: np.ndarray) -> np.ndarray:
        """UCBs (Q, K) of items (Q, K, d) from the component models of users (Q,) of the
        replicates `which` (Q,) (`PooledClusterPolicy.scores`, batched)."""
        m = self.clusters
        self._c = c = self.labels[which, users]
        beta = self.radius.many(m["logdet"][which, c], self.lam)
        return ucb_scores(m["theta"][which, c], m["inv"][which, c], items, beta[:, None])

    def learn(self, which: np.ndarray, users: np.ndarray, x: np.ndarray, y: np.ndarray,
              ts: np.ndarray | None = None) -> None:
        """`CLUB.update` of replicates `which` (distinct, as scored last) with contexts x
        (Q, d) and rewards y (Q,); CLUB does not read the round indices ts."""
        add_rows(self.users, which, users, x, y)
        add_rows(self.clusters, which, self._c, x, y)
        self._prune(which, users)

    def _prune(self, which: np.ndarray, users: np.ndarray) -> None:
        """`CLUB._prune` for every replicate: the far neighbours, then each replicate with
        one deletes its edges (and rebuilds its component if it split)."""
        theta = self.users["theta"][which]
        gaps = np.linalg.norm(theta - theta[np.arange(which.size), users][:, None, :], axis=-1)
        conf = club_confidence(self.users["count"][which])
        limits = self.alpha * (conf[np.arange(which.size), users][:, None] + conf)
        far = self.adj[which, users] & (gaps > limits)
        for k in np.flatnonzero(far.any(axis=1)).tolist():
            policy, user = self.policies[which[k]], int(users[k])
            component = policy.graph.component(user)
            if policy.graph.delete_edges(user, np.flatnonzero(far[k])):
                policy.rebuild(component)
