"""audits.assertions: verdicts, messages, determinism, speed at the quick count, bad input."""
from __future__ import annotations

import re
import time

import numpy as np
import pytest

from privbandit.accounting import (
    GaussianEvent,
    LaplaceEvent,
    Ledger,
    NotDifferentiallyPrivate,
    RepeatedEvent,
)
from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits import Claim, GaussianDPTester, NeighbouringPair, Projection, ReleaseAdapter
from privbandit.audits.assertions import (
    FULL_SAMPLES,
    QUICK_SAMPLES,
    ClaimRefuted,
    assert_charged,
    assert_consistent,
    assert_lossless,
    resolve_samples,
)
from privbandit.mechanisms import GaussianVector, LaplaceMeans, OrthogonalMask, TreePrivatizer
from privbandit.mechanisms.samplers import FAST, GRID

PAIR = NeighbouringPair(0.0, 1.0, "scalars at distance 1", "0 vs 1")
LAP = LaplaceEvent(10.0, 1.0)
GAUSS = GaussianEvent(4.0, 1.0)
MASKED = NotDifferentiallyPrivate("orthogonal mask")


def laplace(scale: float):
    def mechanism(x, rng, n):  # float-safe noise: the battery also tests float bits
        return GRID.add_laplace(np.full(n, float(x)), scale, rng)
    mechanism.name = f"laplace scale {scale:g}"
    return mechanism


# -- assert_consistent ----------------------------------------------------------------------
def test_correct_mechanism_passes_and_returns_the_report():
    report = assert_consistent(laplace(1.0), PAIR, 1.0)
    assert report.verdict == "consistent" and report.samples_per_side == QUICK_SAMPLES
    assert report.confidence == 0.99 and report.claimed_epsilon == 1.0


def test_refuted_claim_fails_with_an_actionable_report():
    with pytest.raises(ClaimRefuted) as caught:
        assert_consistent(laplace(0.5), PAIR, 1.0)  # true epsilon 2
    report, message = caught.value.report, str(caught.value)
    assert isinstance(caught.value, AssertionError) and report.violation
    kinds = " and ".join(report.violation_kinds)
    assert "distributional" in report.violation_kinds
    assert message.startswith(
        f"privacy claim refuted for laplace scale 0.5 by a {kinds} finding: epsilon >= "
        f"{report.epsilon_lower_bound:.4g} with 99% confidence, but claimed epsilon = 1 at "
        "delta = 0\n")
    for line in ("  relation : scalars at distance 1", "  pair     : 0 vs 1",
                 "  claim    : claimed epsilon", "  tester   : ",
                 f"  samples  : {QUICK_SAMPLES} per side, 1 pair(s), seed 0",
                 "Check the\nsensitivity under this relation"):
        assert line in message
    assert "  evidence : " in message and "assumes none" in message


def test_same_seed_same_verdict_and_numbers():
    reports = [assert_consistent(laplace(1.0), PAIR, 1.0, rng=7) for _ in range(2)]
    reports.append(assert_consistent(laplace(1.0), PAIR, 1.0, rng=np.random.default_rng(7)))
    bounds = {r.epsilon_lower_bound for r in reports}
    assert len(bounds) == 1 and reports[0].details == reports[2].details
    assert assert_consistent(laplace(1.0), PAIR, 1.0, rng=8).details != reports[0].details
    refuted = []
    for _ in range(2):
        with pytest.raises(ClaimRefuted) as caught:
            assert_consistent(laplace(0.5), PAIR, 1.0, rng=3)
        refuted.append(str(caught.value))
    assert refuted[0] == refuted[1]


def audit_laplace_means():
    mech = LaplaceMeans(1.0, 0.0, 1.0, 10, sampler=FAST)
    rewards = np.full((3, 10), 0.5)
    moved = rewards.copy()
    moved[0, 0] = 1.0
    pair = NeighbouringPair(rewards, moved, "agent-level", "one reward 0.5 -> 1")
    assert_consistent(ReleaseAdapter(mech.release), pair, mech.event, samples="quick")


def audit_gaussian_vector():
    mech = GaussianVector.from_privacy(1.0, 1e-5, 1.0, sampler=FAST)
    canary = np.array([0.6, 0.8])
    assert_consistent(ReleaseAdapter(mech.release), NeighbouringPair(np.zeros(2), canary, "r"),
                      mech.event, delta=1e-5, samples="quick",
                      tester=GaussianDPTester(Projection(canary)))


def charged_thousand_releases():
    ledger = Ledger("u", 1e6, 1e-5, "rdp")
    for _ in range(1000):
        ledger.charge(GAUSS)
    assert_charged(ledger, RepeatedEvent(GAUSS, 1000))


def lossless_on_a_large_batch():
    rng = np.random.default_rng(0)
    assert_lossless(OrthogonalMask.generate((10, 10, 12), rng), rng.normal(size=(200, 20, 32)))


@pytest.mark.parametrize("check", [audit_laplace_means, audit_gaussian_vector,
                                   charged_thousand_releases, lossless_on_a_large_batch])
def test_each_assertion_takes_under_two_seconds_at_the_quick_count(check):
    start = time.process_time()
    check()
    assert time.process_time() - start < 2.0


@pytest.mark.parametrize("rng, text", [
    (5, "seed 5"), (np.random.default_rng([0, 9]), "rng seeded with [0, 9]"),
    (np.random.default_rng(4).spawn(1)[0], "rng seeded with 4, spawn key (0,)"),
])
def test_refutation_says_how_to_rebuild_the_generator(rng, text):
    with pytest.raises(ClaimRefuted, match=rf"per side, 1 pair\(s\), {re.escape(text)}\n"):
        assert_consistent(laplace(0.25), PAIR, 1.0, rng=rng)


def test_pair_generators_are_called_pair_count_times():
    calls = []

    def pairs(rng):
        calls.append(rng)
        return NeighbouringPair(0.0, float(len(calls)), "scalars", f"0 vs {len(calls)}")

    with pytest.raises(ClaimRefuted) as caught:
        assert_consistent(laplace(1.0), pairs, 1.0, pair_count=3)
    assert len(calls) == 3 and caught.value.report.pairs_tested == 3
    assert caught.value.report.pair == "0 vs 3"  # the pair at distance 3 refutes epsilon = 1
    assert "3 pair(s), seed 0" in str(caught.value)


def test_claims_in_every_accepted_form_agree():
    event = GaussianEvent(2.0, 1.0)
    claim = Claim.from_event(event, 1e-5)
    forms = [claim, (claim.epsilon, 1e-5), event]
    extra = [{}, {}, {"delta": 1e-5}]
    reports = [assert_consistent(laplace(1.0), PAIR, f, **kw) for f, kw in zip(forms, extra,
                                                                              strict=True)]
    assert {(r.claimed_epsilon, r.claimed_delta) for r in reports} == {(claim.epsilon, 1e-5)}
    assert assert_consistent(laplace(1.0), PAIR, 1.0, delta=1e-3).claimed_delta == 1e-3


@pytest.mark.parametrize("kwargs, match", [
    (dict(mechanism=TreePrivatizer((2,), 4, sigma=1.0)),
     r"^mechanism must be a callable \(dataset, rng, n\) -> n outputs.* \(a stream: use "
     r"StreamAdapter\(factory\)\)"),
    (dict(mechanism=3), r"^mechanism must be a callable \(dataset, rng, n\) -> n outputs, an "
     r"OpenDP measurement"),
    (dict(claimed="one"), r"^claimed must be an audits.Claim, an epsilon, an \(epsilon, delta\)"),
    (dict(claimed=True), r"^claimed must be"),
    (dict(claimed=-1.0), r"^epsilon must be a finite number >= 0; got -1.0"),
    (dict(claimed=Claim(1.0), delta=1e-5), r"^delta must be None when claimed is a Claim"),
    (dict(claimed=GaussianEvent(1.0, 1.0)), r"^delta must be a delta in \(0, 1\) at which "
     r"GaussianEvent\(sigma=1.0, l2_sensitivity=1.0\) has a finite epsilon"),
    (dict(samples=3), r"^samples must be 'quick', 'full' or an integer >= 4"),
    (dict(samples="nightly"), r"^samples must be .*; got 'nightly'"),
    (dict(rng=-1), r"^rng must be a numpy.random.Generator or a seed \(an int >= 0\); got -1"),
    (dict(rng=None), r"^rng must be"),
    (dict(confidence=1.0), r"^confidence must be"),
    (dict(pair_generator=[]), r"^pair_generator must be rng -> NeighbouringPair, a Neighbour"),
    (dict(pair_generator=[PAIR, (0.0, 1.0)]), r"^pair_generator must be"),
    (dict(pair_generator=lambda rng: (0.0, 1.0)), r"^pairs must be a NeighbouringPair"),
])
def test_bad_input_is_refused_with_the_parameter_named(kwargs, match):
    args = dict(mechanism=laplace(1.0), pair_generator=PAIR, claimed=1.0)
    args.update(kwargs)
    with pytest.raises(InvalidParameterError, match=match):
        assert_consistent(**args)


@pytest.mark.parametrize("spec, count", [("quick", QUICK_SAMPLES), ("FULL", FULL_SAMPLES),
                                         (" full ", FULL_SAMPLES), (4, 4), ("2500", 2500),
                                         (np.int64(50), 50)])
def test_resolve_samples(spec, count):
    assert resolve_samples(spec) == count


@pytest.mark.parametrize("spec", [3, 0, -5, 4.0, True, "", "1e4", None, "quick!"])
def test_resolve_samples_refuses(spec):
    with pytest.raises(InvalidParameterError, match=r"^samples must be 'quick', 'full' or an"):
        resolve_samples(spec)


# -- assert_charged -------------------------------------------------------------------------


def ledger_with(*charges, accountant="rdp") -> Ledger:
    ledger = Ledger("agent 0", 50.0, 1e-5, accountant)
    for event, count in charges:
        if isinstance(event, NotDifferentiallyPrivate):
            ledger.note(event)
        else:
            ledger.charge(event, count)
    return ledger


@pytest.mark.parametrize("expected", [
    [LAP, LAP, GAUSS, MASKED], [RepeatedEvent(LAP, 2), GAUSS, MASKED], (GAUSS, MASKED, LAP, LAP),
])
def test_charged_events_match_however_they_are_grouped(expected):
    assert_charged(ledger_with((LAP, 2), (GAUSS, 1), (MASKED, 1)), expected)


def test_single_event_and_pure_dp_ledger():
    assert_charged(ledger_with((LAP, 3), accountant="pure-dp"), RepeatedEvent(LAP, 3))
    assert_charged(Ledger("empty", 1.0), [])


@pytest.mark.parametrize("expected, lines", [
    ([LAP, GAUSS, MASKED], ["unexpected release: LaplaceEvent(scale=10.0, l1_sensitivity=1.0) "
                            "x1", "spent epsilon"]),
    ([LAP, LAP, LAP, GAUSS, MASKED], ["missing release: LaplaceEvent(scale=10.0, "
                                      "l1_sensitivity=1.0) x1", "spent epsilon"]),
    ([LAP, LAP, GAUSS], ["unexpected not-DP note: 'orthogonal mask' x1"]),
    ([LAP, LAP, GaussianEvent(2.0, 1.0), MASKED],
     ["missing release: GaussianEvent(sigma=2.0, l2_sensitivity=1.0) x1",
      "unexpected release: GaussianEvent(sigma=4.0, l2_sensitivity=1.0) x1",
      "but the expected events cost epsilon"]),
])
def test_wrong_expectations_fail_naming_the_difference(expected, lines):
    ledger = ledger_with((LAP, 2), (GAUSS, 1), (MASKED, 1))
    with pytest.raises(AssertionError) as caught:
        assert_charged(ledger, expected)
    message = str(caught.value)
    assert message.startswith("ledger 'agent 0' does not hold exactly the expected events:\n")
    for line in lines:
        assert line in message
    assert "ledger events: [RepeatedEvent(event=LaplaceEvent" in message


def test_cost_uses_the_ledgers_own_accountant_settings():
    from privbandit.accounting import RDPAccountant

    ledger = Ledger("u", 50.0, 1e-5, RDPAccountant(orders=np.array([2.0, 8.0])))
    ledger.charge(GAUSS, 5)
    assert_charged(ledger, [GAUSS] * 5)
    default = Ledger("u", 50.0, 1e-5, "rdp")
    default.charge(GAUSS, 5)
    assert ledger.spent()[0] != pytest.approx(default.spent()[0], rel=1e-3)


@pytest.mark.parametrize("ledger, events, match", [
    ("ledger", [LAP], r"^ledger must be an accounting.Ledger; got 'ledger'"),
    (Ledger("u", 1.0), "LAP", r"^events must be a PrivacyEvent or an iterable of them"),
    (Ledger("u", 1.0), [LAP, 1.0], r"^events must be a PrivacyEvent or an iterable of Priv"),
])
def test_assert_charged_bad_input(ledger, events, match):
    with pytest.raises(InvalidParameterError, match=match):
        assert_charged(ledger, events)


# -- assert_lossless ------------------------------------------------------------------------
def test_orthogonal_mask_is_lossless_on_parts_and_on_full_contexts():
    rng = np.random.default_rng(1)
    mask = OrthogonalMask.generate((2, 3, 1), rng)
    full = rng.normal(size=(4, 5, 6)) * 100.0
    assert_lossless(mask, full)
    assert_lossless(mask, np.split(full, [2, 5], axis=-1))


class LeakyMask:
    """A user's mask with a bug: `q` is orthogonal but party 1 masks with a scaled block."""

    def __init__(self, scale: float) -> None:
        self.inner = OrthogonalMask.generate((2, 2), np.random.default_rng(0))
        self.q, self.widths, self.scale = self.inner.q, self.inner.widths, scale

    def mask(self, j, contexts):
        return self.inner.mask(j, contexts) * (self.scale if j == 1 else 1.0)


def test_a_lossy_mask_fails_naming_each_broken_property():
    contexts = np.random.default_rng(2).normal(size=(3, 4))
    assert_lossless(LeakyMask(1.0), contexts)
    with pytest.raises(AssertionError) as caught:
        assert_lossless(LeakyMask(1.001), contexts)
    message = str(caught.value)
    assert message.startswith("mask with widths (2, 2) is not lossless on contexts of shape "
                              "(3, 4):\n")
    for what in ("sum of masked parts vs Q x", "unmasked sum vs the contexts",
                 "norms of masked vs plain contexts", "inner products of masked vs plain contexts"):
        assert f"  {what}: max abs error " in message


@pytest.mark.parametrize("mask, contexts, match", [
    (object(), np.zeros((2, 3)), r"^mask must be an OrthogonalMask"),
    (OrthogonalMask.generate((1, 2), np.random.default_rng(0)), np.zeros((2, 4)),
     r"^contexts must be \(\.\.\., K, 3\) or a list of per-party arrays"),
    (OrthogonalMask.generate((1, 2), np.random.default_rng(0)), [np.zeros((2, 1))],
     r"^contexts must be one array \(\.\.\., K, d_j\) per party, widths \(1, 2\)"),
    (OrthogonalMask.generate((1, 2), np.random.default_rng(0)),
     [np.zeros((2, 1)), np.zeros((3, 2))], r"^contexts must be one array"),
])
def test_assert_lossless_bad_input(mask, contexts, match):
    with pytest.raises(InvalidParameterError, match=match):
        assert_lossless(mask, contexts)
