"""`FederatedClub`: FCLUB, FCLUB-DC, CDP-FCLUB-DC, Homo and Homo-DC behind the `Policy` interface.

Seed 000 (Liu, Zhao, Yu, Li, Lui, UAI 2022), Algorithm 1.  Rounds are
0-based; phase s = 1, 2, ... starts at round 2^s - 2 and lasts 2^s rounds (the
public code's schedule).  At the start of every phase (Algorithm 2):

1. per-user statistics for detection: raw (non-private runs, or the paper's
   rule with `CdpPlan(detection="raw")`) or, privately, each user's phase
   increment released once through `CdpPlan.detection_mechanism()`;
2. local edge deletion (eq. 3) on each server's user graph;
3. phase uploads: each local cluster sends (members, V, b, T) -- raw sums, or
   sums of its members' noisy releases (one message per local cluster);
4. global merge (eq. 4); if the partition changed, renewal of the global and
   local statistics, buffers and tree privatizers, and a fresh ledger per
   (server, local cluster) tree.

Within a phase, each round serves the arriving user from its local cluster's
model with the UCB of Algorithm 1, line 12, and shares the observation through
`sync.InstantSync` or `sync.DelayedSync`.  With `detect=False` every user is in
one cluster (Homo / Homo-DC) and no phase work happens.

Privacy guarantee
-----------------
Non-private variants (no `CdpPlan`): none; they read raw rewards.  With a
`CdpPlan` (CDP-FCLUB-DC): (epsilon, delta, L, m)-CDP of seed 000 Definition 1
-- neighbouring inputs differ in one observation of one local cluster; one
record's statistic z z^T (z = [x; y], ||x|| <= B, y clipped to [0, 1]) has
replace-one Frobenius sensitivity sqrt(2)(B^2 + 1); each record meets nu tree
nodes and one per-user release, certified by the exact Gaussian accountant;
uploads, the local partition and all communication times are post-processing
(where the paper's rules read raw data -- the upload trigger of eq. 5, local
edge deletion of eq. 3, the re-released cumulative phase uploads -- this class
follows the privatized reading, see `fclub.privacy`).  Counts and arrival
times are public (equal in neighbours).  Sources: seed 000 Definition 1,
Algorithms 1-5, Theorem 3.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from privbandit.accounting.ledger import Ledger
from privbandit.accounting.statement import PrivacyStatement

from ..clustering import (
    NoiseAwareClustering,
    by_first_appearance,
    clique_labels,
    delete_far,
    merge_global,
    partition_of,
    prune_local,
    ridge_estimates,
)
from ..comm import DOWNLOAD, UPLOAD, CommLog
from ..errors import config_error
from ..kernels import UserGraph
from ..policies.base import Policy
from ..private import NoisyRidge
from ..validation import check_dim, check_items, check_user, checked_observation
from .config import FclubConfig
from .privacy import CdpPlan
from .sync import BaseStats, DelayedSync, InstantSync, Layout, Observer


class FederatedClub(Policy):
    """Phase-based federated clustering of bandits; see the module docstring.

    config: `FclubConfig`; privacy: None or a `CdpPlan` (requires
    sync="delayed"); observer: optional receiver of uploads (the audit's
    transcript); world_clusters: Definition 1's m stated in `privacy()` (the
    number of clusters of the world; default: the most clusters detected).
    Shapes: items (K, d) with ||x_k|| <= item_bound; select returns an int;
    `cluster_labels()` gives each user's global cluster (labelled by its
    smallest user).
    """

    name = "fclub"
    delayed_sync = DelayedSync  # FCLUB-DC's protocol (a hook for the audit's controls)

    def __init__(self, config: FclubConfig, *, privacy: CdpPlan | None = None,
                 observer: Observer | None = None, name: str | None = None,
                 world_clusters: int | None = None) -> None:
        if not isinstance(config, FclubConfig):
            raise config_error("config", config, "an FclubConfig")
        if privacy is not None:
            if not isinstance(privacy, CdpPlan):
                raise config_error("privacy", privacy, "None or a CdpPlan")
            if config.sync != "delayed":
                raise config_error("sync", config.sync, "'delayed' for CDP-FCLUB-DC")
            if privacy.dim != config.dim or privacy.n_users != config.n_users:
                raise config_error("privacy", privacy,
                                   "a CdpPlan with the config's dim and n_users")
        self.config, self.plan, self.observer = config, privacy, observer
        self.world_clusters = None if world_clusters is None else check_dim(
            "world_clusters", world_clusters)
        if name is not None:
            self.name = name
        d, n = config.dim, config.n_users
        self.server = config.servers()
        self.server_users = [np.flatnonzero(self.server == s) for s in range(config.n_servers)]
        self.graphs = self._user_graphs()
        self._comm = CommLog()
        radius = config.radius()
        if config.sync == "instant":
            self.sync: InstantSync | DelayedSync = InstantSync(d, config.lam, radius, self._comm)
        else:
            self.sync = self.delayed_sync(d, config.lam, config.upload_threshold,
                                          config.download_threshold, radius, self._comm,
                                          privacy, observer)
        d1 = d + 1
        # per-user statistics, brought up to date at each phase start from the phase's
        # observations (kept as rows z = [x, y], so a round costs no O(d^2) update)
        self._gram = np.zeros((n, d1, d1))      # raw, cumulative
        self._count = np.zeros(n, dtype=np.int64)
        self._inc = np.zeros((n, d1, d1))       # raw, the last phase only
        self._inc_count = np.zeros(n, dtype=np.int64)
        self._rows = np.empty((0, d1))          # this phase's observations z = [x, y]
        self._row_users = np.empty(0, dtype=np.intp)
        self._n_rows = 0
        if privacy is not None:
            self._mech = privacy.detection_mechanism()
            self._noisy = np.zeros((n, d1, d1))  # sum of the user's noisy releases
            self._releases = np.zeros(n, dtype=np.int64)
            self._latest = np.zeros((n, d1, d1))  # the latest release
            self._latest_count = np.zeros(n, dtype=np.int64)
        self._tests = self._noise_aware_tests(config, privacy)
        self._ledgers: list[Ledger] = []
        self._partition: frozenset | None = None
        self._local_of_user = np.zeros(n, dtype=np.intp)
        self._labels = np.zeros(n, dtype=np.int64)
        self._phase = 0
        self._next_phase = 0
        self._max_clusters = 1
        self._rng: np.random.Generator | None = None
        self._checked: np.ndarray | None = None

    def _user_graphs(self) -> list[UserGraph]:
        """Each server's user graph for local edge deletion (eq. 3): complete at the start."""
        return [UserGraph.complete(u.size) for u in self.server_users]

    @staticmethod
    def _noise_aware_tests(config: FclubConfig, plan: CdpPlan | None
                           ) -> NoiseAwareClustering | None:
        """The split and merge tests of detection="noise-aware" (None otherwise)."""
        if plan is None or plan.detection != "noise-aware":
            return None
        radius = config.radius()
        failure = plan.failure / (plan.horizon * plan.n_users)  # as Definition 2's bounds
        return NoiseAwareClustering(NoisyRidge(config.dim, config.lam, radius.noise_scale,
                                               config.theta_bound, config.confidence, failure))

    # -- the round -----------------------------------------------------------------------
    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        """Detect clusters if a phase starts at t, then the UCB item of the user's local cluster."""
        self._rng = rng
        if t >= self._next_phase:
            self.start_phase(t, rng)
        c = self._local_of_user[check_user(user, self.config.n_users)]
        self._checked = items = check_items(items, self.config.dim, self.config.item_bound)
        row = self.sync.row_of[c]
        return int(self.sync.models.scores(row, items, self.sync.beta(row)).argmax())

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Record the observation for its user and share it (instant or delayed)."""
        if self._rng is None:
            raise config_error("update", "called before select", "select(...) first in a round")
        user = check_user(user, self.config.n_users)
        items, x, y = checked_observation(items, self._checked, self.config.dim,
                                          self.config.item_bound, action, feedback)
        self._checked = None
        if self.plan is not None:
            y = min(max(y, 0.0), 1.0)  # the sensitivity assumes rewards in [0, 1]
        z = self._next_row(user) if self.config.detect else np.empty(self.config.dim + 1)
        z[:-1], z[-1] = x, y
        self.sync.observe(int(self._local_of_user[user]), x, y, z, t, self._rng)

    def _next_row(self, user: int) -> np.ndarray:
        """A view of the next row of the phase buffer (doubled if a caller skips phases)."""
        i = self._n_rows
        if i == self._rows.shape[0]:
            size = max(2 * i, 16)
            self._rows = np.concatenate((self._rows, np.empty((size - i, self._rows.shape[1]))))
            self._row_users = np.concatenate((self._row_users, np.empty(size - i, np.intp)))
        self._row_users[i] = user
        self._n_rows = i + 1
        return self._rows[i]

    # -- phases (Algorithm 2) ------------------------------------------------------------
    @property
    def next_phase(self) -> float:
        """The first round of the next phase (inf: no more phases, as without detection)."""
        return self._next_phase

    def start_phase(self, t: int, rng: np.random.Generator) -> None:
        """Start the phase due at round t (at or after `next_phase`) with the policy
        generator `rng`: what `select` does at a phase's first round."""
        self._rng = rng
        self._phase += 1
        self._next_phase = 2 ** (self._phase + 1) - 2 if self.config.detect else math.inf
        self._close_phase()
        if self.plan is not None and self.config.detect:
            self._release_users(rng)
        if self.config.detect:
            self._prune_local()
        servers, members = self._local_clusters()
        merge, base = self._phase_uploads(members)
        if self.observer is not None:
            for c, users in enumerate(members):
                self.observer.phase_upload(t, int(servers[c]), users, merge[0][c],
                                           base.gram[c], base.b[c], int(base.count[c]))
        self._comm.record(UPLOAD, len(members), len(members) * self._upload_bytes(), round=t)
        labels = self._merge(merge) if self.config.detect else np.zeros(
            len(members), dtype=np.int64)
        partition = partition_of(members, labels)
        if partition != self._partition:
            self._renew(Layout(servers, tuple(members), labels), base, members, t)
            self._partition = partition

    def _close_phase(self) -> None:
        """Fold the ending phase's observations into the per-user statistics (batched)."""
        self._inc[:] = 0.0
        self._inc_count[:] = 0
        rows, users = self._rows[:self._n_rows], self._row_users[:self._n_rows]
        # a fresh buffer for the new phase (views of the old one may still be pending)
        length = 2 ** self._phase if self.config.detect else 0
        self._rows = np.empty((length, self._rows.shape[1]))
        self._row_users = np.empty(length, dtype=np.intp)
        self._n_rows = 0
        for user in np.unique(users):
            z = rows[users == user]
            self._inc[user] = z.T @ z
            self._inc_count[user] = z.shape[0]
        self._gram += self._inc
        self._count += self._inc_count

    def _release_users(self, rng: np.random.Generator) -> None:
        """Release every active user's phase increment once (per-user Gaussian)."""
        self._latest[:] = 0.0
        self._latest_count[:] = 0
        for user in np.flatnonzero(self._inc_count):
            noisy = self._mech.release(self._inc[user], rng)
            self._noisy[user] += noisy
            self._latest[user] = noisy
            self._latest_count[user] = self._inc_count[user]
            self._releases[user] += 1

    def _view(self, groups: list[np.ndarray], raw: bool) -> tuple[np.ndarray, ...]:
        """(stats (G, d+1, d+1), counts (G,), regulariser (G,)) of groups of users.

        Raw: cumulative raw sums, regulariser lam.  Private: the sums of the
        members' noisy releases -- all of them, or only the latest phase's
        (less data, far less noise) -- whichever has the smaller regulariser
        (lam + the 2 rho shift of its noise) per sample.  Both are
        post-processing of the releases, so the choice costs no privacy.
        """
        lam = self.config.lam
        if raw:
            stats = np.stack([self._gram[g].sum(axis=0) for g in groups])
            counts = np.array([self._count[g].sum() for g in groups])
            return stats, counts, np.full(len(groups), lam)
        var, shift = self.plan.sigma_det**2, self.plan.shift
        stats, counts, reg = [], [], []
        for g in groups:
            every = (self._noisy[g], self._count[g].sum(),
                     lam + shift(var * self._releases[g].sum()))
            latest = (self._latest[g], self._latest_count[g].sum(),
                      lam + shift(var * np.count_nonzero(self._latest_count[g])))
            pick = latest if latest[2] * every[1] < every[2] * latest[1] else every
            stats.append(pick[0].sum(axis=0))
            counts.append(pick[1])
            reg.append(pick[2])
        return np.stack(stats), np.array(counts), np.array(reg)

    def _reads_raw(self, detection: bool) -> bool:
        """Whether local deletion (detection=True) or the phase uploads read raw statistics."""
        if self.plan is None:
            return True
        return detection and self.plan.detection == "raw"

    def _prune_local(self) -> None:
        if self._tests is not None:  # delete an edge on proof of difference, noise counted
            far = self._tests.differs(self._noisy, self._releases * self.plan.sigma_det**2,
                                      self._count)
            for users, graph in zip(self.server_users, self.graphs, strict=True):
                delete_far(graph, far[np.ix_(users, users)])
            return
        singles = [np.array([u]) for u in range(self.config.n_users)]
        stats, counts, reg = self._view(singles, self._reads_raw(detection=True))
        d = self.config.dim
        theta = ridge_estimates(stats[:, :d, :d], stats[:, :d, d], reg)
        for users, graph in zip(self.server_users, self.graphs, strict=True):
            prune_local(graph, theta[users], counts[users], self.config.alpha)

    def _local_clusters(self) -> tuple[np.ndarray, list[np.ndarray]]:
        servers, members = [], []
        for s, (users, graph) in enumerate(zip(self.server_users, self.graphs, strict=True)):
            labels = graph.labels
            for label in np.unique(labels):
                servers.append(s)
                members.append(users[labels == label])
        return np.array(servers), members

    def _phase_uploads(self, members: list[np.ndarray]) -> tuple[tuple, BaseStats]:
        """What each local cluster uploads: the statistics the merge test reads (with
        their counts and regulariser) and the renewal base (all data so far)."""
        d, n_c = self.config.dim, len(members)
        raw = self._reads_raw(detection=False)
        cum = self._gram if raw else self._noisy
        gram = np.stack([cum[m].sum(axis=0) for m in members])
        counts = np.array([self._count[m].sum() for m in members])
        variance = np.zeros(n_c)
        if self.plan is not None:
            variance = np.array([self._releases[m].sum() for m in members]) * self.plan.sigma_det**2
        base = BaseStats(gram[:, :d, :d], gram[:, :d, d], counts, variance)
        if self._tests is not None:  # the noise-aware tests read all releases and their noise
            return (gram, counts, variance), base
        return self._view(members, raw), base

    def _merge(self, merge: tuple) -> np.ndarray:
        if self._tests is not None:  # join only consistent clusters the test could tell apart
            stats, counts, variance = merge
            return by_first_appearance(clique_labels(self._tests.links(stats, variance, counts)))
        stats, counts, reg = merge
        d = self.config.dim
        theta = ridge_estimates(stats[:, :d, :d], stats[:, :d, d], reg)
        return merge_global(theta, counts, self.config.alpha2)

    def _renew(self, layout: Layout, base: BaseStats, members: list[np.ndarray], t: int) -> None:
        self.sync.renew(layout, base)
        for c, users in enumerate(members):
            self._local_of_user[users] = c
        smallest = np.full(layout.n_global, self.config.n_users)
        for users, k in zip(members, layout.cluster, strict=True):
            smallest[k] = min(smallest[k], int(users.min()))
        self._labels = smallest[layout.cluster[self._local_of_user]]
        self._max_clusters = max(self._max_clusters, layout.n_global)
        self._comm.record(DOWNLOAD, layout.n_local, layout.n_local * self._upload_bytes(),
                          round=t)
        if self.plan is not None:
            for s, users in zip(layout.servers, members, strict=True):
                unit = f"server {int(s)}, local cluster {sorted(int(u) for u in users)}, " \
                       f"tree from round {t}"
                self._ledgers.append(self.plan.open_ledger(unit))

    def _upload_bytes(self) -> int:
        d = self.config.dim
        return (d * d + d + 1) * 8

    # -- replicates in lockstep (`fclub.lockstep`) -----------------------------------------
    def replicate_state(self) -> dict[str, np.ndarray]:
        """Each user's local cluster "local_of_user", this phase's observation buffer
        "rows" (z = [x, y]) and "row_users", and the sync's arrays (`DelayedSync.arrays`,
        `InstantSync.arrays`) (`Policy.replicate_state`).  A phase start makes a new
        buffer, and a renewal new sync arrays."""
        return {"local_of_user": self._local_of_user, "rows": self._rows,
                "row_users": self._row_users, **self.sync.arrays()}

    def _bind_views(self, views: dict[str, np.ndarray]) -> None:
        self._local_of_user = views.pop("local_of_user", self._local_of_user)
        self._rows = views.pop("rows", self._rows)
        self._row_users = views.pop("row_users", self._row_users)
        self.sync.adopt(views)

    def mark_rows(self, n: int) -> None:
        """The first n rows of the phase buffer ("rows", "row_users") hold this phase's
        observations: a twin that wrote them through bound views says so."""
        if not 0 <= n <= self._rows.shape[0]:
            raise config_error("n", n, f"a row count in [0, {self._rows.shape[0]}]")
        self._n_rows = int(n)

    @property
    def lockstep_ready(self) -> bool:
        """This class itself with no observer: FCLUB, Homo, FCLUB-DC, Homo-DC, and
        CDP-FCLUB-DC with the every-round release schedule acting on raw buffers (the
        paper preset; the batched twin predates acting on released data only)."""
        return (type(self) is FederatedClub and type(self.sync) in (DelayedSync, InstantSync)
                and self.observer is None
                and (self.plan is None or (self.plan.releases.kind == "every-round"
                                           and self.plan.act_on == "raw")))

    # -- reporting -------------------------------------------------------------------------
    @property
    def comm(self) -> CommLog:
        return self._comm

    def ledgers(self) -> list[Ledger]:
        return list(self._ledgers)

    def cluster_labels(self) -> np.ndarray:
        return self._labels.copy()

    def local_layout(self) -> list[tuple[int, tuple[int, ...]]]:
        """The current local clusters as (server, users)."""
        out = []
        for c in range(int(np.max(self._local_of_user)) + 1):
            users = np.flatnonzero(self._local_of_user == c)
            out.append((int(self.server[users[0]]), tuple(int(u) for u in users)))
        return out

    def params(self) -> dict[str, Any]:
        out = self.config.params()
        if self.plan is not None:
            p = self.plan
            out.update(epsilon=p.epsilon, delta=p.delta, calibration=p.calibration,
                       mechanism=p.mechanism, detection=p.detection,
                       detection_share=p.detection_share, sigma_tree=p.sigma_tree,
                       sigma_detection=p.sigma_det)
        return out

    def privacy(self) -> PrivacyStatement:
        if self.plan is None:
            return super().privacy()
        m = self._max_clusters if self.world_clusters is None else self.world_clusters
        return self.plan.statement(self.config.n_servers, m)
