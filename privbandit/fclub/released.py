"""CDP-FCLUB-DC acting on released statistics, with reward-only releases ("cdp-fclub-dc").

Seed 000's federated clustering of bandits (Liu et al., UAI 2022,
Algorithms 1-2) rebuilt for the interactive relation.  Every user's records go
to the user's reward-only stream (`private.RewardStreams`): at each release of
a data-independent schedule (default "geometric": releases after rounds 1, 2,
3, 4, 5, 7, 9, 12, ..., each at least 1.25 times the previous) every user's
stream releases its exact Gram prefix sum x x^T and its noisy prefix sum y x.
Everything else is computed from those releases:

- phases (Algorithm 2, at rounds 2^s - 2): local edge deletion on each
  server's user graph where two users' released estimates are proven
  different (`clustering.NoiseAwareClustering.differs`), local clusters as
  components, and a global merge of local clusters that the noise-aware tests
  link (consistent, and the test had the power to see a gap of `resolution`),
  joined as cliques (plan `clustering = "cliques"`); or, by default
  (`clustering = "split-merge"`), after every release, split/merge over sets
  of users (`clustering.SplitMergeClustering`, the rule of "fclub-dc-sets") on the
  released Gram prefixes and noisy moments, the moments' noise variance
  counted and each server's users of a cluster moving as one block;
- after every release and every change of partition, each global cluster's
  model: M = lam I + the members' summed exact Gram matrices, b = their summed
  noisy moments (`private.RewardNoiseRidge`), sent to its local clusters; the
  global server publishes the partition and the models (`publication`: public,
  post-processing of the releases, compared by the end-to-end audit);
- each round, the arriving user's local cluster recommends the item with the
  highest x . theta + beta ||x||_(M^-1) + H ||M^-1 x||, H a bound on the norm of
  the cluster's summed moment noise that holds for every set of users at once
  (`private.sum_noise_bound`), so the bound stays an upper confidence bound
  however the clusters were found (proof: `RewardNoiseRidge`).

No party acts on its own raw rewards: that is what makes every record's
features public.  The paper's asynchronous det-ratio uploads and downloads
(eqs. 5-6) are replaced by the schedule: with the triggers each local
cluster's copy would hold prefixes of different streams at data-dependent
release indices, and no norm bound holds uniformly over such mixtures without
a union bound over every combination (docs/private_federation.md measures
what the schedule costs against the triggers of the non-private FCLUB-DC).

Privacy guarantee
-----------------
Neighbouring relation: interactive -- one user-round's reward in the
environment differs (world, arrivals and contexts the same); the view is
everything the local servers send (every release of every user's stream, the
clusters, the models and all communication), actions adapting.  Why it holds:
every action is computed from the round's items and earlier releases, so along
any sequence of released outputs the records of the two neighbours have the
same features and differ in the flipped round's reward only; the Gram prefixes
are therefore equal (public: the end-to-end audit checks it, `tape.PublicValue`)
and only the flipped record's reward moves one user's moment stream, by at
most item_bound x 1 (rewards clipped to [0, 1]).  Measure: each record enters
one step of one user's stream; the stream's Gaussian event (calibrated by the
exact accountant) is charged once to its server's ledger (users are disjoint);
release times are the schedule's (public), every user releases at each.
Sources: seed 000 Algorithms 1-2 and Definition 1's setting; Shariff &
Sheffet (2018) and Hanna, Girgis & Fragouli (2022) for noising only the
rewards' part; the continual-release mechanisms' own sources.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.accounting.validation import check_positive
from privbandit.mechanisms.publication import Publication

from ..clustering import (
    NoiseAwareClustering,
    SplitMergeClustering,
    by_first_appearance,
    clique_labels,
    delete_far,
)
from ..comm import DOWNLOAD, SERVER, UPLOAD, CommLog, party
from ..errors import config_error
from ..kernels import UserGraph
from ..policies.base import Policy
from ..private import (
    GuardedReports,
    ReleasePlan,
    RewardNoiseRidge,
    RewardStreams,
    exact_gram_scores,
)
from ..validation import check_items, check_probability, check_user, checked_observation
from .config import FclubConfig

UNIT = "one user-round's reward in the environment"
CLUSTERINGS = ("split-merge", "cliques")
# the plan's keys of the split/merge rule (`clustering.SplitMergeClustering`'s knobs)
SPLIT_MERGE_KEYS = ("merge_level", "split_level", "unit_evidence", "block_evidence",
                    "simulations")
PUBLIC = "CDP-FCLUB-DC acts on released statistics only"


@dataclass(frozen=True)
class ReleasedPlan(ReleasePlan):
    """The private side of the released CDP-FCLUB-DC: the `ReleasePlan` keys (default
    mechanism "mf", schedule "geometric"), `failure` (the probability that a noise bound
    fails, over the whole run), the merge tests' `resolution`, `level` and `miss`
    (`clustering.NoiseAwareClustering`), `clustering`: "cliques" (the phases' edge
    deletion and clique merge) or "split-merge" (sets, after every release; the default),
    and split/merge's levels, evidences and bootstrap size (`SplitMergeClustering`;
    utility knobs, the guarantee is the same for every value)."""

    mechanism: str = "mf"
    schedule: str = "geometric"
    failure: float = 0.1
    resolution: float = 0.2
    level: float = 0.99
    miss: float = 1e-3
    clustering: str = "split-merge"
    merge_level: float = 0.99
    split_level: float = 0.99
    unit_evidence: float = math.log(1000.0)
    block_evidence: float = 1.0
    simulations: int = 24

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "failure", check_probability("failure", self.failure))
        object.__setattr__(self, "resolution", check_positive("resolution", self.resolution))
        if self.clustering not in CLUSTERINGS:
            raise config_error("clustering", self.clustering, f"one of {CLUSTERINGS}")

    def params(self) -> dict:
        return {**super().params(), "failure": self.failure, "resolution": self.resolution,
                "level": self.level, "miss": self.miss, "release": "reward-only",
                "clustering": self.clustering,
                **{k: getattr(self, k) for k in SPLIT_MERGE_KEYS}}

    def split_merge(self, config: FclubConfig) -> SplitMergeClustering:
        """The split/merge rule of this plan for `config`'s dimension and radius."""
        return SplitMergeClustering(
            config.dim, lam=config.lam, noise_scale=config.noise_scale,
            theta_bound=config.theta_bound, **{k: getattr(self, k) for k in SPLIT_MERGE_KEYS})


class ReleasedFederatedClub(GuardedReports, Policy):
    """See the module docstring.  config: `FclubConfig` (its sync mode and det-ratio
    thresholds are not read: the schedule replaces them); plan: `ReleasedPlan`;
    world_clusters: Definition 1's m, stated in the guarantee's details (default: the
    most clusters detected).  Shapes: items (K, d) with ||x_k|| <= item_bound."""

    name = "cdp-fclub-dc"
    unit = UNIT
    released_by = "local server"
    relation = Relation.INTERACTIVE

    def __init__(self, config: FclubConfig, plan: ReleasedPlan, *,
                 world_clusters: int | None = None) -> None:
        if not isinstance(config, FclubConfig):
            raise config_error("config", config, "an FclubConfig")
        if not isinstance(plan, ReleasedPlan):
            raise config_error("plan", plan, "a ReleasedPlan")
        self.config, self.plan, self.world_clusters = config, plan, world_clusters
        d, n = config.dim, config.n_users
        self.server = config.servers()
        self.server_users = [np.flatnonzero(self.server == s) for s in range(config.n_servers)]
        self.streams = RewardStreams(self.server_users, d, plan,
                                     feature_bound=config.item_bound)
        self.schedule = plan.releases
        radius = config.radius()
        self.ridge = RewardNoiseRidge(d, config.lam, radius.noise_scale, config.theta_bound,
                                      radius.confidence)
        self.clustering = NoiseAwareClustering(self.ridge, plan.resolution, plan.level,
                                               plan.miss)
        self.sets = None if plan.clustering == "cliques" else plan.split_merge(config)
        # the cliques' per-server user graphs (split/merge keeps sets: no (n, n) memory)
        self.graphs = ([UserGraph.complete(u.size) for u in self.server_users]
                       if self.sets is None else [])
        self._bootstrap: np.random.Generator | None = None
        # each release's noise bounds: half the failure for the models, half for the tests
        self._failure = plan.failure / (2.0 * max(self.schedule.releases, 1))
        self._next_phase, self._phase = 0, 0
        self.labels = np.arange(n)  # global cluster of each user: its smallest member
        self._cluster_of = np.zeros(n, dtype=np.intp)  # row of its cluster's model
        self._local = [np.array([s]) for s in range(config.n_servers)]
        self._groups: list[np.ndarray] = []
        self.inv = np.zeros((0, d, d))
        self.theta = np.zeros((0, d))
        self.beta = np.zeros(0)
        self.noise = np.zeros(0)
        self._max_clusters = 1
        self.decisions = dict.fromkeys(("unit_moves", "block_moves", "splits", "merges"), 0)
        self.publication = Publication("global server")
        self._comm = CommLog()
        self._msg = (d * d + 2 * d + 1) * 8  # a user's release: Gram, moments, feature sum
        self._checked: np.ndarray | None = None
        self._rng: np.random.Generator | None = None
        self._partition(self._initial_labels())

    # -- the round -----------------------------------------------------------------------
    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        self._rng = rng
        if self.sets is None and t >= self._next_phase:
            self.start_phase(t)
        k = self._cluster_of[check_user(user, self.config.n_users)]
        self._checked = items = check_items(items, self.config.dim, self.config.item_bound)
        scores = exact_gram_scores(self.theta[k], self.inv[k], items,
                                   self.config.beta_scale * self.beta[k], self.noise[k])
        return int(np.argmax(scores))

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        if self._rng is None:
            raise config_error("update", "called before select", "select(...) first in a round")
        user = check_user(user, self.config.n_users)
        _, x, y = checked_observation(items, self._checked, self.config.dim,
                                      self.config.item_bound, action, feedback)
        self._checked = None
        y = min(max(y, 0.0), 1.0)  # the sensitivity assumes rewards in [0, 1]
        self.streams.enter(user, (x, y), by=PUBLIC)
        if self.schedule.is_release(t):
            self._release(t)

    def _release(self, t: int) -> None:
        self.streams.release(self._rng)
        for s, users in enumerate(self.server_users):
            self._comm.record(UPLOAD, int(users.size), int(users.size) * self._msg, round=t,
                              sender=party("server", s))
        if self.sets is None:
            self._models()
        else:
            self._split_merge()
        self._publish()
        self._comm.record(DOWNLOAD, len(self._local), len(self._local) * self._msg, round=t,
                          sender=SERVER)

    # -- phases (Algorithm 2) on released data ------------------------------------------
    @property
    def next_phase(self) -> float:
        return self._next_phase

    def start_phase(self, t: int) -> None:
        """Detect clusters from the latest releases (phase s starts at round 2^s - 2; with
        split/merge, which runs at every release instead, it detects at once)."""
        self._phase += 1
        self._next_phase = 2 ** (self._phase + 1) - 2
        if not self.streams.releases:
            return
        if self.sets is not None:
            self._split_merge()
            return
        st = self.streams
        far = self.clustering.differs(st.released, st.variances, st.counts)
        for users, graph in zip(self.server_users, self.graphs, strict=True):
            delete_far(graph, far[np.ix_(users, users)])
        self._partition(self._merged_labels())
        self._publish()
        self._comm.record(UPLOAD, len(self._local), len(self._local) * self._msg, round=t)

    def _initial_labels(self) -> np.ndarray:
        """Before any release: each server's users together, servers apart (split/merge:
        every user in one cluster, as "fclub-dc-sets" starts)."""
        if self.sets is not None:
            return np.zeros(self.config.n_users, dtype=np.int64)
        return np.array([int(self.server_users[s][0]) for s in self.server])

    def _split_merge(self) -> None:
        """Clusters as sets from the latest releases (`SplitMergeClustering`), each server's
        users of a cluster moving as one block; the bootstrap draws from a child of the
        policy stream, so the releases' noise is drawn as with cliques."""
        if self._bootstrap is None:
            self._bootstrap = self._rng.spawn(1)[0]
        st = self.streams
        found = self.sets.partition(st.gram, st.moments, self._cluster_of, rng=self._bootstrap,
                                    blocks=self.server, variance=np.full(st.n_units, st.variance))
        for key in self.decisions:
            self.decisions[key] += getattr(found, key)
        self._partition(found.labels)
        self._local = [g[self.server[g] == s] for g in self._groups
                       for s in np.unique(self.server[g])]

    def _merged_labels(self) -> np.ndarray:
        """Each user's global cluster: local clusters (graph components) joined as cliques
        of the noise-aware links of their summed released statistics."""
        local = []
        for users, graph in zip(self.server_users, self.graphs, strict=True):
            for label in np.unique(graph.labels):
                local.append(users[graph.labels == label])
        st = self.streams
        released = st.released
        stats = np.stack([released[m].sum(axis=0) for m in local])
        counts = np.array([st.counts[m].sum() for m in local])
        variances = np.array([m.size * st.variance for m in local])
        joined = by_first_appearance(clique_labels(self.clustering.links(stats, variances,
                                                                         counts)))
        labels = np.empty(self.config.n_users, dtype=np.int64)
        for members, k in zip(local, joined, strict=True):
            labels[members] = k
        self._local = local
        return labels

    def _partition(self, labels: np.ndarray) -> None:
        """Adopt a partition (labels 0..m-1 or any ids) and rebuild the cluster models."""
        _, cluster_of = np.unique(labels, return_inverse=True)
        self._cluster_of = cluster_of.astype(np.intp)
        self._groups = [np.flatnonzero(self._cluster_of == k)
                        for k in range(int(self._cluster_of.max()) + 1)]
        smallest = np.array([g.min() for g in self._groups])
        self.labels = smallest[self._cluster_of]
        self._max_clusters = max(self._max_clusters, len(self._groups))
        self._models()

    def _publish(self) -> None:
        """What the global server sends the local servers: the partition, and each cluster's
        model (theta, M^-1, the radius and the noise bound), published."""
        self.publication.partition(self.labels)
        self.publication.value("models", np.concatenate((
            self.theta.ravel(), self.inv.ravel(), self.beta, self.noise)))

    def _models(self) -> None:
        """Every global cluster's model from its members' latest releases."""
        st, d = self.streams, self.config.dim
        m = len(self._groups)
        self.inv, self.theta = np.empty((m, d, d)), np.empty((m, d))
        self.beta, self.noise = np.empty(m), np.empty(m)
        for k, members in enumerate(self._groups):
            model = self.ridge.model(st.gram[members].sum(axis=0),
                                     st.moments[members].sum(axis=0),
                                     st.noise_bound(members.size, self._failure))
            self.inv[k], self.theta[k] = model.inverse, model.theta
            self.beta[k], self.noise[k] = model.beta, model.noise_bound

    # -- reporting -------------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        return {**self.config.params(), **self.plan.params(),
                "sigma": self.streams.streams[0].sigma}

    def privacy(self) -> PrivacyStatement:
        m = self._max_clusters if self.world_clusters is None else self.world_clusters
        statement = self.streams.statement(
            UNIT, "every action is computed from released statistics (each user's exact "
                  "Gram prefix and noisy reward moments, released on a data-independent "
                  "schedule), so every released record's features are public and only its "
                  "reward is noised; clusters, models and communication are post-processing")
        statement.details.update(L=self.config.n_servers, m=m)
        return statement

    @property
    def lockstep_ready(self) -> bool:
        return False

