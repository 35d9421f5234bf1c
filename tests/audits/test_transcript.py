"""Black-box transcript audits: toy interactive algorithms on two neighbouring reward tables.

Each toy plays T rounds of a two-armed bandit on a fixed reward table and
releases through the library's Gaussian mechanism; the neighbour's table
differs in round 0's reward of arm 0 (one user-round).  The forced-replay
audit (`audit_pairs`) gives the exact pair loss of the same toys, so the
black-box bound is checked against it.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits import Claim, audit_pairs, format_table
from privbandit.audits.binomial import cp_lower, cp_upper
from privbandit.audits.findings import DISTRIBUTIONAL
from privbandit.audits.testers import threshold_score
from privbandit.audits.transcript import (
    Release,
    Transcript,
    aligned,
    audit_transcripts,
    layout,
    schedule_rows,
)
from privbandit.mechanisms.gaussian import GaussianVector
from privbandit.mechanisms.samplers import FAST

T = 30
DELTA = 1e-5
MECH = GaussianVector.from_privacy(1.0, DELTA, l2_sensitivity=1.0, sampler=FAST)
CLAIM = Claim.from_event(MECH.event, DELTA)


def rewards(which: int, horizon: int = T, at: int = 0) -> np.ndarray:
    """The world: arm 0 pays 1 and arm 1 pays 0.2 every round; the neighbour's user at
    round `at` would get 0 from arm 0."""
    table = np.tile([1.0, 0.2], (horizon, 1))
    if which:
        table[at, 0] = 0.0
    return table


def greedy(raw: bool, mech=MECH, horizon: int = T, at: int = 0):
    """Each arm once, then the arm of the larger running mean; every round releases its
    reward through `mech` (sensitivity 1: rewards in [0, 1]).  raw=False: the means of
    the released rewards (each released record acts on released values only); raw=True:
    the means of the raw rewards, so one reward moves every later released record."""
    def sample(which, rng):
        table = rewards(which, horizon, at)
        raw_sum, released_sum, pulls = np.zeros(2), np.zeros(2), np.zeros(2)
        out = []
        for t in range(horizon):
            means = (raw_sum if raw else released_sum) / np.maximum(pulls, 1)
            arm = t if t < 2 else int(np.argmax(means))
            y = mech.release(np.array([table[t, arm]]), rng)
            raw_sum[arm] += table[t, arm]
            released_sum[arm] += y[0]
            pulls[arm] += 1
            out.append((t, y))
        return out
    return sample


def on_threshold(which, rng):
    """Releases the noisy sum of arm 0's rewards since its last release whenever the raw sum
    reaches 2: each reward enters one release, but when it releases depends on the data."""
    pending, out = 0.0, []
    for t, reward in enumerate(rewards(which)[:, 0]):
        pending += reward
        if pending >= 2:
            out.append((t, MECH.release(np.array([pending]), rng)))
            pending = 0.0
    return out


def white_box(sample, seed=0):
    """The forced-replay pair loss of the same toy (exact for its Gaussian releases)."""
    return audit_pairs({"flip at 0": lambda which: sample(which, np.random.default_rng(seed))},
                       DELTA, CLAIM.epsilon)


def test_an_adaptivity_safe_algorithm_is_consistent_below_its_claim():
    report = audit_transcripts(greedy(raw=False), 2000, CLAIM, rng=1)
    assert report.verdict == "consistent"
    assert 0.0 <= report.epsilon_lower_bound <= CLAIM.epsilon
    assert white_box(greedy(raw=False)).worst.epsilon == pytest.approx(CLAIM.epsilon, rel=1e-6)


def test_raw_data_driving_later_released_records_is_caught_in_the_values():
    report = audit_transcripts(greedy(raw=True), 2000, CLAIM, rng=2, gaussian=True)
    by = {s["statistic"]: s["epsilon_lower_bound"] for s in report.details["statistics"]}
    assert report.verdict == "violation" and report.tester == "values-gdp"
    assert by["values"] > 1.2 * CLAIM.epsilon  # without assuming anything of the algorithm
    assert report.findings[0].kind == DISTRIBUTIONAL and report.violation_kinds == (
        DISTRIBUTIONAL,)
    assert report.details["evidence"].startswith("values-gdp: whitened-difference region")
    assert "Gaussian" in report.assumptions and "violation" in format_table([report])
    exact = white_box(greedy(raw=True)).worst
    assert by["values"] < report.epsilon_lower_bound <= exact.epsilon
    assert exact.differing == T - 1


def test_a_data_dependent_schedule_is_caught_through_the_schedule():
    report = audit_transcripts(on_threshold, 1000, CLAIM, rng=3)
    by = {s["statistic"]: s for s in report.details["statistics"]}
    assert report.verdict == "violation"
    assert by["schedule"]["epsilon_lower_bound"] > 3 * CLAIM.epsilon
    assert "output ==" in by["schedule"]["evidence"]  # a whole schedule, as an atom
    assert math.isinf(white_box(on_threshold).worst.epsilon)  # the replay diverges


def _cap(k_hi, n_hi, k_lo, n_lo, alpha, delta):
    return float(threshold_score(cp_lower(k_hi, n_hi, alpha), cp_upper(k_lo, n_lo, alpha), delta))


@settings(derandomize=True, max_examples=12, deadline=None)
@given(scale=st.floats(0.3, 3.0), horizon=st.integers(3, 8), raw=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_the_bound_never_exceeds_what_its_counts_allow_and_a_seed_reproduces_it(
        scale, horizon, raw, seed):
    mech = GaussianVector(MECH.sigma * scale, 1.0, sampler=FAST)
    sample = greedy(raw, mech, horizon, at=horizon // 2)
    report = audit_transcripts(sample, 64, CLAIM, rng=seed)
    d = report.details
    alpha = (1.0 - d["confidence_per_statistic"]) / 2.0  # the largest any event is tested at
    (n_hi, n_lo), m = d["evaluation_runs"], d["test_runs"]
    assert report.epsilon_lower_bound <= _cap(d["hits_favoured"], n_hi, d["hits_other"], n_lo,
                                              alpha, DELTA) + 1e-12
    assert report.epsilon_lower_bound <= _cap(m, m, 0, m, alpha, DELTA) + 1e-12
    again = audit_transcripts(sample, 64, CLAIM, rng=seed).to_dict()
    assert {**again, "wall_time_s": 0} == {**report.to_dict(), "wall_time_s": 0}


def test_transcripts_align_on_their_fit_half_and_their_schedule_is_a_row():
    a = Transcript.of([(0, [1.0, 2.0]), (0, [3.0]), (2, [4.0], 1)])
    b = Transcript.of([(0, [5.0, 6.0]), (3, [7.0])])
    assert a.schedule == ((0, 0, 2), (0, 0, 1), (2, 1, 1))
    places = layout([a])
    assert aligned([a, b], places).tolist() == [[1, 2, 3, 4], [5, 6, 0, 0]]
    rows = schedule_rows([a, b])
    assert rows.tolist() == [[3, 0, 0, 2, 0, 0, 1, 2, 1, 1], [2, 0, 0, 2, 3, 0, 1, -1, -1, -1]]
    assert Transcript.of([]).schedule == () and len(b) == 2


@pytest.mark.parametrize("build, match", [
    (lambda: Release(-1, [1.0]), "round must be an integer >= 0"),
    (lambda: Release(0, [np.nan]), "values must be finite numbers"),
    (lambda: Release(0, ["x"]), "values must be a numeric array"),
    (lambda: Release(0, [1.0], channel=1.5), "channel must be an integer >= 0"),
    (lambda: Transcript.of([(2, [1.0]), (1, [1.0])]), "rounds in non-decreasing order"),
    (lambda: Transcript.of([3.0]), "transcript must be a Transcript"),
    (lambda: audit_transcripts(None, 100, CLAIM, rng=0), "sample must be a callable"),
    (lambda: audit_transcripts(on_threshold, 4, CLAIM, rng=0), "n must be an integer >= 8"),
    (lambda: audit_transcripts(on_threshold, 100, CLAIM, rng=-1), "rng must be"),
])
def test_bad_input_is_refused_naming_the_value(build, match):
    with pytest.raises(InvalidParameterError, match=match):
        build()


def quiet(which, rng):
    """A toy that leaks next to nothing: two noisy releases, the first shifted by 0.1."""
    return [(0, [0.1 * which + rng.normal()]), (1, rng.normal(size=3))]


def test_planted_leaks_measure_what_the_audit_can_see_at_its_size():
    """The same transcripts with a known leak planted: the bound found grows with the leak,
    never passes the ceiling of the size, and the audit's own bound is unchanged."""
    plain = audit_transcripts(quiet, 300, CLAIM, rng=1)
    report = audit_transcripts(quiet, 300, CLAIM, rng=1, power=(1.0, 64.0))
    assert report.epsilon_lower_bound == plain.epsilon_lower_bound
    found = [p["epsilon_lower_bound"] for p in report.details["power"]]
    ceiling = report.details["ceiling"]
    assert found[0] <= CLAIM.epsilon < found[1] <= ceiling  # a large leak is seen
    assert [p["noise"] for p in report.details["power"]] == ["gaussian", "gaussian"]
    test_runs = report.details["test_runs"]
    alpha = (1 - report.details["confidence_per_statistic"]) / 2
    assert ceiling == pytest.approx(math.log((cp_lower(test_runs, test_runs, alpha) - DELTA)
                                             / cp_upper(0, test_runs, alpha)))
    pure = audit_transcripts(quiet, 16, (1.0, 0.0), rng=1, power=(4.0,))
    assert pure.details["power"][0]["noise"] == "laplace"


def test_a_leak_in_one_entry_among_many_noisy_ones_is_seen_by_the_sparse_statistic():
    """2,000 noisy coordinates and one whose mean moves by 4 standard deviations: the
    direction over all of them drowns it at 100 fit runs per world; the four largest
    gaps of the fit half hold it."""
    def sample(which, rng):
        values = rng.normal(0.0, 1.0, 2001)
        values[2000] += 4.0 * which
        return [(0, values)]
    report = audit_transcripts(sample, 200, CLAIM, rng=4)
    by = {s["statistic"]: s["epsilon_lower_bound"] for s in report.details["statistics"]}
    assert report.verdict == "violation" and report.tester == "values-sparse"
    assert by["values-sparse"] > 1.5 > CLAIM.epsilon > by["values"]
