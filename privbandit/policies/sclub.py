"""SCLUB: set-based clustering of bandits with split and merge (Li, Chen, Li, Leung 2019).

Clusters are sets of users (no graph).  Time runs in stages; stage s lasts
2^s rounds (s = 1, 2, ...), and at its start every user and every cluster is
marked unchecked and each cluster's estimate and count are frozen as the
stage's reference (theta_ref, T_ref).  At round t, the served user i in
cluster V is recommended the UCB item of V's pooled data; after the feedback:

- split: i leaves V for a new singleton cluster if
  ||theta_i - theta_ref(V)|| > alpha (F(T_i) + F(T_ref(V)))  or  some l in V has
  |p_i - p_l| > 2 alpha_p F(t), with p_i = T_i / t the arrival frequency;
- i is marked checked; when every member of i's cluster V' is checked, V' is
  checked and merges with every other checked cluster W such that
  ||theta(V') - theta(W)|| < (alpha / 2) (F(T(V')) + F(T(W)))  and
  |p(V') - p(W)| < alpha_p F(t), with p(V) = T(V) / (|V| t).

F(T) = sqrt((1 + ln(1 + T)) / (1 + T)).  alpha = 1.5, alpha_p = 1 and
doubling stages follow the FCLUB public code's SCLUB baseline (seed 000).
A cluster created by a split or a merge takes its estimate and count at
creation as its stage reference.  A new cluster takes the smallest free slot
as its label.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.validation import check_positive

from ..kernels import club_confidence
from .base import check_user
from .pooled import PooledClusterPolicy
from .radius import ConfidenceRadius


class SCLUB(PooledClusterPolicy):
    """SCLUB with split/merge of user sets; see the module docstring.

    dim, n_users: sizes; alpha: split/merge factor on estimates; alpha_p:
    factor on arrival frequencies; beta and the radius keywords as in `LinUCB`.

    Shapes: items (K, d) with ||x_k|| <= item_bound; select returns an int;
    `cluster_labels()` gives each user's cluster slot.

    Privacy guarantee: none (a non-private baseline); it reads raw rewards.
    """

    name = "sclub"

    def __init__(
        self,
        dim: int,
        n_users: int,
        *,
        alpha: float = 1.5,
        alpha_p: float = 1.0,
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
        self.alpha_p = check_positive("alpha_p", alpha_p)
        n = self.n_users
        self.label = np.zeros(n, dtype=np.intp)  # every user starts in slot 0
        self.size = np.zeros(n, dtype=np.int64)
        self.size[0] = n
        self.user_checked = np.zeros(n, dtype=bool)
        self.ref_theta = np.zeros((n, self.dim))
        self.ref_count = np.zeros(n, dtype=np.int64)
        self.stage = 0
        self._stage_end = 0  # first round of the next stage

    def _cluster(self, user: int) -> int:
        return self.label[user]

    # -- learning ----------------------------------------------------------
    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Add the observation, then split the user off or merge its cluster if the tests say so."""
        user = check_user(user, self.n_users)
        x, reward = self._observation(items, action, feedback)
        if t >= self._stage_end:
            self._new_stage(t)
        self._add(user, x, reward)
        rounds = t + 1
        self.user_checked[user] = True
        if self._should_split(user, rounds):
            self._split(user)
        c = self.label[user]
        if self.user_checked[self.label == c].all():
            self._merge(c, rounds)

    def _new_stage(self, t: int) -> None:
        while t >= self._stage_end:
            self.stage += 1
            self._stage_end += 2**self.stage
        self.user_checked[:] = False
        self.ref_theta[:] = self.clusters.theta
        self.ref_count[:] = self.clusters.count

    def _should_split(self, user: int, rounds: int) -> bool:
        c = self.label[user]
        if self.size[c] == 1:
            return False
        u = self.users
        limit = self.alpha * (club_confidence(u.count[user]) + club_confidence(self.ref_count[c]))
        if np.linalg.norm(u.theta[user] - self.ref_theta[c]) > limit:
            return True
        freq = u.count[self.label == c] / rounds
        p = u.count[user] / rounds
        spread = max(abs(p - freq.max()), abs(p - freq.min()))
        return bool(spread > 2.0 * self.alpha_p * club_confidence(rounds))

    def _split(self, user: int) -> None:
        old = self.label[user]
        new = int(np.flatnonzero(self.size == 0)[0])
        self.label[user] = new
        self.size[old] -= 1
        self.size[new] = 1
        self.clusters.set(old, *self.users.pooled(np.flatnonzero(self.label == old)))
        self.clusters.set(new, *self.users.pooled(np.array([user])))
        self.ref_theta[new] = self.users.theta[user]
        self.ref_count[new] = self.users.count[user]

    def _merge(self, c: int, rounds: int) -> None:
        unchecked = np.bincount(self.label[~self.user_checked], minlength=self.n_users)
        others = np.flatnonzero((self.size > 0) & (unchecked == 0))
        others = others[others != c]
        if others.size == 0:
            return
        m = self.clusters
        close = np.linalg.norm(m.theta[others] - m.theta[c], axis=1) < (self.alpha / 2) * (
            club_confidence(m.count[c]) + club_confidence(m.count[others])
        )
        freq = m.count / (np.maximum(self.size, 1) * rounds)
        similar = np.abs(freq[others] - freq[c]) < self.alpha_p * club_confidence(rounds)
        partners = others[close & similar]
        if partners.size == 0:
            return
        group = np.concatenate(([c], partners))
        target = int(group.min())
        members = np.flatnonzero(np.isin(self.label, group))
        self.label[members] = target
        self.size[group] = 0
        self.size[target] = members.size
        self.clusters.set(target, *self.users.pooled(members))
        self.ref_theta[target] = m.theta[target]
        self.ref_count[target] = m.count[target]

    def cluster_labels(self) -> np.ndarray:
        return self.label.copy()

    def params(self) -> dict[str, Any]:
        return {
            "dim": self.dim, "n_users": self.n_users, "alpha": self.alpha,
            "alpha_p": self.alpha_p, "lam": self.users.lam, "item_bound": self.item_bound,
            **self.radius.params(),
        }
