"""add_records: a step that holds several records, each clipped; same event, counted slack."""
import numpy as np
import pytest

from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits import Claim, NeighbouringPair, run_audit
from privbandit.mechanisms import continual_release
from privbandit.mechanisms.errors import OutOfBoundsError
from privbandit.mechanisms.samplers import FAST

KINDS = ["tree", "honaker", "mf"]


@pytest.mark.parametrize("kind", KINDS)
def test_each_record_is_clipped_before_the_sum(kind):
    rng = np.random.default_rng(0)
    mech = continual_release(kind, (3,), 4, sigma=1e-12, l2_sensitivity=2.0, clip_norm=1.0,
                             records_per_step=5, sampler=FAST)
    records = np.array([[3.0, 0, 0], [0, 0.5, 0], [0, 0, -4.0]])
    out = mech.add_records(records, rng)
    np.testing.assert_allclose(out, [1.0, 0.5, -1.0], atol=1e-9)
    assert mech.clipped == 2 and mech.steps == 1
    out = mech.add_records(records[1:2], rng)
    np.testing.assert_allclose(out, [1.0, 1.0, -1.0], atol=1e-9)


@pytest.mark.parametrize("kind", KINDS)
def test_symmetric_records(kind):
    rng = np.random.default_rng(1)
    mech = continual_release(kind, (3, 3), 2, sigma=1e-12, symmetric=True, records_per_step=3,
                             sampler=FAST)
    z = rng.normal(size=(3, 3)) / 3
    out = mech.add_records(np.einsum("ri,rj->rij", z, z), rng)
    np.testing.assert_allclose(out, z.T @ z, atol=1e-9)
    assert np.array_equal(out, out.T)


@pytest.mark.parametrize("records, message", [
    (np.zeros((6, 2)), "between 1 and records_per_step = 5"),
    (np.zeros((0, 2)), "between 1 and records_per_step = 5"),
    (np.zeros((2, 3)), r"an array of shape \(R, 2\)"),
    (np.array([[np.nan, 0.0]]), "finite"),
])
def test_bad_batches_are_refused_and_change_nothing(records, message):
    rng = np.random.default_rng(2)
    mech = continual_release("mf", (2,), 3, sigma=1.0, records_per_step=5, sampler=FAST)
    with pytest.raises((InvalidParameterError, ValueError), match=message):
        mech.add_records(records, rng)
    assert mech.steps == 0 and mech.clipped == 0


def test_reject_mode_refuses_a_large_record():
    mech = continual_release("tree", (2,), 3, sigma=1.0, records_per_step=2, clip_norm=1.0,
                             on_excess="reject", sampler=FAST)
    with pytest.raises(OutOfBoundsError, match="got a record of norm 2"):
        mech.add_records(np.array([[0.5, 0.0], [0.0, 2.0]]), np.random.default_rng(3))
    assert mech.steps == 0


@pytest.mark.parametrize("kind", KINDS)
def test_batches_cost_only_a_counted_float_slack(kind):
    one = continual_release(kind, (4, 4), 64, epsilon=1.0, delta=1e-5, symmetric=True)
    many = continual_release(kind, (4, 4), 64, epsilon=1.0, delta=1e-5, symmetric=True,
                             records_per_step=10_000)
    grow = many.sigma / one.sigma
    assert 1.0 < grow < 1.0 + 1e-6


def test_audit_of_a_batched_stream_at_its_claim():
    """Neighbours differ in one record inside one batch; the release keeps its claim."""
    mech = continual_release("mf", (), 4, epsilon=1.0, delta=1e-5, l2_sensitivity=1.0,
                             clip_norm=1.0, records_per_step=3)

    def run(dataset, rng, n):
        out = np.empty(n)
        for i in range(n):
            stream = continual_release("mf", (), 4, sigma=mech.sigma, l2_sensitivity=1.0,
                                       clip_norm=1.0, records_per_step=3)
            for batch in dataset:
                last = stream.add_records(batch, rng)
            out[i] = last
        return out

    base = np.zeros((4, 3))
    other = base.copy()
    other[1, 2] = 1.0
    pair = NeighbouringPair(base, other, "record-level: one record of one batch")
    report = run_audit(run, pair, Claim(1.0, 1e-5), samples=2_000, rng=0)
    assert report.verdict == "consistent"
