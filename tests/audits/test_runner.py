"""run_audit: protocols, reproducibility, pairs, batching, reports and bad input."""
import json

import numpy as np
import pytest

from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits import (
    AuditReport,
    Claim,
    NeighbouringPair,
    ThresholdTester,
    format_table,
    protocols,
    run_audit,
)
from privbandit.mechanisms.errors import ShapeError

PAIR = NeighbouringPair(0.0, 1.0, "scalar at distance 1", "0 vs 1")


def laplace(scale):
    def mech(d, rng, n):
        return d + rng.laplace(0.0, scale, n)
    mech.name = f"laplace scale {scale:g}"
    return mech


def audit(mech=None, **kw):
    args = dict(samples=2000, rng=np.random.default_rng(0), confidence=0.95)
    args.update(kw)
    return run_audit(mech or laplace(1.0), PAIR, ThresholdTester(), Claim(1.0), **args)


def test_protocols_are_structural():
    assert isinstance(laplace(1.0), protocols.Mechanism)
    assert isinstance(lambda rng: PAIR, protocols.PairGenerator)
    assert isinstance(ThresholdTester(), protocols.Tester)
    assert not isinstance(3, protocols.Tester)


def test_report_fields_and_verdicts():
    ok = audit()
    assert ok.mechanism == "laplace scale 1"
    assert (ok.relation, ok.pair, ok.samples_per_side, ok.pairs_tested) == (
        "scalar at distance 1", "0 vs 1", 2000, 1)
    assert ok.verdict == "consistent" and not ok.violation
    bad = audit(laplace(0.25))  # true epsilon 4 against a claim of 1
    assert bad.verdict == "violation" and bad.epsilon_lower_bound > 1.0


def test_same_seed_same_report():
    a, b = audit(), audit()
    assert a.epsilon_lower_bound == b.epsilon_lower_bound and a.details == b.details
    assert audit(rng=np.random.default_rng(1)).details != a.details


def test_batches_are_reproducible_and_valid():
    a = audit(batch_size=300)
    assert a.details == audit(batch_size=300).details
    assert a.verdict == "consistent" and a.epsilon_lower_bound > 0.5


def test_several_pairs_use_a_union_bound():
    pairs = [NeighbouringPair(0.0, 0.1, "r", "small"), NeighbouringPair(0.0, 1.0, "r", "full")]
    r = run_audit(laplace(1.0), pairs, ThresholdTester(), Claim(1.0), samples=2000,
                  rng=np.random.default_rng(0), confidence=0.95)
    assert r.pairs_tested == 2 and r.pair == "full"
    assert [p["pair"] for p in r.details["per_pair"]] == ["small", "full"]


def test_pair_generator_is_called_pair_count_times():
    seen = []

    def pairs(rng):
        seen.append(rng)
        return PAIR

    r = run_audit(laplace(1.0), pairs, ThresholdTester(), Claim(1.0), samples=100,
                  rng=np.random.default_rng(0), pair_count=3)
    assert len(seen) == 3 and r.pairs_tested == 3


def test_json_round_trip():
    r = audit()
    data = json.loads(r.to_json())
    assert data["verdict"] == "consistent"
    assert AuditReport.from_dict(data) == r


def test_violation_only_strictly_above_the_claim():
    base = audit().to_dict()
    base.pop("verdict")
    base.pop("violation_kinds")
    at = AuditReport(**dict(base, epsilon_lower_bound=base["claimed_epsilon"]))
    above = AuditReport(**dict(base, epsilon_lower_bound=base["claimed_epsilon"] + 1e-9))
    assert at.verdict == "consistent" and above.verdict == "violation"


def test_non_finite_and_numpy_details_become_json():
    fields = {k: v for k, v in audit().to_dict().items() if k not in ("verdict", "violation_kinds")}
    odd = AuditReport(**dict(fields, details={"x": float("inf"), "a": np.float32(2),
                                              "v": np.arange(2)}))
    assert json.loads(odd.to_json())["details"] == {"x": "inf", "a": 2.0, "v": [0, 1]}


def test_table_lists_every_report():
    text = format_table([audit(), audit(laplace(0.25))], {"laplace scale 1": "consistent"})
    lines = text.splitlines()
    assert len(lines) == 3 and "expected" in lines[0]
    assert "violation" in lines[2]


@pytest.mark.parametrize(
    "change,error,match",
    [
        ({"mechanism": 3}, InvalidParameterError, "mechanism must be a callable"),
        ({"claim": "one"}, InvalidParameterError, "claim must be an audits.Claim, an epsilon"),
        ({"rng": -1}, InvalidParameterError, "rng must be a numpy.random.Generator or a seed"),
        ({"tester": 3}, InvalidParameterError, "tester must be None"),
        ({"samples": 3}, InvalidParameterError, "samples must be an integer >= 4; got 3"),
        ({"pairs": []}, InvalidParameterError, "pairs must be a NeighbouringPair"),
        ({"pairs": (0, 1)}, InvalidParameterError, "pairs must be a NeighbouringPair"),
        ({"batch_size": 0}, InvalidParameterError, "batch_size must be an integer >= 1; got 0"),
        ({"confidence": 1.5}, InvalidParameterError, r"confidence must be a number in \[0, 1\)"),
        ({"mechanism": lambda d, rng, n: np.zeros(n - 1)}, ShapeError,
         r"returned outputs of shape \(1999,\) for n=2000"),
    ],
)
def test_bad_input(change, error, match):
    args = dict(mechanism=laplace(1.0), pairs=PAIR, tester=ThresholdTester(), claim=Claim(1.0),
                samples=2000, rng=np.random.default_rng(0))
    args.update(change)
    with pytest.raises(error, match=match):
        run_audit(**args)
