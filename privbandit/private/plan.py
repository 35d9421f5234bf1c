"""Release plans: what a private family releases, when, with what noise, and at what cost.

`ReleasePlan` is the one plan every private family uses.  It holds the
budget (epsilon, delta) per record, the horizon, the mechanism -- a
continual-release one by name ("tree", "honaker", "mf": Gaussian, delta in
(0, 1)) or "laplace" (one pure-DP release per step, delta = 0) -- the
data-independent schedule (`plan.releases`) and the noise sampler, checked
once, here.  It builds what leaves a party and what it costs: `stream` (a
Gaussian continual release calibrated to the budget, or at a given sigma),
`laplace_means` (Laplace means of n values in [lo, hi]), `ledger` (a unit's
ledger with the plan's budget and accountant, the statement declared) and
`statement` (the run's guarantee).  A family adds only its sensitivity, its
relation and its calibration (`fclub.privacy.CdpPlan` splits the budget
between a stream and a detection release), or the guard's clustering tests
and billboard rates (`GuardPlan`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from privbandit.accounting.ledger import Ledger
from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.accounting.validation import check_count, check_delta, check_positive
from privbandit.mechanisms.continual import continual_release
from privbandit.mechanisms.laplace import LaplaceMeans
from privbandit.mechanisms.reward_only import RewardOnlyRelease
from privbandit.mechanisms.samplers import Sampler
from privbandit.mechanisms.streaming import ContinualRelease

from ..errors import config_error
from ..privacy import DEFAULT_SAMPLER, is_float_safe, resolve_sampler, sampler_name
from ..validation import BOUND_SLACK
from .schedule import GROWTH, ReleaseSchedule, release_schedule

MECHANISMS = ("tree", "honaker", "mf")  # privbandit.mechanisms.continual_release names
LAPLACE = "laplace"  # one pure-DP release per step


@dataclass(frozen=True)
class ReleasePlan:
    """The shared part of a private family's plan (see the module docstring).

    epsilon > 0 and delta: the budget per record (in (0, 1) for the Gaussian
    mechanisms, 0 for "laplace"); horizon: T rounds; mechanism: "tree",
    "honaker", "mf" or "laplace"; schedule: "fixed" | "doubling" |
    "geometric" | "every-round", with `batch` rounds (default T // 32; 1 for
    "geometric") and `growth` (the geometric schedule's ratio); sampler: a
    `Sampler` or its name (`privacy.resolve_sampler`).
    """

    epsilon: float
    delta: float
    horizon: int
    mechanism: str = "mf"
    schedule: str = "fixed"
    batch: int | None = None
    sampler: Sampler | str | None = DEFAULT_SAMPLER
    growth: float = GROWTH
    releases: ReleaseSchedule = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "epsilon", check_positive("epsilon", self.epsilon))
        set_(self, "horizon", check_count("horizon", self.horizon, minimum=1))
        if self.mechanism not in (*MECHANISMS, LAPLACE):
            raise config_error("mechanism", self.mechanism, f"one of {(*MECHANISMS, LAPLACE)}")
        delta = check_delta("delta", self.delta)
        if self.mechanism == LAPLACE and delta != 0.0:
            raise config_error("delta", self.delta, "0 for the pure-DP Laplace mechanism")
        if self.mechanism != LAPLACE and delta == 0.0:
            raise config_error("delta", self.delta, "a number in (0, 1) (Gaussian noise)")
        set_(self, "delta", delta)
        set_(self, "sampler", resolve_sampler(self.sampler))
        releases = release_schedule(self.schedule, self.horizon, self.batch, self.growth)
        set_(self, "releases", releases)
        set_(self, "batch", releases.batch)
        set_(self, "growth", releases.growth)

    def release_schedule(self) -> ReleaseSchedule:
        return self.releases

    def check_paper_calibration(self, calibration: str) -> None:
        """The papers' node formula is the tree's over every round: refuse it elsewhere."""
        if calibration == "paper" and (self.mechanism, self.schedule) != ("tree",
                                                                          "every-round"):
            raise config_error(
                "calibration", calibration,
                f"'tight' with mechanism {self.mechanism!r} and schedule {self.schedule!r} "
                "(the paper's formula is the tree's over every round)")

    @property
    def accountant(self) -> str:
        """The ledgers' accountant: the exact Gaussian one, or pure DP for "laplace"."""
        return "pure-dp" if self.mechanism == LAPLACE else "exact-gaussian"

    @property
    def float_safe(self) -> bool:
        return is_float_safe(self.sampler)

    def stream(self, shape: tuple[int, ...], *, sigma: float | None = None,
               **options: Any) -> ContinualRelease:
        """A continual release of the plan's mechanism over its releases, calibrated to the
        budget (or at `sigma`), with the plan's sampler; `options`: the family's
        sensitivity and clipping (`l2_sensitivity`, `clip_norm`, `symmetric`, ...)."""
        self._check_stream_mechanism()
        budget = {"epsilon": self.epsilon, "delta": self.delta} if sigma is None else {
            "sigma": sigma}
        return continual_release(
            self.mechanism, shape, self.releases.releases, sampler=self.sampler,
            records_per_step=self.releases.longest_batch(), **budget, **options)

    def reward_stream(self, dim: int, *, feature_bound: float,
                      reward_range: tuple[float, float] = (0.0, 1.0), records_per_round: int = 1,
                      changed_records: int = 1, sigma: float | None = None) -> RewardOnlyRelease:
        """A reward-only continual release (`mechanisms.RewardOnlyRelease`) of the plan's
        mechanism over its releases, calibrated to the budget (or at `sigma`): for records
        whose features are public under the interactive relation (the Gram matrix travels
        exactly).  records_per_round: the records one round adds; changed_records: those
        whose rewards one neighbouring change alters."""
        self._check_stream_mechanism()
        budget = {"epsilon": self.epsilon, "delta": self.delta} if sigma is None else {
            "sigma": sigma}
        return RewardOnlyRelease(
            dim, self.releases.releases, mechanism=self.mechanism, feature_bound=feature_bound,
            reward_range=reward_range,
            records_per_step=records_per_round * self.releases.longest_batch(),
            changed_records=changed_records, sampler=self.sampler, **budget)

    def record_stream(self, relation: Relation, dim: int, *, feature_bound: float,
                      reward_range: tuple[float, float] = (0.0, 1.0)
                      ) -> ContinualRelease | RewardOnlyRelease:
        """The stream a record (x, y) enters, as the relation decides: under the
        interactive relation the features of a record whose action came from released
        data are public, so only the reward part is noised (`reward_stream`); under a
        relation that replaces whole records (record-level, seed 000's cluster-level)
        the full statistic z z^T, z = [x; y], is (symmetric noise, replace-one Frobenius
        sensitivity sqrt(2) c, c = B^2 + max |y|^2)."""
        if relation is Relation.INTERACTIVE:
            return self.reward_stream(dim, feature_bound=feature_bound,
                                      reward_range=reward_range)
        if relation not in (Relation.RECORD, Relation.CLUSTER):
            raise config_error("relation", relation, "interactive, record-level or "
                               "cluster-level (a relation records are released under)")
        top = max(abs(reward_range[0]), abs(reward_range[1]))
        bound = (feature_bound**2 + top**2) * (1.0 + BOUND_SLACK)
        return self.stream((dim + 1, dim + 1), l2_sensitivity=math.sqrt(2.0) * bound,
                           clip_norm=bound, symmetric=True)

    def _check_stream_mechanism(self) -> None:
        if self.mechanism == LAPLACE:
            raise config_error("mechanism", self.mechanism, f"one of {MECHANISMS} for a stream")

    def laplace_means(self, n: int, lo: float = 0.0, hi: float = 1.0) -> LaplaceMeans:
        """The pure-DP release of means over `n` values in [lo, hi] at the plan's epsilon."""
        return LaplaceMeans(self.epsilon, lo, hi, n, out_of_bounds="reject",
                            sampler=self.sampler)

    def ledger(self, unit: str, *, statement: PrivacyStatement | None = None,
               budget: float | None = None, accountant: str | None = None) -> Ledger:
        """A ledger for `unit` with the plan's budget (or `budget`) and accountant (or a
        family's choice of `accountant`), `statement` declared."""
        ledger = Ledger(unit, self.epsilon if budget is None else budget, self.delta,
                        accountant=self.accountant if accountant is None else accountant)
        if statement is not None:
            ledger.declare(statement)
        return ledger

    def statement(self, relation: Relation, unit: str, summary: str,
                  details: dict[str, Any] | None = None, *, epsilon: float | None = None,
                  accountant: str | None = None) -> PrivacyStatement:
        """The guarantee of the plan's releases under `relation` for `unit` (at `epsilon`
        when a family states another figure, e.g. a total)."""
        return PrivacyStatement(
            relation, self.epsilon if epsilon is None else epsilon, self.delta,
            self.accountant if accountant is None else accountant, self.float_safe,
            unit=unit, details=dict(details or {}), summary=summary)

    def params(self) -> dict:
        """The plan's settings as recorded in a result (sampler by name)."""
        return {"epsilon": self.epsilon, "delta": self.delta, "mechanism": self.mechanism,
                "schedule": self.schedule, "batch": self.batch, "growth": self.growth,
                "sampler": sampler_name(self.sampler)}


@dataclass(frozen=True)
class GuardPlan(ReleasePlan):
    """The private side of a guarded federation (`GuardedFederatedClub`, `GuardedPrivateCascade`).

    The release keys as `ReleasePlan` (batch default T // 32, so about 32
    releases); resolution, level, miss: the clustering tests
    (`clustering.NoiseAwareClustering`);
    share: the fraction of the confidence failure probability given to the
    federated model (the own model keeps the rest); rate: the share of
    rounds on the shared (released) track of a `Billboard`; merged_rate:
    the share for a unit whose released cluster spans other parties (the
    larger of it and rate applies); cap: records a unit shares at `rate`
    before it stops unless merged (None: no cap).
    """

    resolution: float = 0.2
    level: float = 0.99
    miss: float = 1e-3
    share: float = 0.1
    rate: float = 0.01
    merged_rate: float = 0.2
    cap: int | None = 16

    def __post_init__(self) -> None:
        super().__post_init__()
        share = check_positive("share", self.share)
        if not share < 1.0:
            raise config_error("share", self.share, "a fraction in (0, 1)")
        for name in ("rate", "merged_rate"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and 0.0 < value <= 1.0):
                raise config_error(name, value, "a share of rounds in (0, 1]")
        if self.cap is not None:
            object.__setattr__(self, "cap", check_count("cap", self.cap, minimum=1))

    def params(self) -> dict:
        """The plan's settings as recorded in a result (sampler by name)."""
        return {**super().params(), "resolution": self.resolution, "level": self.level,
                "miss": self.miss, "share": self.share, "rate": self.rate,
                "merged_rate": self.merged_rate, "cap": self.cap}
