"""`GuardPlan`: the private side of a guarded federation (what is released, when, and how
clusters are tested), shared by the guarded algorithms of every family."""
from __future__ import annotations

from dataclasses import dataclass

from privbandit.accounting.validation import check_count, check_delta, check_positive
from privbandit.mechanisms.samplers import Sampler

from ..errors import config_error
from ..privacy import DEFAULT_SAMPLER, resolve_sampler, sampler_name
from .schedule import ReleaseSchedule, release_schedule

MECHANISMS = ("tree", "honaker", "mf")


@dataclass(frozen=True)
class GuardPlan:
    """The private side of a guarded federation (`GuardedFederatedClub`, `GuardedPrivateCascade`).

    epsilon, delta: the budget per record; horizon: T; mechanism: "tree",
    "honaker" or "mf"; schedule: "fixed" | "doubling" | "every-round", with
    `batch` rounds (default: T // 32, so about 32 releases); resolution,
    level, miss: the clustering tests (`private.NoiseAwareClustering`);
    share: the fraction of the confidence failure probability given to the
    federated model (the own model keeps the rest); rate: the share of
    rounds on the shared (released) track of a `Billboard`; merged_rate:
    the share for a unit whose released cluster spans other parties (the
    larger of it and rate applies); cap: records a unit shares at `rate`
    before it stops unless merged (None: no cap); sampler: the noise sampler.
    """

    epsilon: float
    delta: float
    horizon: int
    mechanism: str = "mf"
    schedule: str = "fixed"
    batch: int | None = None
    resolution: float = 0.2
    level: float = 0.99
    miss: float = 1e-3
    share: float = 0.1
    rate: float = 0.01
    merged_rate: float = 0.2
    cap: int | None = 16
    sampler: Sampler | str | None = DEFAULT_SAMPLER

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "epsilon", check_positive("epsilon", self.epsilon))
        set_(self, "horizon", check_count("horizon", self.horizon, minimum=1))
        delta = check_delta("delta", self.delta)
        if delta == 0.0:
            raise config_error("delta", self.delta, "a number in (0, 1) (Gaussian noise)")
        if self.mechanism not in MECHANISMS:
            raise config_error("mechanism", self.mechanism, f"one of {MECHANISMS}")
        share = check_positive("share", self.share)
        if not share < 1.0:
            raise config_error("share", self.share, "a fraction in (0, 1)")
        if not (isinstance(self.rate, (int, float)) and 0.0 < self.rate <= 1.0):
            raise config_error("rate", self.rate, "a share of rounds in (0, 1]")
        if not (isinstance(self.merged_rate, (int, float)) and 0.0 < self.merged_rate <= 1.0):
            raise config_error("merged_rate", self.merged_rate, "a share of rounds in (0, 1]")
        if self.cap is not None:
            set_(self, "cap", check_count("cap", self.cap, minimum=1))
        set_(self, "sampler", resolve_sampler(self.sampler))
        set_(self, "batch", release_schedule(self.schedule, self.horizon, self.batch).batch)

    def release_schedule(self) -> ReleaseSchedule:
        return ReleaseSchedule(self.schedule, self.horizon, self.batch)

    def params(self) -> dict:
        """The plan's settings as recorded in a result (sampler by name)."""
        return {"epsilon": self.epsilon, "delta": self.delta, "mechanism": self.mechanism,
                "schedule": self.schedule, "batch": self.batch, "resolution": self.resolution,
                "level": self.level, "miss": self.miss, "share": self.share, "rate": self.rate,
                "merged_rate": self.merged_rate, "cap": self.cap,
                "sampler": sampler_name(self.sampler)}
