"""The suite: every positive control rejected by the default battery at its own budget,
every correct mechanism passes, no false alarms."""
import numpy as np
import pytest

from privbandit.audits import run_audit
from privbandit.audits.cases import foreign_cases, mechanism_cases, tree_case
from privbandit.audits.controls import control_cases
from privbandit.audits.suite import run_case, run_cases, suite_failures, suite_summary
from privbandit.mechanisms.samplers import EXACT

CONFIDENCE = 0.99
FOREIGN = foreign_cases()
CORRECT = (mechanism_cases(exact=False)
           + [c for c in mechanism_cases(exact=True) if "opendp" in c.name and "Tree" not in c.name]
           + [tree_case(EXACT, "opendp", horizon=4)] + [c for c in FOREIGN if not c.control])
EXPECTED_VIOLATIONS = control_cases() + [c for c in FOREIGN if c.control]
SEEDS = 5  # CI; bench/bench_audits.py runs 20 per case and prints the count


def _cheap_samples(case) -> int:
    """Small counts for the no-false-alarm loop; fewer where every draw goes through OpenDP."""
    return 300 if "opendp" in case.name else 1000


@pytest.mark.parametrize("case", EXPECTED_VIOLATIONS, ids=lambda c: c.name)
def test_every_control_is_rejected_by_the_default_battery_at_its_budget(case):
    assert case.tester is None  # caught without naming a tester
    r = run_case(case, rng=11, confidence=CONFIDENCE)
    assert r.verdict == "violation", r.to_json()
    assert r.details["found_by"] == r.tester and len(r.details["battery"]) >= 2


@pytest.mark.parametrize("case", CORRECT, ids=lambda c: c.name)
def test_no_false_alarm(case):
    reports = run_cases([case] * SEEDS, samples=_cheap_samples(case),
                        rng=np.random.default_rng(12), confidence=CONFIDENCE)
    assert [r.verdict for r in reports] == ["consistent"] * SEEDS
    assert len({repr(r.details) for r in reports}) > 1  # independent audits


def test_suite_judges_expectations():
    cases = [CORRECT[0], EXPECTED_VIOLATIONS[0]]
    reports = run_cases(cases, samples=20_000, rng=np.random.default_rng(13),
                        confidence=CONFIDENCE)
    assert suite_failures(cases, reports) == []
    # pair each report with the other case's expectation: both mismatches are reported
    fails = suite_failures(cases[::-1], reports)
    assert len(fails) == 2
    assert "control not rejected" in fails[0] and ": violation (lower bound" in fails[1]
    summary = suite_summary(cases, reports)
    assert [a["expected"] for a in summary["audits"]] == ["consistent", "violation"]
    assert summary["failures"] == []


def test_run_audit_without_a_tester_names_what_found_the_bound():
    case = EXPECTED_VIOLATIONS[0]
    r = run_audit(case.mechanism, case.pair, case.claim, samples=20_000, rng=3)
    assert r.details["found_by"] == r.tester
    assert {b["tester"] for b in r.details["battery"]} >= {"threshold", "event-search"}
    assert r.confidence == 0.99 and r.details["confidence_per_tester"] > 0.99
