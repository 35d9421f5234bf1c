"""When a party releases its statistics: a schedule fixed before any data is seen.

Four kinds:

- "fixed": after every `batch` rounds (rounds batch - 1, 2 batch - 1, ...);
- "doubling": after rounds batch - 1, 2 batch - 1, 4 batch - 1, ... (epochs that
  double, as in seed 002 and the batched private linear bandits of Hanna,
  Girgis & Fragouli 2022);
- "geometric": after batch rounds, then whenever the rounds done reach
  max(previous + 1, ceil(growth x previous)) (growth > 1, default 1.25): a model
  acting on the latest release always holds at least 1 / growth of the data
  so far, with about ln(T / batch) / ln(growth) releases;
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

import bisect
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import config_error
from ..validation import check_dim

SCHEDULES = ("fixed", "doubling", "geometric", "every-round")
BATCHES_PER_HORIZON = 32  # the default batch: horizon // 32 rounds, about 32 releases
GROWTH = 1.25  # the geometric schedule's default growth of the rounds between releases


@dataclass(frozen=True)
class ReleaseSchedule:
    """The rounds (0-based) after which releases happen, up to `horizon` rounds."""

    kind: str
    horizon: int
    batch: int = 1
    growth: float = GROWTH
    releases: int = field(init=False)
    _done: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in SCHEDULES:
            raise config_error("schedule", self.kind, f"one of {SCHEDULES}")
        object.__setattr__(self, "horizon", check_dim("horizon", self.horizon))
        object.__setattr__(self, "batch", check_dim("batch", self.batch))
        if self.kind != "every-round" and self.batch > self.horizon:
            raise config_error("batch", self.batch,
                               f"at most the horizon {self.horizon} (no release would happen)")
        growth = self.growth
        if isinstance(growth, bool) or not isinstance(growth, (int, float)) or not (
                math.isfinite(growth) and growth > 1.0):
            raise config_error("growth", growth, "a finite number > 1 (schedule 'geometric')")
        object.__setattr__(self, "growth", float(growth))
        object.__setattr__(self, "_done", self._geometric() if self.kind == "geometric" else ())
        object.__setattr__(self, "releases", self.count(self.horizon))

    def _geometric(self) -> tuple[int, ...]:
        """The rounds done after which a geometric schedule releases, up to the horizon."""
        done = [self.batch]
        while True:
            nxt = max(done[-1] + 1, math.ceil(self.growth * done[-1]))
            if nxt > self.horizon:
                return tuple(done)
            done.append(nxt)

    def is_release(self, t: int) -> bool:
        """Whether a release follows round t (0-based)."""
        if self.kind == "every-round":
            return True
        done = t + 1
        if self.kind == "fixed":
            return done % self.batch == 0
        if self.kind == "geometric":
            i = bisect.bisect_left(self._done, done)
            return i < len(self._done) and self._done[i] == done
        return done % self.batch == 0 and (done // self.batch).bit_count() == 1

    def next_release(self, t: int) -> int | None:
        """The first round r >= t after which a release happens (None: none before the
        horizon): a record of round t enters the release that follows round r."""
        if self.kind == "every-round":
            r = t
        elif self.kind == "fixed":
            r = -(-(t + 1) // self.batch) * self.batch - 1
        elif self.kind == "geometric":
            i = bisect.bisect_left(self._done, t + 1)
            r = self._done[i] - 1 if i < len(self._done) else self.horizon
        else:  # doubling: batch 2^k - 1 for the least k with batch 2^k >= t + 1
            r = self.batch
            while r < t + 1:
                r *= 2
            r -= 1
        return r if r < self.horizon else None

    def count(self, rounds: int) -> int:
        """How many releases follow the first `rounds` rounds."""
        if self.kind == "every-round":
            return rounds
        if self.kind == "fixed":
            return rounds // self.batch
        if self.kind == "geometric":
            return bisect.bisect_right(self._done, rounds)
        return (rounds // self.batch).bit_length()

    def longest_batch(self) -> int:
        """The most rounds one release can cover (the records one increment may hold)."""
        if self.kind == "every-round":
            return 1
        if self.kind == "fixed":
            return self.batch
        if self.kind == "geometric":
            gaps = np.diff(self._done, prepend=0)
            return int(gaps.max())
        return max(self.batch, self.batch << max(self.releases - 2, 0))

    def describe(self) -> dict:
        out = {"schedule": self.kind, "batch": self.batch, "releases": self.releases}
        if self.kind == "geometric":
            out["growth"] = self.growth
        return out


def release_schedule(kind: str, horizon: int, batch: int | None = None,
                     growth: float = GROWTH) -> ReleaseSchedule:
    """A `ReleaseSchedule`, with `batch` defaulting to horizon // 32 (at least 1), or to 1
    for "geometric" (its releases are already spaced by the growth)."""
    if batch is None:
        batch = 1 if kind == "geometric" else max(
            1, check_dim("horizon", horizon) // BATCHES_PER_HORIZON)
    return ReleaseSchedule(kind, horizon, batch, growth)
