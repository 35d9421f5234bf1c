"""Run a list of `AuditCase`s and judge the outcome.

    run_cases(cases, *, samples=None, rng=0, confidence=0.99, kinds=None) -> list[AuditReport]
    suite_failures(cases, reports, kinds=None) -> list[str]   # empty when all is as expected
    suite_summary(cases, reports, kinds=None) -> dict         # JSON: reports, expectations
    standard_suite(exact=True, foreign=True, controls=True) -> list[AuditCase]

A correct mechanism fails the suite when it is found in violation; a control
fails it when it is *not* rejected (the audit lacked power at that sample
count), or not by a finding of its `kind`.  With `kinds` (e.g.
"distributional") only those kinds are searched, and a control whose kind
is not among them is expected consistent.  Each case runs at its own budget
(`AuditCase.samples`, None: `DEFAULT_SAMPLES`) unless `samples` overrides
them all, with its tester (None: the default battery) and its float model.
Every case draws from its own child generator, so the whole suite is
reproducible from one seed (except OpenDP's draws, which cannot be seeded).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .cases import AuditCase, foreign_cases, mechanism_cases
from .controls import control_cases
from .defaults import DEFAULT_CONFIDENCE, coerce_rng
from .findings import check_kinds
from .report import CONSISTENT, VIOLATION, AuditReport
from .runner import run_audit


def standard_suite(exact: bool = True, foreign: bool = True,
                   controls: bool = True) -> list[AuditCase]:
    """Our mechanisms (float-safe default, and exact if asked), the foreign ones, the controls."""
    cases = mechanism_cases(exact=exact)
    if foreign:
        cases += foreign_cases()
    if controls:
        cases += control_cases()
    return cases


def run_case(case: AuditCase, *, samples: "int | None" = None,
             rng: "np.random.Generator | int" = 0, confidence: float = DEFAULT_CONFIDENCE,
             kinds: Any = None) -> AuditReport:
    """One case at `samples` runs per side (None: the case's own budget)."""
    budget = samples if samples is not None else case.samples
    return run_audit(case.mechanism, case.pair, case.claim, tester=case.tester, samples=budget,
                     rng=rng, confidence=confidence, name=case.name,
                     float_model=case.float_model if case.tester is None else None,
                     value=case.value, kinds=kinds)


def run_cases(cases: "list[AuditCase]", *, samples: "int | None" = None,
              rng: "np.random.Generator | int" = 0, confidence: float = DEFAULT_CONFIDENCE,
              kinds: Any = None) -> list[AuditReport]:
    """One audit per case, each from its own child of `rng`."""
    streams = coerce_rng(rng).spawn(len(cases))
    return [run_case(c, samples=samples, rng=g, confidence=confidence, kinds=kinds)
            for c, g in zip(cases, streams, strict=True)]


def expected_verdict(case: AuditCase, kinds: Any = None) -> str:
    """A control is expected rejected when the kind of finding that catches it is searched."""
    return VIOLATION if case.control and case.kind in check_kinds(kinds) else CONSISTENT


def suite_failures(cases: "list[AuditCase]", reports: "list[AuditReport]",
                   kinds: Any = None) -> list[str]:
    """What went wrong: correct mechanisms in violation, controls not rejected (by their kind)."""
    out = []
    for c, r in zip(cases, reports, strict=True):
        expected = expected_verdict(c, kinds)
        if r.verdict != expected:
            what = "control not rejected" if expected == VIOLATION else "violation"
        elif expected == VIOLATION and c.kind not in r.violation_kinds:
            what = f"control not rejected by a {c.kind} finding"
        else:
            continue
        kind = "+".join(r.violation_kinds) or "-"
        out.append(f"{c.name}: {what} (lower bound {r.epsilon_lower_bound:.4g} [{kind}] vs "
                   f"claimed {r.claimed_epsilon:.4g} at delta {r.claimed_delta:g})")
    return out


def suite_summary(cases: "list[AuditCase]", reports: "list[AuditReport]",
                  kinds: Any = None) -> dict[str, Any]:
    """A JSON-ready summary of a suite run."""
    return {
        "audits": [dict(r.to_dict(), control=c.control, expected=expected_verdict(c, kinds),
                        expected_kind=c.kind if c.control else None, note=c.note)
                   for c, r in zip(cases, reports, strict=True)],
        "failures": suite_failures(cases, reports, kinds),
    }
