"""The suite: every positive control rejected, every correct mechanism passes, no false alarms."""
import numpy as np
import pytest

from privbandit.audits import run_audit
from privbandit.audits.cases import (
    anonymous_laplace_case,
    foreign_cases,
    gaussian_vector_case,
    laplace_means_case,
    mechanism_cases,
    symmetric_matrix_case,
    tree_case,
)
from privbandit.audits.controls import control_cases
from privbandit.audits.suite import SUITE_SAMPLES, run_cases, suite_failures, suite_summary
from privbandit.mechanisms.samplers import EXACT

CONFIDENCE = 0.99
# The exact (OpenDP) sampler costs ~10-20 us per entry: its variants run at
# small counts, and its tree over a shorter horizon, to keep the suite fast.
EXACT_CASES = [laplace_means_case(EXACT, "opendp"), gaussian_vector_case(EXACT, "opendp"),
               symmetric_matrix_case(EXACT, "opendp"), tree_case(EXACT, "opendp", horizon=4),
               anonymous_laplace_case(EXACT, "opendp")]
CORRECT = mechanism_cases(exact=False) + EXACT_CASES + foreign_cases()
CONTROLS = control_cases()


def _cheap_samples(case) -> int:
    """Small counts for the no-false-alarm loop; fewer where every draw goes through OpenDP."""
    return 200 if "opendp" in case.name else 1000


@pytest.mark.parametrize("case", CONTROLS, ids=lambda c: c.name)
def test_every_control_is_rejected_at_the_suite_count(case):
    r = run_audit(case.mechanism, case.pair, case.tester, case.claim, samples=SUITE_SAMPLES,
                  rng=np.random.default_rng(11), confidence=CONFIDENCE, name=case.name)
    assert r.verdict == "violation", r.to_json()


@pytest.mark.parametrize("case", CORRECT, ids=lambda c: c.name)
def test_no_false_alarm_over_20_audits(case):
    reports = run_cases([case] * 20, samples=_cheap_samples(case),
                        rng=np.random.default_rng(12), confidence=CONFIDENCE)
    assert [r.verdict for r in reports] == ["consistent"] * 20
    assert len({r.details["threshold"] for r in reports}) > 1  # 20 independent audits


def test_suite_judges_expectations():
    cases = [CORRECT[0], CONTROLS[0]]
    reports = run_cases(cases, samples=SUITE_SAMPLES, rng=np.random.default_rng(13),
                        confidence=CONFIDENCE)
    assert suite_failures(cases, reports) == []
    # pair each report with the other case's expectation: both mismatches are reported
    fails = suite_failures(cases[::-1], reports)
    assert len(fails) == 2
    assert "control not rejected" in fails[0] and ": violation (lower bound" in fails[1]
    summary = suite_summary(cases, reports)
    assert [a["expected"] for a in summary["audits"]] == ["consistent", "violation"]
    assert summary["failures"] == []
