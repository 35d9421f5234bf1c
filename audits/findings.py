"""The kind of a finding: which problem a lower bound points at.

    DISTRIBUTIONAL, FLOATING_POINT, KINDS, NON_FINITE
    Finding(kind, epsilon_lower_bound, tester, evidence)
    check_kinds(kinds) -> tuple of kinds

- distributional: the output distributions on the two inputs differ more
  than the claim allows, as mathematics over the reals would see them
  (thresholds, bins, atoms, Gaussian-DP, the classifier, release
  schedules).  The fix is in the mathematics: sensitivity, noise scale,
  accounting.
- floating-point: the outputs differ in their representation as doubles
  (the lowest set bit, outputs one input can reach and its neighbour cannot:
  Mironov 2012).  The fix is in the sampler: a float-safe one.  Timing
  differences of float arithmetic belong here too; the release-schedule
  tester (`TimingTester`) audits when messages leave, which is part of the
  view, so its findings are distributional.

- non-finite: the mechanism released NaN or an infinity.  No guarantee
  covers such outputs (they are what overflow, a NaN input or a scale of 0
  produce), so a report with this finding is a violation whatever its bound;
  the bound is that of the event "a run has a non-finite entry".  Checked on
  every audit (not a kind to choose with `kinds`), before any tester runs.

Each kind gets its own lower bound (the best of the testers and events of
that kind, under the audit's one failure probability), so a report can say
"violation, floating-point" while its distributional bound stays below the
claim.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from privbandit.accounting.errors import invalid

DISTRIBUTIONAL = "distributional"
FLOATING_POINT = "floating-point"
KINDS = (DISTRIBUTIONAL, FLOATING_POINT)
NON_FINITE = "non-finite"


@dataclass(frozen=True)
class Finding:
    """The largest lower bound of one kind, the tester that found it and why."""

    kind: str
    epsilon_lower_bound: float
    tester: str
    evidence: str = ""


def check_kinds(kinds: "str | Iterable[str] | None") -> tuple[str, ...]:
    """None (every kind), one kind or several, as a tuple in the order of KINDS."""
    if kinds is None:
        return KINDS
    wanted = {kinds} if isinstance(kinds, str) else set(kinds) if isinstance(
        kinds, Iterable) else None
    if not wanted or not wanted <= set(KINDS):
        raise invalid("kinds", kinds, f"None, or one or more of {list(KINDS)}")
    return tuple(k for k in KINDS if k in wanted)
