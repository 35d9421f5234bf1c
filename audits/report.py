"""`AuditReport`: what was audited, against what claim, and what the samples showed.

Fields: mechanism, relation, pair, claimed epsilon/delta and the claim's
source, tester and its assumptions, `epsilon_lower_bound` with its
`confidence`, samples per side, number of pairs tried, wall time and the
tester's details.  `verdict` is "violation" when the lower bound exceeds
the claimed epsilon (at the claimed delta) or the mechanism released NaN or
an infinity (a "non-finite" finding), else "consistent".  `to_dict()` /
`to_json()` give plain JSON; `AuditReport.from_dict` reads it back.
`findings` hold the largest bound of each kind searched (distributional,
floating-point: `privbandit.audits.findings`), each with its tester and
evidence; `violation_kinds` names the kinds whose bound exceeds the claim
(the verdict is "violation" when either does).
`format_table(reports)` renders a fixed-width table for terminals.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from privbandit.accounting.plain import to_plain

from .findings import DISTRIBUTIONAL, FLOATING_POINT, NON_FINITE, Finding

CONSISTENT = "consistent"
VIOLATION = "violation"
MEASURED = "measured"  # a bound reported against a claim of another relation


class VerdictMixin:
    """`verdict`, `violation` and the JSON forms every report shares.

    A subclass is a frozen dataclass with `epsilon_lower_bound` and
    `claimed_epsilon` fields.
    """

    @property
    def verdict(self) -> str:
        """"violation" iff the lower bound exceeds the claim or the mechanism released NaN or
        an infinity (a non-finite finding), else "consistent"; "measured" when
        `details["measured"]` says why the claim is a reference only (its relation is not
        the one the pair realises: the bound is reported, never judged)."""
        garbage = any(f.kind == NON_FINITE for f in getattr(self, "findings", ()))
        if garbage:
            return VIOLATION
        if self.details.get("measured"):
            return MEASURED
        return VIOLATION if self.epsilon_lower_bound > self.claimed_epsilon else CONSISTENT

    @property
    def violation(self) -> bool:
        return self.verdict == VIOLATION

    def to_dict(self) -> dict[str, Any]:
        out = to_plain(asdict(self), strict_json=True)
        out["verdict"] = self.verdict
        return out

    def to_json(self, indent: "int | None" = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        return cls(**{k: v for k, v in data.items() if k not in ("verdict", "violation_kinds")})


@dataclass(frozen=True)
class AuditReport(VerdictMixin):
    """The outcome of one audit (see the module docstring for each field)."""

    mechanism: str
    relation: str
    pair: str
    claimed_epsilon: float
    claimed_delta: float
    claim_source: str
    tester: str
    assumptions: str
    epsilon_lower_bound: float
    confidence: float
    samples_per_side: int
    pairs_tested: int
    wall_time_s: float
    details: dict[str, Any] = field(default_factory=dict)
    findings: "list[Finding]" = field(default_factory=list)

    def __post_init__(self) -> None:  # findings read back from JSON come as dicts
        object.__setattr__(self, "findings", [f if isinstance(f, Finding) else Finding(**f)
                                              for f in self.findings])

    def finding(self, kind: str) -> "Finding | None":
        """The finding of `kind`, None when that kind was not searched."""
        return next((f for f in self.findings if f.kind == kind), None)

    @property
    def violation_kinds(self) -> tuple[str, ...]:
        """The kinds whose own bound exceeds the claim, and non-finite outputs (empty when
        consistent)."""
        return tuple(f.kind for f in self.findings
                     if f.kind == NON_FINITE or f.epsilon_lower_bound > self.claimed_epsilon)

    def to_dict(self) -> dict[str, Any]:
        out = super().to_dict()
        out["violation_kinds"] = list(self.violation_kinds)
        return out


_COLUMNS = (("mechanism", 44), ("tester", 12), ("claim eps", 10), ("delta", 8),
            ("eps lower", 10), ("dist", 7), ("float", 7), ("conf", 6), ("samples", 9),
            ("time s", 7), ("verdict", 10), ("kind", 29))


def _kind_bound(r: AuditReport, kind: str) -> str:
    f = r.finding(kind)
    return "-" if f is None else f"{f.epsilon_lower_bound:.3g}"


def format_table(reports, expected: "dict[str, str] | None" = None) -> str:
    """A fixed-width table; `expected` (mechanism -> verdict) adds an "expected" column.

    "dist" and "float" are the distributional and floating-point bounds ("-"
    when that kind was not searched); "kind" names the kinds in violation.
    """
    cols = list(_COLUMNS) + ([("expected", 10)] if expected else [])
    lines = ["  ".join(name.ljust(w) for name, w in cols)]
    for r in reports:
        cells = [r.mechanism[:44], r.tester, f"{r.claimed_epsilon:.4g}", f"{r.claimed_delta:.0e}"
                 if r.claimed_delta else "0", f"{r.epsilon_lower_bound:.4g}",
                 _kind_bound(r, DISTRIBUTIONAL), _kind_bound(r, FLOATING_POINT),
                 f"{r.confidence:g}", str(r.samples_per_side), f"{r.wall_time_s:.2f}", r.verdict,
                 "+".join(r.violation_kinds) or "-"]
        if expected:
            cells.append(expected.get(r.mechanism, ""))
        lines.append("  ".join(c.ljust(w) for c, (_, w) in zip(cells, cols, strict=True)))
    return "\n".join(lines)
