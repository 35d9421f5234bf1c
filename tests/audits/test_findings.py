"""Findings carry their kind: distributional or floating-point, each with its own bound."""
import json

import numpy as np
import pytest

from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits import (
    AuditReport,
    Claim,
    FloatTester,
    NeighbouringPair,
    NumpyLaplaceModel,
    ThresholdTester,
    format_table,
    run_audit,
)
from privbandit.audits.adapters import DiffprivlibMechanism, OpenDPMechanism
from privbandit.audits.assertions import ClaimRefuted, assert_consistent
from privbandit.audits.battery import Battery
from privbandit.audits.cases import diffprivlib_missing
from privbandit.audits.findings import DISTRIBUTIONAL, FLOATING_POINT, Finding, check_kinds
from privbandit.audits.one_run import one_run_audit
from privbandit.audits.one_run_protocols import sum_canaries
from privbandit.mechanisms.samplers import GRID

PAIR = NeighbouringPair(0.0, 1.0, "scalars at distance 1", "0 vs 1")


def textbook(dataset, rng, n):  # x + rng.laplace(0, 1/eps), eps = 1
    return dataset + rng.laplace(0.0, 1.0, n)


def float_safe(dataset, rng, n):
    return GRID.add_laplace(np.full(n, float(dataset)), 1.0, rng)


def test_textbook_laplace_is_a_floating_point_violation_with_a_sound_distribution():
    r = run_audit(textbook, PAIR, Claim(1.0), samples=20_000, rng=0)
    assert r.verdict == "violation" and r.violation_kinds == (FLOATING_POINT,)
    dist, flt = r.finding(DISTRIBUTIONAL), r.finding(FLOATING_POINT)
    assert dist.epsilon_lower_bound <= 1.0 < flt.epsilon_lower_bound == r.epsilon_lower_bound
    assert "lowest bit" in flt.evidence and flt.tester == "event-search"
    assert "floating-point" in format_table([r]).splitlines()[1]


def test_the_reachability_model_is_a_floating_point_finding_too():
    r = run_audit(textbook, PAIR, Claim(1.0), samples=5000, rng=1,
                  float_model=NumpyLaplaceModel(1.0))
    assert r.violation_kinds == (FLOATING_POINT,)
    assert r.finding(FLOATING_POINT).tester in ("float-reachability", "event-search")


def test_distributional_testers_only_on_request():
    r = run_audit(textbook, PAIR, Claim(1.0), samples=20_000, rng=0, kinds="distributional")
    assert r.verdict == "consistent" and [f.kind for f in r.findings] == [DISTRIBUTIONAL]
    assert all(b["kind"] == DISTRIBUTIONAL for b in r.details["battery"])
    assert not any("lowest bit" in b["evidence"] for b in r.details["battery"])


def test_the_float_safe_sampler_has_no_finding_of_either_kind():
    r = run_audit(float_safe, PAIR, Claim(1.0), samples=20_000, rng=0)
    assert r.verdict == "consistent" and r.violation_kinds == ()
    assert {f.kind for f in r.findings} == {DISTRIBUTIONAL, FLOATING_POINT}
    assert all(f.epsilon_lower_bound <= 1.0 for f in r.findings)


def test_a_wrong_scale_is_distributional():
    def half(dataset, rng, n):
        return GRID.add_laplace(np.full(n, float(dataset)), 0.5, rng)

    r = run_audit(half, PAIR, Claim(1.0), samples=20_000, rng=0)
    assert DISTRIBUTIONAL in r.violation_kinds


def test_assert_consistent_says_which_kind_and_what_to_do():
    with pytest.raises(ClaimRefuted) as caught:
        assert_consistent(textbook, PAIR, 1.0, samples=20_000)
    message = str(caught.value)
    assert "by a floating-point finding" in message and "float-safe sampler" in message
    assert "by kind  : distributional epsilon >= " in message
    assert assert_consistent(textbook, PAIR, 1.0, samples=20_000,
                             kinds="distributional").verdict == "consistent"


def test_json_carries_the_findings():
    r = run_audit(textbook, PAIR, Claim(1.0), samples=5000, rng=0)
    data = json.loads(r.to_json())
    assert data["violation_kinds"] == ["floating-point"]
    assert {f["kind"] for f in data["findings"]} == {DISTRIBUTIONAL, FLOATING_POINT}
    back = AuditReport.from_dict(data)
    assert back == r and isinstance(back.findings[0], Finding)


def test_explicit_testers_keep_their_own_kind():
    r = run_audit(textbook, PAIR, ThresholdTester(), Claim(1.0), samples=5000, rng=0)
    assert [f.kind for f in r.findings] == [DISTRIBUTIONAL]
    with pytest.raises(InvalidParameterError, match="kinds"):
        run_audit(textbook, PAIR, FloatTester(NumpyLaplaceModel(1.0)), Claim(1.0),
                  samples=500, kinds="distributional")


@pytest.mark.parametrize("bad", ["float", ["distributional", "timing"], [], 3])
def test_bad_kinds_are_refused(bad):
    with pytest.raises(InvalidParameterError, match="kinds"):
        check_kinds(bad)
    with pytest.raises(InvalidParameterError, match="kinds"):
        Battery(kinds=bad)


# -- one run, through the foreign adapters: no false alarm ----------------------------------
def opendp_gaussian_sum(dim: int):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False), size=dim),
                              dp.l2_distance(T=float), scale=1.0)
    adapter = OpenDPMechanism(meas, "opendp gaussian vector")
    return (lambda total, rng: adapter(total, rng, 1)[0]), adapter.claim(1.0, 1e-5)


def diffprivlib_laplace_sum(dim: int):
    from diffprivlib.mechanisms import LaplaceTruncated

    adapter = DiffprivlibMechanism(LaplaceTruncated, "diffprivlib LaplaceTruncated", {
        "epsilon": 1.0, "sensitivity": 1.0, "lower": -50.0, "upper": 50.0})

    def release(total, rng):  # one pure-DP release per coordinate (L1 canaries)
        return np.array([adapter(x, g, 1)[0] for x, g in zip(total, rng.spawn(dim),
                                                               strict=True)])
    return release, adapter.claim()


@pytest.mark.parametrize("build", [opendp_gaussian_sum, diffprivlib_laplace_sum])
def test_one_run_raises_no_false_alarm_on_foreign_mechanisms(build):
    if build is diffprivlib_laplace_sum and diffprivlib_missing():
        pytest.skip(diffprivlib_missing())
    dim = 400
    release, claim = build(dim)
    protocol = sum_canaries(release, dim, dim, name=build.__name__)
    for seed in range(3):
        r = one_run_audit(protocol, claim, guesses=(20, 20), rng=seed, confidence=0.95)
        assert r.verdict == "consistent" and r.correct >= 20, r
