"""`CdpPlan`: how CDP-FCLUB-DC spends (epsilon, delta) and what noise it adds.

Where the noise goes (privbandit's reading of seed 000, Algorithms 1-5).  A
record is one observation z = [x; y] of a user; its statistic is z z^T, a
(d+1) x (d+1) matrix whose top-left block is x x^T and whose last column holds
y x (the layout of Algorithm 5; H is the top-left block and h the first d
entries of the last column, never a column overlapping H).  Each record meets:

- the tree privatizer (`privbandit.mechanisms.TreePrivatizer`, seed 000 Algorithm 5) of
  the local cluster it belongs to, renewed when the cluster structure
  changes: nu = ceil(log2 T) + 1 Gaussian nodes of std `sigma_tree`.  Every
  asynchronous upload is the difference of two noisy prefix sums of that
  tree, and the upload trigger reads those noisy prefixes;
- one per-user release of the user's phase increment (its records since the
  previous phase), a symmetric Gaussian of std `sigma_det`
  (`privbandit.mechanisms.SymmetricGaussianMatrix`).  Local edge deletion (eq. 3), the
  phase uploads (Algorithm 2, line 5) and the renewal of global statistics are
  computed from these noisy per-user statistics only.

So everything that leaves a local cluster -- uploaded statistics, the local
partition, the times of uploads and downloads -- is post-processing of those
Gaussian releases (arrival times and counts are the same in neighbouring
inputs of Definition 1, so they are public).

Calibration.  With GDP the record's cost is mu^2 = nu (s / sigma_tree)^2 +
(s / sigma_det)^2; `detection_share` f puts f mu^2 on the per-user release.
"tight": mu = mu*(epsilon, delta) of the exact Gaussian accountant
(`privbandit.accounting.calibrate_gaussian_sigma`).  "paper": the node variance of seed
000 Algorithm 5 line 3, 64 k ln(2/delta) s^2 / epsilon^2
(`privbandit.accounting.PAPER_TREE_VARIANCES["seed000"]`), with k = nu / (1 - f) nodes
(the per-user release counted as the equivalent number of tree nodes), so both
calibrations split the budget alike and differ only in the formula.

Noise bounds (Definition 2).  A sum of independent symmetric node noises with
per-entry variances summing to v is one symmetric Gaussian with off-diagonal
variance v.  Its d x d block N has ||N||_op <= rho(v) = sqrt(v) (2 sqrt(2d) +
2 sqrt(ln(1/a))) with probability >= 1 - a (Gordon: E||Z|| <= 2 sqrt(d); N =
(Z + Z^T)/sqrt 2 is sqrt(2)-Lipschitz in Z; Gaussian concentration), and the
noise h of the moment vector has ||h|| <= sqrt(v) (sqrt d + sqrt(2 ln(1/a))),
with a = failure / (T n) (a union bound over rounds and local clusters).
Statistics are shifted by 2 rho I, so the noise plus shift has eigenvalues in
[rho, 3 rho]: rho_min = lam + rho, rho_max = lam + 3 rho, kappa =
||h||_max / sqrt(rho_min), and the radius is Lemma 1's

    beta = sigma_0 sqrt(2 ln(m L / alpha) + d ln(rho_max / rho_min + n / (d rho_min)))
           + S sqrt(rho_max) + kappa

(the Shariff & Sheffet 2018 form; seed 000 prints sqrt(L') rho_max + sqrt(L')
kappa, but our rho already bounds the summed noise of all L' contributions).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from privbandit.accounting import calibration as calib
from privbandit.accounting.accountants import ExactGaussianAccountant
from privbandit.accounting.events import (
    ComposedEvent,
    FactorizationEvent,
    GaussianEvent,
    NotDifferentiallyPrivate,
    PrivacyEvent,
    TreeAggregationEvent,
)
from privbandit.accounting.ledger import Ledger
from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.accounting.validation import check_positive
from privbandit.mechanisms.gaussian import SymmetricGaussianMatrix
from privbandit.mechanisms.samplers import Sampler
from privbandit.mechanisms.streaming import ContinualRelease

from ..errors import config_error
from ..privacy import DEFAULT_SAMPLER, sampler_name
from ..private.plan import ReleasePlan
from ..private.schedule import GROWTH, ReleaseSchedule
from ..validation import BOUND_SLACK, check_dim

CALIBRATIONS = ("tight", "paper")
ACT_ON = ("released", "raw")
DETECTIONS = ("private", "noise-aware", "raw")
RELATION = ("cluster-level (seed 000 Definition 1): one observation (x_t, y_t) of one "
            "local cluster differs, at the same time slot")
INTERACTIVE_UNIT = ("interactive: one user-round's reward in the environment differs; the "
                    "view is every release of the run")
_UNIT_ROUNDOFF = 2.0**-53


def _unit_mu(event: PrivacyEvent) -> float:
    """Gaussian-DP mu of a continual-release event (its whole stream, one record)."""
    if isinstance(event, TreeAggregationEvent):
        return event.node_event.mu * math.sqrt(event.nodes_per_record)
    if isinstance(event, FactorizationEvent):
        return event.release_event.mu
    raise AssertionError(f"no Gaussian-DP reading of {event!r}")  # a new mechanism's bug


def _share(value: object) -> float:
    x = check_positive("detection_share", value)
    if not x < 1.0:
        raise config_error("detection_share", value, "a number in (0, 1)")
    return x


def _paper_spends(epsilon: float, delta: float) -> float:
    """The epsilon at delta of seed 000's calibration for a target epsilon.

    Its noise gives the record a GDP parameter mu = epsilon / sqrt(64 ln(2/delta))
    whatever the horizon, the dimension and the detection share (each release's
    variance scales with its share of the nodes).
    """
    mu = epsilon / math.sqrt(64.0 * math.log(2.0 / delta))
    return ExactGaussianAccountant().compose(GaussianEvent(1.0 / mu, 1.0)).epsilon(delta)


def paper_epsilon_limit(delta: float) -> float:
    """The largest epsilon that the "paper" calibration certifies at `delta` (bisection).

    Below it the spent epsilon is at most the target; the spent epsilon grows
    quadratically in the target (mu^2 / 2), so beyond one crossing it exceeds it.
    """
    lo, hi = 1.0, 2.0
    while _paper_spends(hi, delta) <= hi:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _paper_spends(mid, delta) <= mid else (lo, mid)
    return lo


@dataclass(frozen=True, eq=False)
class CdpPlan:
    """The privacy side of CDP-FCLUB-DC; see the module docstring.

    epsilon, delta: the (epsilon, delta, L, m)-CDP target; horizon: T (fixes
    the trees' depth); dim: d; n_users: n (union bound of the noise bounds);
    calibration: "tight" | "paper"; detection_share: the fraction of mu^2
    given to the per-user releases; detection: "private" (local edge deletion
    reads noisy per-user statistics), "noise-aware" (the same statistics,
    read by tests whose widths count the noise: `privbandit.clustering`) or "raw"
    (the paper's rule: raw statistics; then the run is NOT CDP and every
    ledger notes it); failure:
    alpha of Definition 2 / Lemma 1; item_bound: ||x|| bound (rewards are
    clipped to [0, 1]); sampler: a `Sampler` or its name
    (`privbandit.privacy.resolve_sampler`; default `DEFAULT_SAMPLER`);
    mechanism: each local cluster's continual-release mechanism by name
    ("tree", the paper's; "honaker"; "mf", the square-root factorization);
    its noise variance enters the radius exactly (`stream_variance`, the
    largest prefix-noise variance of that mechanism over its releases);
    schedule, batch: when each local cluster's stream releases
    (`privbandit.private.ReleaseSchedule`): "every-round" (the paper's: every
    observation is one step and the upload trigger reads every prefix), or
    "fixed" / "doubling" batches of `batch` rounds (default horizon // 32),
    each record in exactly one release and the trigger read at release
    rounds only; the stream's horizon counts releases, so a batched stream
    has fewer, less noisy nodes at the same epsilon.  act_on: "released"
    (default: a local cluster recommends from its synchronized noisy
    statistics only, so every released record's action comes from released
    data and the guarantee holds under the interactive relation) or "raw"
    (the paper's: the synchronized statistics plus the raw buffer since the
    last upload; then one changed reward moves later released records, and
    the guarantee holds over realised sequences only -- the `paper` preset).

    Privacy guarantee
    -----------------
    Neighbouring relation: cluster-level, seed 000 Definition 1 (one
    observation of one local cluster replaced).  Sensitivity: ||x|| <= B,
    y in [0, 1], so ||z z^T||_F = ||z||^2 <= c = B^2 + 1 and two records'
    statistics differ by at most sqrt(2) c in Frobenius norm (plus the
    float-arithmetic slack of the trees and of the per-user sums).  Measure:
    every record meets `record_event` = the stream's event (nu tree nodes, or
    the other mechanism's; with batches each record sits in one step, clipped
    on its own) + one per-user release, certified (epsilon, delta)-DP by the
    exact Gaussian (GDP) accountant; everything other clusters observe is
    post-processing.  Release times depend on the round index only (the
    schedule) and uploads on released prefixes only.  Assumptions: the
    horizon T is fixed in advance; counts and arrival times are public (they
    are equal in neighbouring inputs).  Sources: seed 000 Definition 1,
    Algorithm 5; Shariff & Sheffet (2018) Sec. 4; Dong, Roth & Su (2019).
    """

    epsilon: float
    delta: float
    horizon: int
    dim: int
    n_users: int
    calibration: str = "tight"
    detection_share: float = 0.5
    detection: str = "private"
    failure: float = 0.1
    item_bound: float = 1.0
    sampler: Sampler | str | None = DEFAULT_SAMPLER
    mechanism: str = "tree"
    schedule: str = "every-round"
    batch: int | None = None
    act_on: str = "released"
    growth: float = GROWTH
    release: ReleasePlan = field(init=False, repr=False)
    releases: ReleaseSchedule = field(init=False)
    nodes: int = field(init=False)
    record_bound: float = field(init=False)
    sigma_tree: float = field(init=False)
    sigma_det: float = field(init=False)
    tree_event: PrivacyEvent = field(init=False)
    stream_variance: float = field(init=False)
    det_event: GaussianEvent = field(init=False)
    record_event: ComposedEvent = field(init=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        shared = ReleasePlan(self.epsilon, self.delta, self.horizon, self.mechanism,
                             self.schedule, self.batch, self.sampler, self.growth)
        shared.check_paper_calibration(self.calibration)
        set_(self, "release", shared)
        for name in ("epsilon", "delta", "horizon", "sampler", "batch", "growth", "releases"):
            set_(self, name, getattr(shared, name))
        set_(self, "dim", check_dim("dim", self.dim))
        set_(self, "n_users", check_dim("n_users", self.n_users))
        for name, allowed in (("calibration", CALIBRATIONS), ("detection", DETECTIONS),
                              ("act_on", ACT_ON)):
            if getattr(self, name) not in allowed:
                raise config_error(name, getattr(self, name), f"one of {allowed}")
        set_(self, "detection_share", _share(self.detection_share))
        failure = check_positive("failure", self.failure)
        if not failure < 1.0:
            raise config_error("failure", self.failure, "a probability in (0, 1)")
        set_(self, "failure", failure)
        set_(self, "item_bound", check_positive("item_bound", self.item_bound))
        set_(self, "nodes", calib.tree_nodes_per_record(self.releases.releases))
        set_(self, "record_bound", self.item_bound**2 * (1 + BOUND_SLACK) + 1.0)
        unit = self._tree(1.0)
        det_sens = self._det(1.0).event.l2_sensitivity
        sigma_tree, sigma_det = self._calibrate(unit.event, det_sens)
        stream = self._tree(sigma_tree)
        set_(self, "sigma_tree", sigma_tree)
        set_(self, "sigma_det", sigma_det)
        set_(self, "tree_event", stream.event)
        set_(self, "stream_variance", stream.max_prefix_variance())
        set_(self, "det_event", GaussianEvent(sigma_det, det_sens))
        set_(self, "record_event", ComposedEvent((self.tree_event, self.det_event)))
        self._check_certified()

    # -- calibration ----------------------------------------------------------------
    @property
    def sensitivity(self) -> float:
        """Replace-one Frobenius sensitivity of one record's statistic, sqrt(2) c."""
        return math.sqrt(2.0) * self.record_bound

    def _calibrate(self, unit_event: PrivacyEvent, det_sens: float) -> tuple[float, float]:
        """(sigma of the stream, sigma of the per-user release) from the stream's event at
        sigma = 1: with GDP, mu(sigma) = mu(1) / sigma for every continual mechanism."""
        f, nu = self.detection_share, self.nodes
        if self.calibration == "tight":
            mu = 1.0 / calib.calibrate_gaussian_sigma(self.epsilon, self.delta, 1.0)
            return _unit_mu(unit_event) / (mu * math.sqrt(1 - f)), det_sens / (mu * math.sqrt(f))
        tree_sens = unit_event.node_event.l2_sensitivity
        variance = calib.PAPER_TREE_VARIANCES["seed000"]
        sigma_tree = math.sqrt(variance(self.epsilon, self.delta, tree_sens, nu / (1 - f)))
        sigma_det = sigma_tree * (det_sens / tree_sens) * math.sqrt((1 - f) / (f * nu))
        return sigma_tree, sigma_det

    def _check_certified(self) -> None:
        spent = ExactGaussianAccountant().compose(self.record_event).epsilon(self.delta)
        if spent <= self.epsilon * (1 + 1e-9):
            return
        if self.calibration == "paper":  # the formula's own range, a user error
            limit = paper_epsilon_limit(self.delta)
            raise config_error(
                "epsilon", self.epsilon,
                f"at most {limit:.6g} with calibration='paper' at delta={self.delta!r} (seed "
                "000's variance is (epsilon, delta)-DP only up to there, for any horizon; "
                "calibration='tight' takes any epsilon > 0)")
        raise AssertionError(f"calibrated noise spends epsilon={spent!r} > {self.epsilon!r}")

    def spent_epsilon(self) -> float:
        """The epsilon one record actually spends at delta (exact accountant)."""
        return ExactGaussianAccountant().compose(self.record_event).epsilon(self.delta)

    # -- mechanisms -------------------------------------------------------------------
    def _tree(self, sigma: float) -> ContinualRelease:
        d1 = self.dim + 1
        return self.release.stream((d1, d1), sigma=sigma, l2_sensitivity=self.sensitivity,
                                   clip_norm=self.record_bound, symmetric=True)

    def _det(self, sigma: float) -> SymmetricGaussianMatrix:
        d1 = self.dim + 1
        # float error of a sum of up to T records, on both neighbours (Higham's gamma_T)
        n = self.horizon + 1
        gamma = n * _UNIT_ROUNDOFF / (1 - n * _UNIT_ROUNDOFF)
        slack = 2.0 * d1 * gamma * n * self.record_bound
        return SymmetricGaussianMatrix(sigma, self.sensitivity + slack, sampler=self.sampler,
                                       max_entries=d1 * (d1 + 1) // 2)

    def new_tree(self) -> ContinualRelease:
        """A fresh privatizer PVT(l, j) for one local cluster (seed 000 Algorithm 5: the tree;
        or the plan's other continual-release mechanism)."""
        return self._tree(self.sigma_tree)

    def detection_mechanism(self) -> SymmetricGaussianMatrix:
        """The per-user release of phase increments."""
        return self._det(self.sigma_det)

    def open_ledger(self, unit: str) -> Ledger:
        """A ledger for one (server, local cluster, tree), charged for what its records meet."""
        ledger = self.release.ledger(unit, statement=self.unit_statement(unit))
        ledger.charge(self.record_event)
        if self.detection == "raw":
            ledger.note(NotDifferentiallyPrivate(
                "local partition computed from raw user statistics (seed 000 Algorithm 2, "
                "line 3); it is uploaded without noise"))
        return ledger

    # -- Definition 2 ------------------------------------------------------------------
    def _log_inv_failure(self) -> float:
        return math.log(self.horizon * self.n_users / self.failure)

    def matrix_radius(self, variance: float) -> float:
        """rho: a bound on ||N||_op of summed symmetric noise of total node variance `variance`."""
        if variance <= 0.0:
            return 0.0
        d = self.dim
        return math.sqrt(variance) * (2 * math.sqrt(2 * d) + 2 * math.sqrt(self._log_inv_failure()))

    def vector_radius(self, variance: float) -> float:
        """A bound on ||h|| for the matching noise of the moment vector."""
        if variance <= 0.0:
            return 0.0
        return math.sqrt(variance) * (math.sqrt(self.dim) + math.sqrt(2 * self._log_inv_failure()))

    def shift(self, variance: float) -> float:
        """The multiple of I added to noisy statistics: 2 rho (eigenvalues then in [rho, 3 rho])."""
        return 2.0 * self.matrix_radius(variance)

    def beta_terms(self, variance: float, clusters: int, *, lam: float, noise_scale: float,
                   theta_bound: float) -> tuple[float, float, float, float]:
        """(a, r, d rho_min, c): beta(n) = noise_scale sqrt(a + d ln(r + n / (d rho_min))) + c."""
        rho = self.matrix_radius(variance)
        rmin, rmax = lam + rho, lam + 3.0 * rho
        kappa = self.vector_radius(variance) / math.sqrt(rmin)
        a = 2 * math.log(max(clusters, 1) / self.failure)
        return a, rmax / rmin, self.dim * rmin, theta_bound * math.sqrt(rmax) + kappa

    def beta(self, variance: float, count: float, clusters: int, *, lam: float,
             noise_scale: float, theta_bound: float) -> float:
        """Lemma 1's radius from rho_min, rho_max, kappa of the noise actually added."""
        a, r, drmin, c = self.beta_terms(variance, clusters, lam=lam, noise_scale=noise_scale,
                                         theta_bound=theta_bound)
        return noise_scale * math.sqrt(a + self.dim * math.log(r + count / drmin)) + c

    # -- reporting ---------------------------------------------------------------------
    def unit_statement(self, unit: str) -> PrivacyStatement:
        """What one ledger certifies for its (server, local cluster, tree)."""
        return self.release.statement(
            Relation.CLUSTER, unit, f"({self.epsilon:g}, {self.delta:g})-DP for one "
            "observation of this local cluster (seed 000 Definition 1)")

    def statement(self, n_servers: int, n_clusters: int) -> PrivacyStatement:
        """The guarantee the run claims (RunResult.privacy)."""
        cdp = f"({self.epsilon:g}, {self.delta:g}, L={n_servers}, m={n_clusters})-CDP"
        details = {
            "L": n_servers, "m": n_clusters, "calibration": self.calibration,
            "mechanism": self.mechanism, "stream_variance": self.stream_variance,
            **self.releases.describe(),
            "detection": self.detection, "sigma_tree": self.sigma_tree,
            "sigma_detection": self.sigma_det, "nodes_per_record": self.nodes,
            "l2_sensitivity": self.sensitivity, "detection_share": self.detection_share,
            "epsilon_spent_per_record": self.spent_epsilon(),
            "sampler": sampler_name(self.sampler),
        }
        details["act_on"] = self.act_on
        if self.detection == "raw":
            return PrivacyStatement(
                Relation.NONE, unit=RELATION, details=details,
                summary=f"NOT {cdp}: the local partition is computed from raw user statistics "
                        "(the paper's rule); uploaded statistics and timing are private")
        if self.act_on == "raw":
            relation, unit = Relation.CLUSTER, RELATION
            summary = (f"{cdp} (seed 000 Definition 1) over realised sequences only: local "
                       "clusters act on raw buffers, so one changed reward moves later "
                       "released records and the guarantee does NOT hold for the "
                       "environment's data (docs/privacy_relations.md)")
        else:
            relation, unit = Relation.INTERACTIVE, INTERACTIVE_UNIT
            summary = (f"{cdp} and ({self.epsilon:g}, {self.delta:g})-DP for one user-round's "
                       "reward, actions adapting: local clusters act on synchronized noisy "
                       "statistics only, every statistic leaving a local cluster is noised and "
                       "all communication timing is post-processing")
        return self.release.statement(relation, unit, summary, details)
