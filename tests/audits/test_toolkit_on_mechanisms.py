"""Our own mechanisms, tested through the user toolkit (strategies, assertions, plugin)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting import Ledger, RepeatedEvent
from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits import (
    Claim,
    GaussianDPTester,
    LinearDiscriminant,
    Projection,
    ReleaseAdapter,
    StreamAdapter,
    tree_factory,
)
from privbandit.audits import strategies as pst
from privbandit.audits.assertions import (
    ClaimRefuted,
    assert_charged,
    assert_consistent,
    assert_lossless,
)
from privbandit.audits.cases import mechanism_cases
from privbandit.audits.controls import (
    gaussian_wrong_sensitivity,
    laplace_half_scale,
    laplace_ignores_width,
    tree_drops_node_noise,
    variance_as_std,
)
from privbandit.mechanisms import GaussianVector, KAnonymousAggregator, LaplaceMeans, TreePrivatizer
from privbandit.mechanisms.laplace import pairwise_mean
from privbandit.mechanisms.samplers import FAST

AUDITS = settings(max_examples=4)  # each example is a whole audit


# -- sensitivities hold on every drawn neighbouring pair ------------------------------------
@given(pst.reward_pairs((3, 10), "agent-level", lo=-1.0, hi=2.0))
def test_laplace_means_sensitivity_covers_agent_level_pairs(pair):
    mech = LaplaceMeans(1.0, -1.0, 2.0, 10, sampler=FAST)
    moved = np.abs(pairwise_mean(pair.dataset) - pairwise_mean(pair.neighbour)).sum()
    assert moved <= mech.event.l1_sensitivity


@given(pst.matrix_pairs(3, 8, "record-level"), pst.seeds())
def test_tree_record_level_pairs_never_clip(pair, seed):
    tree = TreePrivatizer((3, 3), 8, sigma=1.0, symmetric=True, on_excess="reject",
                          sampler=FAST)
    rng = np.random.default_rng(seed)
    for step in pair.dataset:
        tree.add(step, rng)  # every record is within the declared norm: nothing refused
    assert tree.clipped == 0 and tree.steps == 8


# -- audits on drawn pairs: correct mechanisms keep their claims ---------------------------
@AUDITS
@given(pst.vector_pairs(2, 1, "replace-one"), pst.seeds())
def test_gaussian_vector_keeps_its_claim_on_replace_one_pairs(pair, seed):
    # Unit-norm records replaced: the released value moves by up to 2.
    mech = GaussianVector.from_privacy(1.0, 1e-5, 2.0, sampler=FAST)
    gap = (pair.neighbour - pair.dataset).ravel()
    tester = GaussianDPTester(Projection(gap))
    assert_consistent(ReleaseAdapter(mech.release, "gaussian-vector"), pair, mech.event,
                      delta=1e-5, tester=tester, rng=seed)


@AUDITS
@given(pst.vector_pairs(2, 8, "record-level"), pst.seeds())
def test_tree_privatizer_keeps_its_claim_on_record_level_pairs(pair, seed):
    ref = TreePrivatizer((2,), 8, epsilon=2.0, delta=1e-5, sampler=FAST)
    mech = StreamAdapter(tree_factory((2,), 8, ref.sigma, clip_norm=1.0, sampler=FAST), "tree")
    assert_consistent(mech, pair, ref.event, delta=1e-5, tester=GaussianDPTester(
        LinearDiscriminant()), rng=seed)


@pytest.mark.parametrize("case", [c for c in mechanism_cases(exact=False)], ids=lambda c: c.name)
def test_standard_cases_pass_assert_consistent(case, rng, audit_samples):
    report = assert_consistent(case.mechanism, case.pair, case.claim, tester=case.tester,
                               samples=audit_samples, rng=rng)
    assert report.claimed_epsilon == case.claim.epsilon


@pytest.mark.parametrize("build", [laplace_half_scale, gaussian_wrong_sensitivity,
                                   tree_drops_node_noise, variance_as_std, laplace_ignores_width],
                         ids=lambda b: b.__name__)
def test_planted_bugs_are_refuted(build, rng, audit_samples):
    case = build()
    with pytest.raises(ClaimRefuted) as caught:
        assert_consistent(case.mechanism, case.pair, case.claim, tester=case.tester,
                          samples=audit_samples, rng=rng, name=case.name)
    assert caught.value.report.epsilon_lower_bound > case.claim.epsilon
    report = caught.value.report
    assert "distributional" in report.violation_kinds  # the mathematics is wrong
    kinds = " and ".join(report.violation_kinds)
    assert str(caught.value).startswith(
        f"privacy claim refuted for {case.name} by a {kinds} finding: epsilon >= ")


# -- ledgers hold exactly what the mechanisms charged ---------------------------------------
@given(pst.epsilons(0.01, 1.0), st.integers(1, 20))
def test_laplace_epochs_are_charged_exactly(eps, epochs):
    mech = LaplaceMeans(eps, 0.0, 1.0, 5, sampler=FAST)
    ledger = Ledger("agent", 1000.0)
    for _ in range(epochs):
        ledger.charge(mech.event)
    assert_charged(ledger, RepeatedEvent(mech.event, epochs))
    assert_charged(ledger, [mech.event] * epochs)
    with pytest.raises(AssertionError, match=r"missing release: LaplaceEvent"):
        assert_charged(ledger, [mech.event] * (epochs + 1))


@given(st.integers(2, 5), st.integers(1, 4), pst.seeds(), st.booleans())
def test_anonymous_aggregator_charges_one_event_per_round(threshold, rounds, seed, noisy):
    source = lambda users, arms, rng: rng.uniform(0.0, 1.0, users.shape)
    agg = KAnonymousAggregator(threshold, source, laplace_epsilon=0.5 if noisy else None,
                               reward_bounds=(0.0, 1.0))
    members = np.broadcast_to(np.arange(threshold), (rounds, 1, threshold))
    ledger = Ledger("user 0", 100.0)
    agg.aggregate(members, np.zeros((rounds, 1), dtype=np.int64), np.random.default_rng(seed),
                  ledger=ledger)
    assert_charged(ledger, RepeatedEvent(agg.event, rounds) if noisy else agg.event)


@given(pst.invalid_epsilons().filter(lambda v: v is not None))  # None: no noise, not DP
def test_anonymous_aggregator_refuses_invalid_epsilon(bad):
    with pytest.raises(InvalidParameterError, match=r"^laplace_epsilon must be"):
        KAnonymousAggregator(3, lambda u, a, r: u * 0.0, laplace_epsilon=bad,
                             reward_bounds=(0.0, 1.0))


# -- masks ----------------------------------------------------------------------------------
@given(pst.masks_with_contexts(arms=3, norm_bound=10.0))
def test_orthogonal_masks_are_lossless(setup):
    mask, parts = setup
    assert_lossless(mask, parts)
    ledger = Ledger("party 0", 1.0)
    ledger.note(mask.event)
    assert_charged(ledger, mask.event)


def test_claims_read_from_events_match_the_audit_claims():
    mech = LaplaceMeans(1.0, 0.0, 1.0, 10)  # float-safe: the battery also tests float bits
    report = assert_consistent(ReleaseAdapter(mech.release), mechanism_cases(False)[0].pair,
                               mech.event, tester=mechanism_cases(False)[0].tester)
    assert report.claimed_epsilon == Claim.from_event(mech.event).epsilon
