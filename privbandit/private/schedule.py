"""When a party releases its statistics: a schedule fixed before any data is seen.

Three kinds:

- "fixed": after every `batch` rounds (rounds batch - 1, 2 batch - 1, ...);
- "doubling": after rounds batch - 1, 2 batch - 1, 4 batch - 1, ... (epochs that
  double, as in seed 002 and the batched private linear bandits of Hanna,
  Girgis & Fragouli 2022);
- "every-round": after every round (the continual release the seed papers use;
  what reads the released prefixes, e.g. a det-ratio trigger, decides when
  they are sent, so timing is post-processing of the releases).

A schedule depends on the round index and the horizon only, never on data:
release times are public, and with "fixed" or "doubling" each record enters
exactly one release (the increment since the previous one).  `releases` is
the number of releases up to the horizon: the horizon of the continual-release
stream, which counts releases, not rounds.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import config_error
from ..validation import check_dim

SCHEDULES = ("fixed", "doubling", "every-round")
BATCHES_PER_HORIZON = 32  # the default batch: horizon // 32 rounds, about 32 releases


@dataclass(frozen=True)
class ReleaseSchedule:
    """The rounds (0-based) after which releases happen, up to `horizon` rounds."""

    kind: str
    horizon: int
    batch: int = 1
    releases: int = field(init=False)

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULES:
            raise config_error("schedule", self.kind, f"one of {SCHEDULES}")
        object.__setattr__(self, "horizon", check_dim("horizon", self.horizon))
        object.__setattr__(self, "batch", check_dim("batch", self.batch))
        if self.kind != "every-round" and self.batch > self.horizon:
            raise config_error("batch", self.batch,
                               f"at most the horizon {self.horizon} (no release would happen)")
        object.__setattr__(self, "releases", self.count(self.horizon))

    def is_release(self, t: int) -> bool:
        """Whether a release follows round t (0-based)."""
        if self.kind == "every-round":
            return True
        done = t + 1
        if self.kind == "fixed":
            return done % self.batch == 0
        return done % self.batch == 0 and (done // self.batch).bit_count() == 1

    def count(self, rounds: int) -> int:
        """How many releases follow the first `rounds` rounds."""
        if self.kind == "every-round":
            return rounds
        if self.kind == "fixed":
            return rounds // self.batch
        return (rounds // self.batch).bit_length()

    def longest_batch(self) -> int:
        """The most rounds one release can cover (the records one increment may hold)."""
        if self.kind == "every-round":
            return 1
        if self.kind == "fixed":
            return self.batch
        return max(self.batch, self.batch << max(self.releases - 2, 0))

    def describe(self) -> dict:
        return {"schedule": self.kind, "batch": self.batch, "releases": self.releases}


def release_schedule(kind: str, horizon: int, batch: int | None = None) -> ReleaseSchedule:
    """A `ReleaseSchedule`, with `batch` defaulting to horizon // 32 (at least 1)."""
    if batch is None:
        batch = max(1, check_dim("horizon", horizon) // BATCHES_PER_HORIZON)
    return ReleaseSchedule(kind, horizon, batch)
