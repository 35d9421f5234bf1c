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

With `release = "cluster-sum"` (plan) each cluster's model is instead one
noisy sum of its members' moments (`private.membership.ClusterReleases`
through the seam `private.sums.TrustedSums`, a trusted aggregator), the
per-user streams kept, at `detection_share` of the budget, for detection and
for standing in for the parts that leave a cluster until they are released
once; the model mixes the cluster sum with the members' detection sums by
inverse variance (two estimates of the same records' moments).

With `release = "routed"` no record's budget is split: each record goes, at
the full budget, to exactly one stream chosen before its reward is read
(`private.routing.RoutedSums`): its user's per-user stream until the user is
settled (its cluster kept all its co-members for `settle` releases and its
own releases can already tell it from the rest of its cluster at
`resolution`), then -- but for a public-coin share `keep` left on its own
stream for detection -- its cluster's continual release over secure sums
among the local servers (`private.routing.ClusterSums`,
`mechanisms.SecureRewardOnlyRelease`: one stream's noise, carried by the
servers' discrete Gaussian shares).  A cluster's model sums its members'
per-user prefixes and every cluster-stream piece they hold whole; its noise
bound is the sum of the parts' bounds.

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
With `release = "cluster-sum"`: the composition `ClusterReleases` proves
(detection stream, one cluster stream step and at most `history_limit`
one-shot releases per record), in one ledger per local server; the global
server is trusted with the cluster sums' raw moments.
With `release = "routed"`: the record enters one step of one stream, its
user's (exact Gaussian event, ledger "party p") or a cluster's secure stream
(zCDP event of the secure sum, ledger "party p (cluster sums)"), each
calibrated to the whole budget; the route is a function of earlier releases
and public coins, so the neighbours route alike along a forced transcript
and the record's loss is that of the one stream it entered (parallel
composition; proof in `private.routing`).

Trust model.  Each local server holds its own users' raw records and acts
for them (its users are not protected from it); it sends only the per-user
releases (noised by itself) and, with "routed", its masked shares of the
cluster streams.  The global server sees every per-user release, every
cluster stream's masked shares and noisy sums (never a server's records or
unmasked share), and computes the partition, routing and models, which it
sends down (post-processing, published).  The other local servers receive
only those post-processed values.  A coalition of the global server with
c' of the n local servers removes those servers' noise shares: the other
servers' routed records are then protected at Gaussian-DP mu sqrt(n / (n -
c')) instead of mu (the calibration assumes no collusion; `private.routing`);
their per-user releases keep the full guarantee.
Sources: seed 000 Algorithms 1-2 and Definition 1's setting; Shariff &
Sheffet (2018) and Hanna, Girgis & Fragouli (2022) for noising only the
rewards' part; the continual-release mechanisms' own sources.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.accountants import ExactGaussianAccountant
from privbandit.accounting.calibration import gdp_mu
from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.accounting.validation import check_count, check_nonnegative, check_positive
from privbandit.mechanisms.publication import Publication
from privbandit.mechanisms.secure_continual import SECURE_CONTINUAL_MECHANISMS

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
    ClusterReleases,
    ExactGramModel,
    GuardedReports,
    ReleasePlan,
    RewardNoiseRidge,
    RewardStreams,
    TrustedSums,
    exact_gram_scores,
)
from ..private.routing import ClusterSums, RoutedSums
from ..private.sums import TRUST
from ..validation import check_items, check_probability, check_user, checked_observation
from .config import FclubConfig

UNIT = "one user-round's reward in the environment"
CLUSTERINGS = ("split-merge", "cliques")
RELEASES = ("cluster-sum", "per-user", "routed")
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
    utility knobs, the guarantee is the same for every value), and `release`: "per-user"
    (every user's stream, summed; the default) or "cluster-sum" (one sum per cluster,
    split/merge only) with its shares of mu^2: `detection_share` (per-user streams),
    `history_share` (spread over `history_limit` one-shot releases per user) and the rest
    (cluster streams), and `settle` (releases a cluster stands before the parts it took
    are released; 0: at once), or "routed" (each record, at the full budget, to its
    user's stream or, once the user is settled, to its cluster's secure sum, split/merge
    only; `private.routing`) with `keep` (the public-coin share of a settled user's
    records kept on its own stream) and `settle` (releases a user's cluster must keep all
    its co-members before the user is settled)."""

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
    release: str = "per-user"
    detection_share: float = 0.5
    history_share: float = 0.2
    history_limit: int = 2
    settle: int = 0
    keep: float = 0.1

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "failure", check_probability("failure", self.failure))
        object.__setattr__(self, "resolution", check_positive("resolution", self.resolution))
        if self.clustering not in CLUSTERINGS:
            raise config_error("clustering", self.clustering, f"one of {CLUSTERINGS}")
        if self.release not in RELEASES:
            raise config_error("release", self.release, f"one of {RELEASES}")
        if self.release != "per-user" and self.clustering != "split-merge":
            raise config_error("clustering", self.clustering, "'split-merge' with release = "
                               f"{self.release!r} (cluster sums follow its sets)")
        shares = (check_probability("detection_share", self.detection_share),
                  check_probability("history_share", self.history_share))
        if not sum(shares) < 1.0:
            raise config_error("detection_share + history_share", sum(shares),
                               "less than 1 (the rest is the cluster streams' share)")
        object.__setattr__(self, "history_limit",
                           check_count("history_limit", self.history_limit, minimum=1))
        object.__setattr__(self, "settle", check_count("settle", self.settle, minimum=0))
        if self.release == "routed" and self.mechanism not in SECURE_CONTINUAL_MECHANISMS:
            raise config_error("mechanism", self.mechanism, "one of "
                               f"{tuple(SECURE_CONTINUAL_MECHANISMS)} with release = 'routed' "
                               "(the cluster sums' secure streams)")
        keep = check_nonnegative("keep", self.keep)
        if not keep < 1.0:
            raise config_error("keep", self.keep, "a number in [0, 1)")
        object.__setattr__(self, "keep", keep)

    def mus(self) -> tuple[float, float, float]:
        """The Gaussian-DP mu of (the detection stream, a cluster stream, one history
        release) for one record: mu^2 = their squares, the history's times history_limit."""
        mu = gdp_mu(self.epsilon, self.delta)
        once = math.sqrt(self.history_share / self.history_limit)
        rest = 1.0 - self.detection_share - self.history_share
        return math.sqrt(self.detection_share) * mu, math.sqrt(rest) * mu, once * mu

    def params(self) -> dict:
        out = {**super().params(), "failure": self.failure, "resolution": self.resolution,
               "level": self.level, "miss": self.miss, "release": self.release,
               "clustering": self.clustering,
               **{k: getattr(self, k) for k in SPLIT_MERGE_KEYS}}
        if self.release == "cluster-sum":
            out.update(detection_share=self.detection_share, history_share=self.history_share,
                       history_limit=self.history_limit, settle=self.settle)
        if self.release == "routed":
            out.update(keep=self.keep, settle=self.settle)
        return out

    def split_merge(self, config: FclubConfig) -> SplitMergeClustering:
        """The split/merge rule of this plan for `config`'s dimension and radius."""
        return SplitMergeClustering(
            config.dim, lam=config.lam, noise_scale=config.noise_scale,
            theta_bound=config.theta_bound, **{k: getattr(self, k) for k in SPLIT_MERGE_KEYS})


class ReleasedFederatedClub(GuardedReports, Policy):
    """See the module docstring.  config: `FclubConfig` (its sync mode and det-ratio
    thresholds are not read: the schedule replaces them); plan: `ReleasedPlan`;
    world_clusters: Definition 1's m, stated in the guarantee's details (default: the
    most clusters detected); masks: the secure sums' pairwise masks with release =
    "routed" (None: simulated, `mechanisms.SimulatedMasks`; or a key-agreement scheme,
    `mechanisms.AgreedMasks`).  Shapes: items (K, d) with ||x_k|| <= item_bound."""

    name = "cdp-fclub-dc"
    unit = UNIT
    released_by = "local server"
    relation = Relation.INTERACTIVE

    def __init__(self, config: FclubConfig, plan: ReleasedPlan, *,
                 world_clusters: int | None = None, masks=None) -> None:
        if not isinstance(config, FclubConfig):
            raise config_error("config", config, "an FclubConfig")
        if not isinstance(plan, ReleasedPlan):
            raise config_error("plan", plan, "a ReleasedPlan")
        self.config, self.plan, self.world_clusters = config, plan, world_clusters
        d, n = config.dim, config.n_users
        self.server = config.servers()
        self.server_users = [np.flatnonzero(self.server == s) for s in range(config.n_servers)]
        self.schedule = plan.releases
        self.sums: ClusterReleases | None = None
        self.routes: RoutedSums | None = None
        self._coins: np.random.Generator | None = None  # public coins of the routing
        if plan.release == "per-user":
            self.streams = RewardStreams(self.server_users, d, plan,
                                         feature_bound=config.item_bound)
        elif plan.release == "routed":
            self.streams, self.routes = self._routed(masks)
        else:
            self.streams, self.sums = self._cluster_sums()
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

    def _cluster_sums(self) -> tuple[RewardStreams, ClusterReleases]:
        """The detection's per-user streams and the cluster sums, at their shares of the
        budget, charged to one ledger per local server."""
        plan, config, d = self.plan, self.config, self.config.dim
        mu_detect, mu_stream, mu_once = plan.mus()
        schedule = plan.releases
        sums = TrustedSums(config.n_users, d, mechanism=plan.mechanism,
                           releases=schedule.releases, records_per_step=schedule.longest_batch(),
                           horizon=plan.horizon, feature_bound=config.item_bound,
                           sampler=plan.sampler)
        probe = plan.reward_stream(d, feature_bound=config.item_bound, sigma=1.0)
        ledgers = [plan.ledger(f"party {s}") for s in range(config.n_servers)]
        streams = RewardStreams(self.server_users, d, plan, feature_bound=config.item_bound,
                                sigma=_mu(probe.event) / mu_detect, ledgers=ledgers)
        releases = ClusterReleases(
            sums, streams, self.server, sigma_stream=_mu(sums.stream_event(1.0)) / mu_stream,
            sigma_once=_mu(sums.once_event(1.0)) / mu_once, limit=plan.history_limit,
            settle=plan.settle, ledgers=ledgers, failure=plan.failure / 4.0)
        return streams, releases

    def _routed(self, masks) -> tuple[RewardStreams, RoutedSums]:
        """Every user's stream at the full budget, and the routing of settled users' records
        to cluster sums over secure sums among the local servers (`private.routing`), at
        the full budget too, charged to ledgers of their own (a record enters one of the
        two: parallel composition)."""
        plan, config, d = self.plan, self.config, self.config.dim
        streams = RewardStreams(self.server_users, d, plan, feature_bound=config.item_bound)
        schedule = plan.releases
        sums = ClusterSums(streams.publications, d, mechanism=plan.mechanism,
                           releases=schedule.releases, records_per_step=schedule.longest_batch(),
                           feature_bound=config.item_bound, epsilon=plan.epsilon,
                           delta=plan.delta, masks=masks)
        ledgers = [plan.ledger(f"party {s} (cluster sums)", accountant="zcdp")
                   for s in range(config.n_servers)]
        return streams, RoutedSums(sums, self.server, keep=plan.keep, settle=plan.settle,
                                   ledgers=ledgers, failure=plan.failure / 4.0)

    # -- the round -----------------------------------------------------------------------
    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        self._rng = rng
        if self.sets is None and t >= self._next_phase:
            self.start_phase(t)
        k = self._serving[check_user(user, self.config.n_users)]
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
        if self.routes is not None and self.routes.settled[user] and self.routes.takes(
                user, self._public_coins()):  # coins spawned at the first settled record
            self.routes.enter(user, (x, y), self.schedule)
        else:
            self.streams.enter(user, (x, y), by=PUBLIC)
        if self.sums is not None:
            self.sums.observe(user, x, y)
        if self.schedule.is_release(t):
            self._release(t)

    def _public_coins(self) -> np.random.Generator:
        """The routing's coins: a child of the policy stream, drawn before any reward is
        read (public: the same in both neighbours)."""
        if self._coins is None:
            self._coins = self._rng.spawn(1)[0]
        return self._coins

    def _release(self, t: int) -> None:
        self.streams.release(self._rng)
        if self.sums is not None:
            self.sums.release(self._rng)
        shares = 0 if self.routes is None else self.routes.release(self._rng)
        for s, users in enumerate(self.server_users):
            self._comm.record(UPLOAD, int(users.size), int(users.size) * self._msg, round=t,
                              sender=party("server", s))
            if shares:  # one masked share (d words of 64 bits) to each cluster stream stepped
                self._comm.record(UPLOAD, shares, shares * self.config.dim * 8, round=t,
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
        self.labels = smallest[self._cluster_of]  # the served clusters (`_serve`)
        self._max_clusters = max(self._max_clusters, len(self._groups))
        self._serve()
        self._models()

    def _serve(self) -> None:
        """The partition the models follow (the detected one; with cluster sums, its
        sums follow it: `ClusterReleases.repartition`)."""
        self._serving, self._serving_groups = self._cluster_of, self._groups
        if self.sums is not None:
            self.sums.repartition(self._groups, self._rng)
        if self.routes is not None:
            st = self.streams
            self.routes.repartition(self._cluster_of, self.clustering.powered(
                st.released, st.variances, st.counts, self._groups))

    def _publish(self) -> None:
        """What the global server sends the local servers: the partition, and each cluster's
        model (theta, M^-1, the radius and the noise bound), published."""
        self.publication.partition(self.labels)
        self.publication.value("models", np.concatenate((
            self.theta.ravel(), self.inv.ravel(), self.beta, self.noise)))

    def _models(self) -> None:
        """Every global cluster's model from its members' latest releases."""
        st, d = self.streams, self.config.dim
        m = len(self._serving_groups)
        self.inv, self.theta = np.empty((m, d, d)), np.empty((m, d))
        self.beta, self.noise = np.empty(m), np.empty(m)
        for k, members in enumerate(self._serving_groups):
            if self.sums is not None:
                model = self.ridge.model(*self._pooled(k, members))
            elif self.routes is not None:
                model = self._routed_model(members)
            else:
                model = self.ridge.model(st.gram[members].sum(axis=0),
                                         st.moments[members].sum(axis=0),
                                         st.noise_bound(members.size, self._failure))
            self.inv[k], self.theta[k] = model.inverse, model.theta
            self.beta[k], self.noise[k] = model.beta, model.noise_bound

    def _pooled(self, k: int, members: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        """(Gram, moments, noise bound) of cluster k: the inverse-variance mix of its cluster
        sum and the sum of its members' detection prefixes, two unbiased estimates of the
        same records' moments with independent noises."""
        gram, moments, bound, variance = self.sums.model(k)
        st = self.streams
        other = members.size * st.variance
        if variance <= 0.0 or other <= 0.0:
            return gram, moments, bound
        w = other / (other + variance)  # the cluster sum's weight
        mixed = w * moments + (1.0 - w) * st.moments[members].sum(axis=0)
        detected = st.noise_bound(members.size, self._failure / 2.0)
        return gram, mixed, w * bound + (1.0 - w) * detected

    def _routed_model(self, members: np.ndarray) -> ExactGramModel:
        """The model of a cluster with release = "routed": its members' per-user prefixes
        plus every cluster-stream piece they hold whole (`RoutedSums.pieces_of`), the noise
        bound the sum of the parts' (triangle inequality).  (Dropping the per-user part
        once the pieces are narrower measured worse: docs/private_federation.md.)"""
        st = self.streams
        gram, moments, bound, _ = self.routes.pieces_of(members)
        return self.ridge.model(gram + st.gram[members].sum(axis=0),
                                moments + st.moments[members].sum(axis=0),
                                bound + st.noise_bound(members.size, self._failure / 2.0))

    # -- reporting -------------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        out = {**self.config.params(), **self.plan.params(),
               "sigma": self.streams.streams[0].sigma}
        if self.routes is not None:
            out["sigma_cluster"] = self.routes.sums.sigma
        return out

    def ledgers(self) -> list:
        """One ledger per local server; with release = "routed" a second per server, for
        its records routed to cluster sums (each record is paid by exactly one)."""
        return list(self.streams.ledgers) + ([] if self.routes is None else self.routes.ledgers)

    def privacy(self) -> PrivacyStatement:
        m = self._max_clusters if self.world_clusters is None else self.world_clusters
        sums = "" if self.sums is None else (
            "; each cluster's model is one noisy sum of its members' moments, its membership "
            "changing only as private.membership proves (one stream step per record, at most "
            f"{self.plan.history_limit} re-releases of a user's records); trust: {TRUST}")
        statement = self.streams.statement(
            UNIT, "every action is computed from released statistics (each user's exact "
                  "Gram prefix and noisy reward moments, released on a data-independent "
                  "schedule), so every released record's features are public and only its "
                  "reward is noised; clusters, models and communication are post-processing"
                  + sums)
        if self.routes is not None:
            statement = self.streams.statement(
                UNIT, "every action is computed from released statistics, so every released "
                      "record's features are public and only its reward is noised; each "
                      "record enters, at the full budget, exactly one stream chosen before its "
                      "reward is read: its user's (exact Gram prefix, noisy reward moments) "
                      "or, once the user is settled, its cluster's sum over secure sums among "
                      "the local servers (private.routing; parallel composition, nothing "
                      "split or composed); clusters, routing, models and communication are "
                      "post-processing; trust: " + self.routes.sums.trust_model)
            statement.details.update(release="routed (secure sums)", keep=self.plan.keep,
                                     settle=self.plan.settle,
                                     sigma_cluster=self.routes.sums.sigma)
        statement.details.update(L=self.config.n_servers, m=m)
        if self.sums is not None:
            mus = dict(zip(("mu_detection", "mu_stream", "mu_once"), self.plan.mus(),
                           strict=True))
            statement.details.update(release="cluster-sum (trusted aggregator)",
                                     history_limit=self.plan.history_limit, **mus)
        return statement

    @property
    def lockstep_ready(self) -> bool:
        return False



def _mu(event) -> float:
    """The Gaussian-DP mu of an event for one record."""
    return ExactGaussianAccountant().compose(event).mu
