"""Ledgers: charge before release, refuse without change, report what was spent."""
from __future__ import annotations

import copy
import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting import (
    BudgetExceededError,
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    Ledger,
    NotDifferentiallyPrivate,
    NotDifferentiallyPrivateError,
    make_accountant,
)

DELTA = 1e-5
laplace = st.builds(LaplaceEvent, st.floats(0.5, 20.0), st.just(1.0))
gaussian = st.builds(GaussianEvent, st.floats(1.0, 20.0), st.just(1.0))
charges = st.lists(st.tuples(laplace, st.integers(1, 5)), min_size=1, max_size=12)


def snapshot(ledger: Ledger):
    return ledger.events, ledger.spent(), ledger.remaining(), ledger.summary()


@pytest.mark.parametrize("name", ["pure-dp", "zcdp", "rdp", "approx-dp"])
@settings(max_examples=15)
@given(sequence=charges, budget=st.floats(0.5, 5.0))
def test_spent_is_the_accountant_answer_for_exactly_the_accepted_events(name, sequence, budget):
    ledger = Ledger("user-7", budget, DELTA, accountant=name)
    accepted = make_accountant(name)
    for event, count in sequence:
        before = snapshot(ledger)
        if ledger.can_charge(event, count):
            ledger.charge(event, count)
            accepted.compose(event, count)
        else:
            with pytest.raises(BudgetExceededError, match="nothing was charged"):
                ledger.charge(event, count)
            assert snapshot(ledger) == before  # a refused charge changes nothing
        assert ledger.spent() == (accepted.epsilon(DELTA), DELTA)
        assert ledger.spent()[0] <= budget * (1 + 1e-9)
        assert ledger.remaining() == pytest.approx(max(0.0, budget - ledger.spent()[0]))


@settings(max_examples=15)
@given(events=st.lists(gaussian, min_size=1, max_size=8), budget=st.floats(0.5, 4.0))
def test_gaussian_ledger_never_overspends(events, budget):
    ledger = Ledger("party-1", budget, DELTA, accountant="exact-gaussian")
    for event in events:
        try:
            ledger.charge(event)
        except BudgetExceededError:
            pass
        assert ledger.spent()[0] <= budget * (1 + 1e-9)


def test_not_dp_release_is_refused_by_charge_and_recorded_by_note():
    ledger = Ledger("party-2", 1.0, DELTA, accountant="zcdp")
    masked = NotDifferentiallyPrivate("orthogonal mask (semi-honest parties)")
    before = snapshot(ledger)
    with pytest.raises(NotDifferentiallyPrivateError, match="orthogonal mask"):
        ledger.charge(ComposedEvent((GaussianEvent(50.0, 1.0), masked)))
    assert snapshot(ledger) == before
    ledger.note(masked)
    assert ledger.summary()["not_dp_releases"] == ["orthogonal mask (semi-honest parties)"]


def test_summary_is_json_and_complete():
    ledger = Ledger("cluster-3", 2.0, DELTA, accountant="rdp")
    ledger.charge(GaussianEvent(4.0, 1.0), 3)
    summary = json.loads(json.dumps(ledger.summary()))
    assert summary["unit"] == "cluster-3" and summary["accountant"] == "rdp"
    assert summary["releases"] == 1
    assert summary["epsilon_spent"] == pytest.approx(ledger.spent()[0])
    assert summary["epsilon_remaining"] == pytest.approx(2.0 - ledger.spent()[0])


def test_accountant_property_is_a_copy():
    ledger = Ledger("u", 1.0)
    ledger.accountant.compose(LaplaceEvent(1.0, 1.0))
    assert ledger.events == () and ledger.spent()[0] == 0.0


def test_long_runs_stay_cheap_and_serialisable():
    ledger = Ledger("user", 1e6, accountant="pure-dp")
    for _ in range(5000):  # one charge per round; copies are O(1)
        ledger.charge(LaplaceEvent(10.0, 1.0))
    assert ledger.spent()[0] == pytest.approx(500.0)
    for clone in (pickle.loads(pickle.dumps(ledger)), copy.deepcopy(ledger)):
        assert clone.spent() == ledger.spent() and len(clone.events) == 5000
        clone.charge(LaplaceEvent(10.0, 1.0))
        assert len(ledger.events) == 5000


def test_a_used_accountant_is_not_a_budget():
    with pytest.raises(ValueError, match="a fresh accountant with no events"):
        Ledger("u", 1.0, accountant=make_accountant("pure-dp").compose(LaplaceEvent(1.0, 1.0)))


def test_recording_charges_lists_every_charge_that_lands_and_none_that_is_refused():
    from privbandit.accounting.ledger import recording_charges

    event = LaplaceEvent(1.0, 1.0)
    ledger = Ledger("unit", 2.0)
    ledger.charge(event)  # outside the block: not listed
    with recording_charges() as charges:
        ledger.charge(event)
        with pytest.raises(BudgetExceededError):
            ledger.charge(event)
    Ledger("other", 1.0).charge(event)  # after the block: not listed
    assert charges == [("unit", event, 1)]
