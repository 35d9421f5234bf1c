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

Replicates in lockstep (`runtime.lockstep`): `BatchedSCLUB` scores, updates
and runs the split and merge tests of R replicates in one vectorized pass;
a replicate whose test fires splits or merges through its own object.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_positive

from ..kernels import club_confidence, ucb_scores
from ..validation import check_user
from .base import Policy
from .club import BatchedPooled, add_rows
from .lockstep import check_replicates, part, stack_state
from .pooled import PooledClusterPolicy
from .radius import ConfidenceRadius

_SETS = ("label", "size", "user_checked", "ref_theta", "ref_count")  # the clusters as sets


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
            self.start_stage(t)
        self._add(user, x, reward)
        rounds = t + 1
        self.user_checked[user] = True
        if self._should_split(user, rounds):
            self.split(user)
        c = self.label[user]
        if self.user_checked[self.label == c].all():
            self.merge(c, rounds)

    @property
    def stage_end(self) -> int:
        """The first round of the next stage."""
        return self._stage_end

    def start_stage(self, t: int) -> None:
        """Start the stage holding round t (at or after `stage_end`): unmark every user and
        freeze the clusters' references (what `update` does at a stage's first round)."""
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

    def split(self, user: int) -> None:
        """Move `user` from its cluster to a new singleton cluster (the split step of
        `update`, when the split test fires)."""
        old = self.label[user]
        new = int(np.flatnonzero(self.size == 0)[0])
        self.label[user] = new
        self.size[old] -= 1
        self.size[new] = 1
        self.clusters.set(old, *self.users.pooled(np.flatnonzero(self.label == old)))
        self.clusters.set(new, *self.users.pooled(np.array([user])))
        self.ref_theta[new] = self.users.theta[user]
        self.ref_count[new] = self.users.count[user]

    def merge(self, c: int, rounds: int) -> None:
        """Merge the checked cluster c with every other checked cluster the merge test
        finds close, after `rounds` rounds (the merge step of `update`)."""
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

    def replicate_state(self) -> dict[str, np.ndarray]:
        """The models' arrays and the cluster sets' arrays "label", "size",
        "user_checked", "ref_theta", "ref_count" (`Policy.replicate_state`)."""
        return {**super().replicate_state(), **{name: getattr(self, name) for name in _SETS}}

    def _bind_views(self, views: dict[str, np.ndarray]) -> None:
        super()._bind_views(views)
        for name in _SETS:
            if name in views:
                setattr(self, name, views[name])

    def params(self) -> dict[str, Any]:
        return {
            "dim": self.dim, "n_users": self.n_users, "alpha": self.alpha,
            "alpha_p": self.alpha_p, "lam": self.users.lam, "item_bound": self.item_bound,
            **self.radius.params(),
        }


class BatchedSCLUB(BatchedPooled):
    """`SCLUB` replicates in lockstep (see the module docstring).

    Stage starts run through each replicate's own object on views of the
    stacked arrays; per round the split test of the served user and the
    merge test of its cluster run for all replicates at once, with the
    arithmetic of `SCLUB._should_split` and `SCLUB.merge`, and only the
    replicates whose test fires split or merge.  `scores` and `learn` serve
    some rows only, each with its own round index (a batched caller holding
    one SCLUB per server: `fclub.lockstep.BatchedPerServer`).
    """

    def __init__(self, policies: Sequence[Policy]) -> None:
        super().__init__(check_replicates(policies, SCLUB))
        first = self.policies[0]
        self.radius, self.lam = first.radius, first.users.lam
        self.alpha, self.alpha_p = first.alpha, first.alpha_p
        stacked = stack_state(self.policies)
        self.users, self.clusters = part(stacked, "users."), part(stacked, "clusters.")
        self.label, self.size = stacked["label"], stacked["size"]
        self.user_checked = stacked["user_checked"]
        self.ref_theta, self.ref_count = stacked["ref_theta"], stacked["ref_count"]
        self.stage_end = np.array([p.stage_end for p in self.policies], dtype=np.int64)

    def update(self, items: np.ndarray, users: np.ndarray, actions: np.ndarray,
               rewards: np.ndarray, t: int) -> None:
        r = self.replicates
        self.learn(r, users, items[r, actions], rewards, np.full(r.size, t))

    # -- rows of replicates ----------------------------------------------------------------
    def scores(self, which: np.ndarray, items: np.ndarray, users: np.ndarray) -> np.ndarray:
        """UCBs (Q, K) from the cluster models of users (Q,) of rows `which` (Q,)."""
        m = self.clusters
        c = self.label[which, users]
        beta = self.radius.many(m["logdet"][which, c], self.lam)
        return ucb_scores(m["theta"][which, c], m["inv"][which, c], items, beta[:, None])

    def learn(self, which: np.ndarray, users: np.ndarray, x: np.ndarray, y: np.ndarray,
              ts: np.ndarray) -> None:
        """`SCLUB.update` of rows `which` (distinct) at their rounds ts (Q,)."""
        for k in np.flatnonzero(ts >= self.stage_end[which]).tolist():
            policy = self.policies[which[k]]
            policy.start_stage(int(ts[k]))
            self.stage_end[which[k]] = policy.stage_end
        add_rows(self.users, which, users, x, y)
        add_rows(self.clusters, which, self.label[which, users], x, y)
        rounds = ts + 1
        self.user_checked[which, users] = True
        for k in np.flatnonzero(self._should_split(which, users, rounds)).tolist():
            self.policies[which[k]].split(int(users[k]))
        c = self.label[which, users]
        members = self.label[which] == c[:, None]
        ready = ~(members & ~self.user_checked[which]).any(axis=1)
        for k in np.flatnonzero(ready & self._can_merge(which, c, rounds)).tolist():
            self.policies[which[k]].merge(int(c[k]), int(rounds[k]))

    def _should_split(self, which: np.ndarray, users: np.ndarray, rounds: np.ndarray
                      ) -> np.ndarray:
        """`SCLUB._should_split` of the served users of rows `which`, (Q,) bool."""
        u, q = self.users, np.arange(which.size)
        label = self.label[which]
        c = label[q, users]
        count = u["count"][which]
        limit = self.alpha * (club_confidence(count[q, users])
                              + club_confidence(self.ref_count[which, c]))
        far = np.linalg.norm(u["theta"][which, users] - self.ref_theta[which, c],
                             axis=-1) > limit
        members = label == c[:, None]
        freq = count / rounds[:, None]
        p = count[q, users] / rounds
        high = np.where(members, freq, -np.inf).max(axis=1)
        low = np.where(members, freq, np.inf).min(axis=1)
        spread = np.maximum(np.abs(p - high), np.abs(p - low))
        return (self.size[which, c] != 1) & (far | (spread > 2.0 * self.alpha_p
                                                   * club_confidence(rounds)))

    def _can_merge(self, which: np.ndarray, c: np.ndarray, rounds: np.ndarray) -> np.ndarray:
        """Whether `SCLUB.merge(c)` finds a partner, for rows `which`, (Q,) bool."""
        q = np.arange(which.size)
        label, size = self.label[which], self.size[which]
        rr, jj = np.nonzero(~self.user_checked[which])
        unchecked = np.zeros(label.shape, dtype=bool)
        unchecked[rr, label[rr, jj]] = True
        others = (size > 0) & ~unchecked
        others[q, c] = False
        theta, count = self.clusters["theta"][which], self.clusters["count"][which]
        conf = club_confidence(count)
        close = np.linalg.norm(theta - theta[q, c][:, None, :], axis=-1) < (self.alpha / 2) * (
            conf[q, c][:, None] + conf)
        freq = count / (np.maximum(size, 1) * rounds[:, None])
        similar = np.abs(freq - freq[q, c][:, None]) < (self.alpha_p
                                                        * club_confidence(rounds))[:, None]
        return (others & close & similar).any(axis=1)
