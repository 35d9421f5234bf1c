"""A timing tester: the distribution of release times per neighbour.

    TimingTester(bins=(8, 32), atoms=256, keep=16)

For algorithms whose communication schedule may depend on the data (a
federated agent that uploads when its statistics change enough, a server
that synchronises on a determinant trigger), *when* messages leave is an
observable as much as what they hold.  The audited callable returns, per
run, its release schedule: a 0/1 array (n, T) with 1 at the steps that
released, or release times (n, k) padded with NaN.  The tester searches
events over the whole schedule (atoms), the number of releases and the
first and last release times (`EventSearchTester` on those features), with
the same selection/evaluation split and Bonferroni correction, so its bound
holds for any schedule.  Its findings are distributional: when messages
leave is part of what the other parties see.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.mechanisms.errors import ShapeError

from .events import EventSearchTester
from .statistics import Projection
from .testers import LowerBound


def schedule_features(outputs: Any) -> np.ndarray:
    """(n, 3 + T): releases, first and last release time, then the schedule itself."""
    x = np.asarray(outputs, dtype=float)
    if x.ndim != 2:
        raise ShapeError(f"release schedules must have shape (n, T) or (n, k); got {x.shape}")
    binary = np.isin(x[np.isfinite(x)], (0.0, 1.0)).all()
    if binary:  # a 0/1 schedule over T steps
        steps = np.arange(1, x.shape[1] + 1, dtype=float)
        times = np.where(x > 0, steps, np.nan)
    else:  # release times, NaN-padded
        times = x
    count = np.isfinite(times).sum(axis=1).astype(float)
    with np.errstate(all="ignore"):
        first = np.where(count > 0, np.nanmin(np.where(np.isfinite(times), times, np.inf),
                                              axis=1), -1.0)
        last = np.where(count > 0, np.nanmax(np.where(np.isfinite(times), times, -np.inf),
                                             axis=1), -1.0)
    return np.column_stack([count, first, last, np.nan_to_num(times, nan=-1.0)])


@dataclass(frozen=True)
class TimingTester:
    """Events over release schedules: the whole schedule, the count, the first and last time."""

    bins: tuple = (8, 32)
    atoms: int = 256
    keep: int = 16

    name = "timing"
    assumptions = "none (any schedule)"

    def bound(self, outputs0, outputs1, *, delta: float, confidence: float) -> LowerBound:
        f0, f1 = schedule_features(outputs0), schedule_features(outputs1)
        # the count is the statistic; atoms cover whole schedules and time pairs
        count = np.zeros(f0.shape[1])
        count[0] = 1.0
        tester = EventSearchTester(Projection(count, name="release count"), self.bins,
                                   self.atoms, self.keep)
        found = tester.bound(f0, f1, delta=delta, confidence=confidence)
        # the schedule is part of the view: every event over it is a distributional finding
        best = max(found.by_kind().values(), key=lambda b: b.epsilon)
        details = dict(best.details)
        details["evidence"] = "release schedule: " + details["evidence"]
        return LowerBound(best.epsilon, delta, confidence, self.name, details, self.assumptions)
