"""Audits never pass on garbage; one call shape; a ready Hypothesis profile for audits.

- A mechanism that releases NaN or an infinity is a finding (non-finite), a
  violation whatever the claim, in many-run and one-run audits alike.
- The event-search tester reads such samples without a RuntimeWarning.
- One object audits both ways: a mechanism with `release(value, rng)`, or
  `ReleaseAdapter(release, batched=False)` around a user's function.
- `audit_settings` runs audits inside `@given` without deadline or shrinking.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.audits import (
    NON_FINITE,
    AuditReport,
    EventSearchTester,
    NeighbouringPair,
    OneRunReport,
    ReleaseAdapter,
    one_run_audit,
    run_audit,
    sum_canaries,
)
from privbandit.audits.assertions import ClaimRefuted, assert_consistent
from privbandit.audits.strategies import AUDIT_PROFILE, audit_settings, seeds
from privbandit.mechanisms import GRID, GaussianVector

PAIR = NeighbouringPair(0.0, 1.0, "record-level: one value", "0 vs 1")


def _garbage(kind: str, share: float):
    """A scalar Laplace mechanism that releases `kind` (nan, inf, -inf) in a share of runs,
    on the dataset only when share < 0 (then |share|)."""
    def mechanism(dataset, rng, n):
        out = dataset + rng.laplace(0.0, 1.0, n)
        hit = rng.random(n) < abs(share)
        if share < 0 and dataset == 0.0:
            hit[:] = False
        out[hit] = float(kind)
        return out
    return mechanism


def _users_laplace(value, rng):
    """A user's own mechanism: Laplace noise of scale 1, float-safe (the grid sampler)."""
    return GRID.add_laplace(value, 1.0, rng)


@given(kind=st.sampled_from(["nan", "inf", "-inf"]), share=st.sampled_from([1.0, 0.5, 1e-3,
                                                                            -0.5]),
       claim=st.floats(0.5, 100.0))
def test_non_finite_releases_are_a_violation_whatever_the_claim(kind, share, claim):
    report = run_audit(_garbage(kind, share), PAIR, claim, samples=2000)
    assert report.verdict == "violation"
    assert NON_FINITE in report.violation_kinds
    finding = report.finding(NON_FINITE)
    assert "NaN or an infinity" in finding.evidence
    assert AuditReport.from_dict(report.to_dict()).verdict == "violation"
    if share < 0:  # released on one input only: a large, real bound
        assert finding.epsilon_lower_bound > 3.0


def test_vector_garbage_and_the_assertion_message():
    def vectors(dataset, rng, n):
        return np.full((n, 3), np.nan)

    with pytest.raises(ClaimRefuted, match="non-finite finding: it released NaN or an infinity"):
        assert_consistent(vectors, PAIR, 1.0, samples=100)


def test_finite_mechanisms_get_no_non_finite_finding():
    report = run_audit(ReleaseAdapter(_users_laplace), PAIR, 1.0, samples=2000)
    assert report.finding(NON_FINITE) is None and report.verdict == "consistent"


@pytest.mark.parametrize("kinds", [None, "distributional"])
def test_the_non_finite_check_ignores_the_kinds_chosen(kinds):
    report = run_audit(_garbage("nan", 1.0), PAIR, 1.0, samples=100, kinds=kinds)
    assert report.violation_kinds == (NON_FINITE,)


@pytest.mark.parametrize("output", [np.nan, np.inf])
def test_one_run_audits_never_pass_on_garbage(output):
    report = one_run_audit(sum_canaries(lambda v, rng: v * output, 10, 200), 1.0)
    assert report.verdict == "violation" and report.guesses == 0
    assert report.findings[0].kind == NON_FINITE
    assert OneRunReport.from_dict(report.to_dict()).verdict == "violation"


def test_a_clean_one_run_audit_has_no_finding():
    protocol = sum_canaries(lambda v, rng: v + rng.normal(size=v.shape), 10, 200)
    clean = one_run_audit(protocol, 5.0)
    assert clean.findings == [] and clean.verdict == "consistent"


@pytest.mark.parametrize("values", [np.nan, np.inf, -np.inf, 0.0])
def test_the_event_search_reads_garbage_without_warnings(values):
    rng = np.random.default_rng(0)
    x0 = rng.laplace(size=2000)
    x1 = rng.laplace(size=2000) + 1.0
    x0[::3] = values
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EventSearchTester().bound(x0, x1, delta=0.0, confidence=0.99)
        EventSearchTester().bound(np.full(500, values), np.full(500, values), delta=0.0,
                                  confidence=0.99)


# -- one call shape ---------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [
    ReleaseAdapter(_users_laplace, batched=False),  # a user's function, named adapter
    GaussianVector(1.0, 1.0),  # a mechanism object
])
def test_one_object_audits_many_runs_and_one_run(shape):
    many = run_audit(shape, NeighbouringPair(np.zeros(3), np.eye(3)[0], "add/remove"), 20.0,
                     samples=500)
    once = one_run_audit(sum_canaries(shape, 3, 100), 20.0)
    assert many.verdict == once.verdict == "consistent"


def test_both_audits_document_their_parameters():
    for fn, names in ((run_audit, ("mechanism", "pairs", "claim", "tester", "samples", "rng",
                                   "confidence", "delta", "name", "pair_count", "batch_size",
                                   "float_model", "kinds")),
                      (one_run_audit, ("protocol", "claim", "guesses", "rng", "confidence",
                                       "method", "delta", "name"))):
        doc = inspect.getdoc(fn)
        assert "see the module docstring" not in doc.splitlines()[0]
        for name in names:
            assert f"{name} :" in doc or f"{name}, " in doc, (fn.__name__, name)


# -- Hypothesis: audits inside @given ---------------------------------------------------------
def test_a_failing_audit_inside_given_is_not_shrunk():
    calls = []

    @audit_settings
    @given(seed=seeds(), shift=st.floats(0.5, 3.0))
    def refuted(seed, shift):
        calls.append(seed)
        assert_consistent(_garbage("nan", 0.0), NeighbouringPair(0.0, shift, "x"), 0.1,
                          rng=seed, samples=2000)

    with pytest.raises(ClaimRefuted):
        refuted()
    assert len(calls) <= 2  # the failing example, and its replay for the report


def test_the_audit_profile_is_registered():
    from hypothesis import Phase, settings

    profile = settings.get_profile(AUDIT_PROFILE)
    assert profile.deadline is None and Phase.shrink not in profile.phases
    assert profile.max_examples == audit_settings.max_examples == 5
