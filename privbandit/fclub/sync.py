"""How local clusters share statistics between phases: instant (FCLUB) or delayed (FCLUB-DC).

Both are renewed by `renew(layout, base)` whenever the global
partition changes (seed 000 Algorithm 2, lines 8-18): the global statistics
of cluster k become the sum of its local clusters' phase uploads, and every
local copy starts from them.  Then, per observation of local cluster c:

- `InstantSync` (FCLUB, Homo): the observation is uploaded and downloaded to
  every local cluster of the same global cluster at once, so all of them
  recommend from one shared model (one row per global cluster).
- `DelayedSync` (FCLUB-DC, Homo-DC, CDP-FCLUB-DC; Algorithms 3-4): c keeps a
  synchronized copy S_c and an upload buffer; it uploads when
  det(S_c + dS) / det(S_c) >= U, the global server adds the upload to S_g and
  to the other members' download buffers, and member c' downloads when
  det(S_g) / det(S_c') >= D.  c recommends from S_c plus its own raw buffer
  (its own data, which Definition 1 lets it use; the authors' code does the
  same).  With a `CdpPlan`, dS is the difference of two noisy prefix sums of
  c's tree privatizer, and the trigger reads that noisy dS -- see
  `fclub.privacy` for why every message and its timing is then
  post-processing.  The plan's schedule says when c's stream releases:
  every round (the paper's), or after each batch of rounds of a fixed or
  doubling schedule, when every local cluster with records since its last
  release puts them into its stream as one step and reads the trigger.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..comm import DOWNLOAD, UPLOAD, CommLog
from ..policies.radius import ConfidenceRadius
from .models import RecommendationModels, inverse, logdet
from .privacy import CdpPlan

_MODEL_ARRAYS = ("inv", "b", "logdet", "count")  # a sync's `models` (RecommendationModels)
# DelayedSync's arrays by local cluster and by global cluster
_DELAYED_ARRAYS = ("S", "logdet_s", "u", "n_sync", "pend_s", "pend_u", "pend_n", "s_down",
                   "u_down", "n_down", "k_of", "row_of", "S_g", "u_g", "n_g", "logdet_g")


def _model_arrays(models: RecommendationModels) -> dict[str, np.ndarray]:
    return {name: getattr(models, name) for name in _MODEL_ARRAYS}


def _adopt(sync: InstantSync | DelayedSync, views: Mapping[str, np.ndarray]) -> None:
    """Bind the sync's (or its models') arrays to the views of those names."""
    for name, view in views.items():
        setattr(sync.models if name in _MODEL_ARRAYS else sync, name, view)


@dataclass(frozen=True)
class Layout:
    """The cluster structure of a phase: local clusters and their global cluster.

    servers: (C,) server of each local cluster; members: C arrays of users;
    cluster: (C,) global cluster label in 0..m-1.
    """

    servers: np.ndarray
    members: tuple
    cluster: np.ndarray

    @property
    def n_local(self) -> int:
        return int(self.cluster.size)

    @property
    def n_global(self) -> int:
        return int(self.cluster.max()) + 1

    def groups(self) -> list[np.ndarray]:
        """The local clusters of each global cluster."""
        return [np.flatnonzero(self.cluster == k) for k in range(self.n_global)]


@dataclass(frozen=True)
class BaseStats:
    """Phase uploads used to renew: gram (C, d, d), b (C, d), count (C,), and the
    per-entry noise variance (C,) they carry (0 for raw statistics)."""

    gram: np.ndarray
    b: np.ndarray
    count: np.ndarray
    variance: np.ndarray


class Observer(Protocol):
    """Receives what leaves a local server (the audit's transcript is one).

    upload: an asynchronous upload (Algorithm 3) of a local cluster of
    `server`, its Gram and moment increments; download: a download to a local
    cluster of `server`; phase_upload: one local cluster's phase upload
    (Algorithm 2, line 5): its users, the (d+1) x (d+1) statistics the merge
    test reads, the Gram and moment vector of the renewal base, and its count.
    """

    def upload(self, t: int, server: int, gram: np.ndarray, b: np.ndarray) -> None: ...

    def download(self, t: int, server: int) -> None: ...

    def phase_upload(self, t: int, server: int, users: np.ndarray, merge: np.ndarray,
                     gram: np.ndarray, b: np.ndarray, count: int) -> None: ...


class InstantSync:
    """FCLUB's sharing: one model per global cluster, every observation shared at once."""

    def __init__(self, dim: int, lam: float, radius: ConfidenceRadius, comm: CommLog) -> None:
        self.dim, self.lam, self.radius, self.comm = dim, lam, radius, comm
        self._msg = (dim * dim + dim + 1) * 8
        self.models = RecommendationModels(1, dim)
        self.row_of = np.zeros(1, dtype=np.intp)
        self._peers = np.zeros(1, dtype=np.int64)
        self._log_lam = dim * math.log(lam)

    def renew(self, layout: Layout, base: BaseStats) -> None:
        groups = layout.groups()
        self.models = RecommendationModels(len(groups), self.dim)
        for k, group in enumerate(groups):
            gram = self.lam * np.eye(self.dim) + base.gram[group].sum(axis=0)
            self.models.set(k, gram, base.b[group].sum(axis=0), int(base.count[group].sum()))
        self.row_of = layout.cluster.astype(np.intp)
        self._peers = np.array([g.size - 1 for g in groups], dtype=np.int64)

    def beta(self, row: int) -> float:
        return self.radius(float(self.models.logdet[row]) - self._log_lam, self.lam)

    def arrays(self) -> dict[str, np.ndarray]:
        """Its arrays by name: the models' "inv", "b", "logdet", "count", and "row_of" and
        "peers" (each global cluster's other local clusters): its policy's part of
        `Policy.replicate_state`."""
        return {**_model_arrays(self.models), "row_of": self.row_of, "peers": self._peers}

    def adopt(self, views: Mapping[str, np.ndarray]) -> None:
        """Keep the arrays named in `views` (as by `arrays()`) in those views from now on:
        its policy's part of `Policy.bind_replicate_state`, which checks them."""
        views = dict(views)
        self._peers = views.pop("peers", self._peers)
        _adopt(self, views)

    def observe(self, c: int, x: np.ndarray, y: float, z: np.ndarray, t: int, rng: Any) -> None:
        k = int(self.row_of[c])
        self.models.add(k, x, y)
        self.comm.record(UPLOAD, 1, self._msg, round=t)
        if self._peers[k]:
            self.comm.record(DOWNLOAD, int(self._peers[k]), int(self._peers[k]) * self._msg,
                             round=t)


class DelayedSync:
    """FCLUB-DC's asynchronous protocol (Algorithms 3-4), optionally privatized by a `CdpPlan`.

    Arrays by local cluster c: S (synchronized Gram), u, n_sync and ln det S;
    the raw upload buffer (sums of the observations since the last
    upload: `raw_buffer`); the download buffer; by global cluster
    k: S_g, u_g, n_g and ln det S_g.  Private runs also keep one tree
    privatizer per c and the noisy prefix at c's last upload.
    """

    def __init__(self, dim: int, lam: float, upload: float, download: float,
                 radius: ConfidenceRadius, comm: CommLog, plan: CdpPlan | None = None,
                 observer: Observer | None = None) -> None:
        self.dim, self.lam, self.radius, self.comm = dim, lam, radius, comm
        self.plan, self.observer = plan, observer
        # the raw buffer drives decisions only without privacy or with the paper's act_on="raw"
        self._acts_on_raw = plan is None or plan.act_on == "raw"
        self._ln_u, self._ln_d = math.log(upload), math.log(download)
        self._msg = (dim * dim + dim + 1) * 8
        self._log_lam = dim * math.log(lam)
        self.trees: list = []

    # -- renewal (Algorithm 2, lines 8-18) ------------------------------------------
    def renew(self, layout: Layout, base: BaseStats) -> None:
        d, c_count = self.dim, layout.n_local
        self.layout, self.groups = layout, layout.groups()
        self.row_of = np.arange(c_count, dtype=np.intp)
        self.k_of = layout.cluster.astype(np.intp)
        self.S = np.zeros((c_count, d, d))
        self.logdet_s = np.zeros(c_count)
        self.u = np.zeros((c_count, d))
        self.n_sync = np.zeros(c_count, dtype=np.int64)
        # the raw upload buffer, summed as it fills: sum x x^T, sum y x, count
        self.pend_s, self.pend_u = np.zeros((c_count, d, d)), np.zeros((c_count, d))
        self.pend_n = np.zeros(c_count, dtype=np.int64)
        self.s_down, self.u_down = np.zeros((c_count, d, d)), np.zeros((c_count, d))
        self.n_down = np.zeros(c_count, dtype=np.int64)
        m = len(self.groups)
        self.S_g, self.u_g = np.zeros((m, d, d)), np.zeros((m, d))
        self.n_g, self.logdet_g = np.zeros(m, dtype=np.int64), np.zeros(m)
        self.variance = np.zeros(m)
        self.models = RecommendationModels(c_count, d)
        for k, group in enumerate(self.groups):
            self.variance[k] = self._noise_variance(base.variance[group].sum(), group.size)
            shift = 0.0 if self.plan is None else self.plan.shift(self.variance[k])
            gram = (self.lam + shift) * np.eye(d) + base.gram[group].sum(axis=0)
            self.S_g[k], self.u_g[k] = gram, base.b[group].sum(axis=0)
            self.n_g[k] = int(base.count[group].sum())
            self.logdet_g[k] = logdet(gram)
            inv = inverse(gram)
            for c in group:
                self.S[c], self.logdet_s[c] = gram, self.logdet_g[k]
                self.u[c], self.n_sync[c] = self.u_g[k], self.n_g[k]
                self.models.set(c, gram, self.u_g[k], self.n_g[k], inv, self.logdet_g[k])
        if self.plan is not None:
            r = self.radius
            self._beta_terms = [self.plan.beta_terms(
                v, c_count, lam=self.lam, noise_scale=r.noise_scale, theta_bound=r.theta_bound)
                for v in self.variance]
            d1 = d + 1
            self.trees = [self.plan.new_tree() for _ in range(c_count)]
            self.last = np.zeros((c_count, d1, d1))
            self.unreleased: list[list[np.ndarray]] = [[] for _ in range(c_count)]

    def arrays(self) -> dict[str, np.ndarray]:
        """Its arrays by name (none before the first renewal): the models' "inv", "b",
        "logdet", "count", the arrays by local and by global cluster (S, ..., logdet_g,
        as the class docstring lists them) and, privately, "last": its policy's part of
        `Policy.replicate_state`.  A renewal makes new arrays."""
        if not hasattr(self, "layout"):
            return {}
        own = {name: getattr(self, name) for name in _DELAYED_ARRAYS}
        if self.plan is not None:
            own["last"] = self.last
        return {**_model_arrays(self.models), **own}

    def adopt(self, views: Mapping[str, np.ndarray]) -> None:
        """Keep the arrays named in `views` (as by `arrays()`) in those views until the
        next renewal: its policy's part of `Policy.bind_replicate_state`, which checks them."""
        _adopt(self, views)

    @property
    def beta_terms(self) -> np.ndarray:
        """The radius terms (a, r, d rho_min, c) of each global cluster, (m, 4) (private
        runs: `CdpPlan.beta_terms`; read by `beta`)."""
        return np.array(self._beta_terms, dtype=float).reshape(-1, 4)

    def _noise_variance(self, base_variance: float, local_clusters: int) -> float:
        """Per-entry noise variance any copy of cluster k can carry: the renewal base plus,
        for each member's stream, the largest noise variance of one of its prefixes (the
        uploads of a stream telescope to its last uploaded prefix)."""
        if self.plan is None:
            return 0.0
        return base_variance + local_clusters * self.plan.stream_variance

    # -- recommendation ------------------------------------------------------------------
    def beta(self, c: int) -> float:
        if self.plan is None:
            return self.radius(float(self.models.logdet[c]) - self._log_lam, self.lam)
        a, ratio, drmin, const = self._beta_terms[self.k_of[c]]
        inner = a + self.dim * math.log(ratio + float(self.models.count[c]) / drmin)
        return self.radius.scale * (self.radius.noise_scale * math.sqrt(inner) + const)

    # -- Algorithm 3: upload -------------------------------------------------------------
    def raw_buffer(self, c: int) -> tuple[np.ndarray, np.ndarray, int]:
        """(R, r, n): c's own raw data since its last upload, sum x x^T, sum y x, count (R
        and r stay zero when the run acts on released data only: nothing reads them)."""
        return self.pend_s[c].copy(), self.pend_u[c].copy(), int(self.pend_n[c])

    def observe(self, c: int, x: np.ndarray, y: float, z: np.ndarray, t: int, rng: Any) -> None:
        if self._acts_on_raw:  # else: act on released data only, keep no raw buffer
            self.models.add(c, x, y)
            self.pend_s[c] += np.multiply.outer(x, x)  # the arithmetic of the lockstep version
            self.pend_u[c] += y * x
        self.pend_n[c] += 1
        if self.plan is None:  # eq. 5 on the raw statistics: the non-private protocol
            if float(self.models.logdet[c] - self.logdet_s[c]) >= self._ln_u:
                self.upload_raw(c, t)
            return
        releases = self.plan.releases
        if releases.kind == "every-round":
            self._release(c, self.trees[c].add(np.multiply.outer(z, z), rng), t)
            return
        self.unreleased[c].append(z)
        if releases.is_release(t):  # a data-independent round: every cluster with records
            for c2 in [i for i, rows in enumerate(self.unreleased) if rows]:
                rows, self.unreleased[c2] = np.stack(self.unreleased[c2]), []
                prefix = self.trees[c2].add_records(rows[:, :, None] * rows[:, None, :], rng)
                self._release(c2, prefix, t)

    def _release(self, c: int, prefix: np.ndarray, t: int) -> None:
        """c's stream released `prefix`: upload the noisy increment if eq. 5 fires on it."""
        d = self.dim
        diff = prefix - self.last[c]
        noisy_s, noisy_u = diff[:d, :d], diff[:d, d]
        ld = logdet(self.S[c] + noisy_s)
        if self._fires(c, ld):
            self.last[c] = prefix
            self._upload(c, *self._contents(c, noisy_s, noisy_u, ld), t)

    def upload_raw(self, c: int, t: int) -> None:
        """A non-private upload of c's raw buffer (eq. 5 fired on the raw statistics)."""
        ds, du, _ = self.raw_buffer(c)
        self._upload(c, ds, du, None, t)

    def _fires(self, c: int, logdet_noisy: float) -> bool:
        """A private run's upload trigger: eq. 5 on the noisy buffer (ln det(S_c + dS~)),
        never on the raw one."""
        return logdet_noisy == -math.inf or logdet_noisy - self.logdet_s[c] >= self._ln_u

    def _contents(self, c: int, ds: np.ndarray, du: np.ndarray, logdet_new: float
                  ) -> tuple[np.ndarray, np.ndarray, float]:
        """What a private upload sends: the noisy increments and ln det(S_c + ds)."""
        return ds, du, logdet_new

    def _upload(self, c: int, ds: np.ndarray, du: np.ndarray, logdet_new: float | None,
                t: int) -> None:
        """Algorithm 3, lines 3-10; `logdet_new` is ln det(S_c + ds) when already known."""
        k, n = self.k_of[c], int(self.pend_n[c])
        self.S_g[k] += ds
        self.u_g[k] += du
        self.n_g[k] += n
        self.logdet_g[k] = logdet(self.S_g[k])
        group = self.groups[k]
        others = group[group != c]
        self.s_down[others] += ds
        self.u_down[others] += du
        self.n_down[others] += n
        self.S[c] += ds
        self.u[c] += du
        self.n_sync[c] += n
        self.pend_s[c], self.pend_u[c], self.pend_n[c] = 0.0, 0.0, 0
        if logdet_new is None:
            # raw upload: S_c + R_c is the model already, so nothing to recompute
            self.logdet_s[c] = self.models.logdet[c]
        else:
            self.logdet_s[c] = logdet_new
            self.models.set(c, self.S[c], self.u[c], self.n_sync[c], logdet_value=logdet_new)
        self.comm.record(UPLOAD, 1, self._msg, round=t)
        if self.observer is not None:
            self.observer.upload(t, int(self.layout.servers[c]), ds, du)
        self._downloads(k, t)

    # -- Algorithm 4: download -----------------------------------------------------------
    def _downloads(self, k: int, t: int) -> None:
        group = self.groups[k]
        due = group[self.logdet_g[k] - self.logdet_s[group] >= self._ln_d]
        if not due.size:
            return
        # every due copy at once: elementwise sums, the numbers of one at a time
        s, u = self.S[due] + self.s_down[due], self.u[due] + self.u_down[due]
        n = self.n_sync[due] + self.n_down[due]
        self.S[due], self.u[due], self.n_sync[due] = s, u, n
        self.s_down[due], self.u_down[due], self.n_down[due] = 0.0, 0.0, 0
        self.logdet_s[due] = self.logdet_g[k]  # S_c now equals S_g
        if not self._acts_on_raw:
            self.models.set(due, s, u, n)
        else:
            self.models.set(due, s + self.pend_s[due], u + self.pend_u[due],
                            n + self.pend_n[due])
        self.comm.record(DOWNLOAD, int(due.size), int(due.size) * self._msg, round=t)
        if self.observer is not None:
            for c in due:
                self.observer.download(t, int(self.layout.servers[c]))
