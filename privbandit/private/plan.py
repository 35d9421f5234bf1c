"""Release plans: what a private federation releases, when, and with what noise.

`ReleasePlan` holds what every Gaussian continual release of a private
family shares -- the budget (epsilon, delta) per record, the horizon, the
continual-release mechanism, the data-independent schedule and the noise
sampler -- checked once, here; `plan.releases` is the schedule.  A family's
plan builds on it and adds only its own: its sensitivity, its relation and
its calibration (`fclub.privacy.CdpPlan`, `cascade.private.CDPFedC3UCBH`),
or the guard's clustering tests and billboard rates (`GuardPlan`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from privbandit.accounting.validation import check_count, check_delta, check_positive
from privbandit.mechanisms.samplers import Sampler

from ..errors import config_error
from ..privacy import DEFAULT_SAMPLER, resolve_sampler, sampler_name
from .schedule import ReleaseSchedule, release_schedule

MECHANISMS = ("tree", "honaker", "mf")  # privbandit.mechanisms.continual_release names


@dataclass(frozen=True)
class ReleasePlan:
    """The shared part of a private family's plan (see the module docstring).

    epsilon > 0 and delta in (0, 1) (Gaussian noise): the budget per record;
    horizon: T rounds; mechanism: "tree", "honaker" or "mf"; schedule:
    "fixed" | "doubling" | "every-round", with `batch` rounds (default
    T // 32); sampler: a `Sampler` or its name (`privacy.resolve_sampler`).
    """

    epsilon: float
    delta: float
    horizon: int
    mechanism: str = "mf"
    schedule: str = "fixed"
    batch: int | None = None
    sampler: Sampler | str | None = DEFAULT_SAMPLER
    releases: ReleaseSchedule = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "epsilon", check_positive("epsilon", self.epsilon))
        set_(self, "horizon", check_count("horizon", self.horizon, minimum=1))
        delta = check_delta("delta", self.delta)
        if delta == 0.0:
            raise config_error("delta", self.delta, "a number in (0, 1) (Gaussian noise)")
        set_(self, "delta", delta)
        if self.mechanism not in MECHANISMS:
            raise config_error("mechanism", self.mechanism, f"one of {MECHANISMS}")
        set_(self, "sampler", resolve_sampler(self.sampler))
        releases = release_schedule(self.schedule, self.horizon, self.batch)
        set_(self, "releases", releases)
        set_(self, "batch", releases.batch)

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

    def params(self) -> dict:
        """The plan's settings as recorded in a result (sampler by name)."""
        return {"epsilon": self.epsilon, "delta": self.delta, "mechanism": self.mechanism,
                "schedule": self.schedule, "batch": self.batch,
                "sampler": sampler_name(self.sampler)}


@dataclass(frozen=True)
class GuardPlan(ReleasePlan):
    """The private side of a guarded federation (`GuardedFederatedClub`, `GuardedPrivateCascade`).

    The release keys as `ReleasePlan` (batch default T // 32, so about 32
    releases); resolution, level, miss: the clustering tests
    (`private.NoiseAwareClustering`);
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
