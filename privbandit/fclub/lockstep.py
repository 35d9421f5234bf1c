"""FCLUB-DC replicates in lockstep (`runtime.lockstep`): one vectorized pass per round.

Each replicate is a `FederatedClub` (non-private, delayed sync, detection on:
"fclub-dc"); the per-round work of all replicates -- the served local
cluster's UCB scores and argmax, the Sherman-Morrison update of its model and
the upload trigger of eq. 5 -- runs batched over replicates, on stacked
arrays the replicates' own models, synchronized log-determinants, user
layouts and phase buffers are views of.  What depends on each replicate's
data stays its own, in rare Python steps through its own object: phase
starts (detection, merge, renewal), uploads and the downloads they trigger.
So every replicate makes the decisions its separate run makes.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..kernels import sherman_morrison, ucb_scores
from ..policies.lockstep import BatchedPolicy, check_replicates
from ..validation import check_items
from .algorithm import FederatedClub


class BatchedFederatedClub(BatchedPolicy):
    """`FederatedClub` ("fclub-dc") replicates in lockstep; see the module docstring."""

    def __init__(self, policies: Sequence[FederatedClub]) -> None:
        super().__init__(check_replicates(policies, FederatedClub))
        first = self.policies[0]
        cfg = first.config
        self.dim, self.n, self.lam = cfg.dim, cfg.n_users, cfg.lam
        self.radius = cfg.radius()
        self._log_lam = cfg.dim * math.log(cfg.lam)
        self._ln_u = math.log(cfg.upload_threshold)
        rep, n, d = len(self.policies), cfg.n_users, cfg.dim
        # at most one local cluster per user: room for every layout a renewal makes
        self.inv = np.zeros((rep, n, d, d))
        self.b = np.zeros((rep, n, d))
        self.logdet = np.zeros((rep, n))
        self.count = np.zeros((rep, n), dtype=np.int64)
        self.logdet_s = np.zeros((rep, n))
        self.local = np.zeros((rep, n), dtype=np.intp)
        for r, p in enumerate(self.policies):
            self.local[r] = p._local_of_user
            p._local_of_user = self.local[r]
        self._bound: list[object] = [None] * rep
        self._rows = np.empty((rep, 0, d + 1))
        self._row_users = np.empty((rep, 0), dtype=np.intp)
        self._i = 0  # rows of the phase buffers filled
        self._c = np.zeros(rep, dtype=np.intp)
        self._inv = self.inv[:, 0]
        self._rngs: Sequence[np.random.Generator] = ()

    def check_items(self, items: np.ndarray) -> None:
        cfg = self.policies[0].config
        check_items(items, cfg.dim, cfg.item_bound)

    # -- phases: each replicate's own, then its new arrays are bound to the stacked ones ----
    def _start_phase(self, t: int, rngs: Sequence[np.random.Generator]) -> None:
        length = None
        for r, (p, rng) in enumerate(zip(self.policies, rngs, strict=True)):
            p._n_rows = self._i
            p._rng = rng
            p._start_phase(t, rng)
            self._bind(r, p)
            length = p._rows.shape[0]
        d1 = self.dim + 1
        self._rows = np.empty((len(self.policies), length, d1))
        self._row_users = np.empty((len(self.policies), length), dtype=np.intp)
        for r, p in enumerate(self.policies):
            p._rows, p._row_users = self._rows[r], self._row_users[r]
        self._i = 0

    def _bind(self, r: int, p: FederatedClub) -> None:
        """Make replicate r's models and ln det S views of the stacked arrays (after a renewal)."""
        models = p.sync.models
        if self._bound[r] is models:
            return
        rows = models.inv.shape[0]
        for name, stacked in (("inv", self.inv), ("b", self.b), ("logdet", self.logdet),
                              ("count", self.count)):
            stacked[r, :rows] = getattr(models, name)
            setattr(models, name, stacked[r, :rows])
        self.logdet_s[r, :rows] = p.sync.logdet_s
        p.sync.logdet_s = self.logdet_s[r, :rows]
        self._bound[r] = models

    # -- the round -------------------------------------------------------------------------
    def select(self, items: np.ndarray, users: np.ndarray, t: int,
               rngs: Sequence[np.random.Generator]) -> np.ndarray:
        if t >= self.policies[0]._next_phase:  # phases start at the same rounds in every run
            self._start_phase(t, rngs)
        self._rngs = rngs
        r = self.replicates
        self._c = c = self.local[r, users]
        self._inv = inv = self.inv[r, c]
        beta = self.radius.many(self.logdet[r, c] - self._log_lam, self.lam)
        theta = np.matmul(inv, self.b[r, c][..., None])[..., 0]
        return ucb_scores(theta, inv, items, beta[:, None]).argmax(axis=1)

    def update(self, items: np.ndarray, users: np.ndarray, actions: np.ndarray,
               rewards: np.ndarray, t: int) -> None:
        r, c, inv, i = self.replicates, self._c, self._inv, self._i
        x = items[r, actions]
        rows = self._rows[:, i]
        rows[:, :-1], rows[:, -1] = x, rewards
        self._row_users[:, i] = users
        self._i = i + 1
        quad = sherman_morrison(inv, x)
        self.inv[r, c] = inv
        self.b[r, c] += rewards[:, None] * x
        self.logdet[r, c] += np.log1p(quad)
        self.count[r, c] += 1
        fired = self.logdet[r, c] - self.logdet_s[r, c] >= self._ln_u
        for p, cluster, z in zip(self.policies, c.tolist(), rows, strict=True):
            p.sync.pending[cluster].append(z)
        for k in np.flatnonzero(fired).tolist():
            self.policies[k].sync.upload_raw(int(c[k]), t)

    def finish(self) -> None:
        for p in self.policies:
            p._n_rows = self._i
