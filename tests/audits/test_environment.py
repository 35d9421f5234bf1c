"""The forced-replay audit's blind spots, each with a control that must not read "consistent".

A toy party holds four rewards, charges its ledger once for a Gaussian
mechanism and releases each reward through it, with a message's metadata
(`PublicValue`) beside each release; the neighbour's world differs in one
reward.  The honest toy is consistent; each control opens one blind spot:
releases that bypass the tape, a side channel in the messages' metadata, a
unit swap the one-way mechanism check missed, and flips that touch nothing.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from privbandit.accounting.ledger import Ledger
from privbandit.audits.environment import (
    UnrecordedReleaseError,
    audit_pairs,
    audit_replays,
    check_recorded,
    forced_replay,
    record,
)
from privbandit.mechanisms import FAST, GaussianVector, PublicValue
from privbandit.mechanisms.tape import Tape, recording

DELTA = 1e-5
CLAIM = 4.0  # sigma 1, rewards in [0, 1]: any one flip costs at most 3.88
REWARDS = np.array([0.9, 0.2, 0.7, 0.4])


def toy(which: int, *, flip: int = 1, bypass: bool = False, side_channel: bool = False,
        swap: bool = False, charge: bool = True) -> list[np.ndarray]:
    """Play the toy party on the world (which = 0) or the neighbour whose reward `flip`
    moved to 0 (which = 1, flip = -1: no reward moves)."""
    rng = np.random.default_rng(5)
    rewards = REWARDS.copy()
    if which and flip >= 0:
        rewards[flip] = 0.0
    ledger = Ledger("party", 8.0, DELTA, "exact-gaussian")
    units = [GaussianVector(1.0, 1.0, sampler=FAST) for _ in range(3)]  # unit 2 is spare
    if charge:
        ledger.charge(units[0].event)  # each reward meets one release: charged once
    log = PublicValue("communication")
    out = []
    for t, y in enumerate(rewards):
        unit = units[t % 2]
        if swap and which and t == 3:
            unit = units[2]  # the recorded run's unit 1 released here; unit 2 does instead
        if bypass:
            out.append(np.array([y]) + rng.normal(0.0, 1.0, 1))  # noise outside the tape
        else:
            out.append(unit.release(np.array([y]), rng))
        size = 8 + (int(10 * y) if side_channel else 0)  # bytes from the raw reward
        log.release(np.array([t, size]))
    return out


def audit(**kind) -> object:
    return audit_pairs({"flip at 1": lambda which: toy(which, **kind)}, DELTA, CLAIM)


def test_the_honest_toy_moves_its_own_release_only_and_is_consistent():
    report = audit()
    finding = report.worst
    assert report.verdict == "consistent" and report.touched == 1
    assert finding.differing == 1 and finding.public == 4 and finding.releases == 8
    assert finding.mu == pytest.approx(0.2)  # |0.2 - 0| / sigma
    assert "1 of 1 flips touched a release" in report.describe()


def test_releases_that_bypass_the_tape_are_unbounded_not_consistent():
    report = audit(bypass=True)
    assert report.verdict == "violation" and math.isinf(report.worst.epsilon)
    assert "bypassed it" in report.worst.diverged  # two mechanisms built, none released


def test_noise_drawn_outside_any_mechanism_is_named():
    tape = Tape()
    with recording(tape):
        pass
    event = GaussianVector(1.0, 1.0, sampler=FAST).event
    with pytest.raises(UnrecordedReleaseError, match="outside the mechanisms"):
        check_recorded(tape, [("party", event, 1)])


def test_a_release_no_ledger_paid_for_is_unbounded():
    def run(which):
        toy(which)  # its ledger paid for its releases
        extra = GaussianVector(2.0, 1.0, sampler=FAST)  # a second mechanism, never charged
        extra.release(np.zeros(1), np.random.default_rng(0))
    report = audit_pairs({"flip at 1": run}, DELTA, CLAIM)
    assert report.verdict == "violation" and "released unpaid" in report.worst.diverged


def test_a_side_channel_in_message_metadata_is_unbounded_with_the_first_difference():
    report = audit(side_channel=True)
    assert report.verdict == "violation" and math.isinf(report.worst.epsilon)
    assert report.worst.diverged.startswith("release 3: public value 'communication'")
    assert "communication [ 1., 10.] in the recorded run, communication [1., 8.]" in (
        report.worst.diverged)


def test_a_swap_of_which_unit_releases_is_unbounded_though_the_values_agree():
    """The replay's unit 2 releases where the recorded run's unit 1 did, with the same
    value: each replayed mechanism maps to one recorded one (the old, one-way check
    passed), but the recorded unit 1 maps to two replayed units."""
    report = audit_pairs({"flip at none": lambda which: toy(which, flip=-1, swap=True)},
                         DELTA, CLAIM)
    assert report.verdict == "violation"
    assert "pair one to one" in report.worst.diverged


def test_flips_that_touch_nothing_are_inconclusive_and_one_that_does_decides():
    recorded = record(lambda: toy(0))
    assert recorded.unrecorded == ""
    none = audit_replays(recorded, {"no flip": lambda: toy(1, flip=-1)}, DELTA, CLAIM)
    assert none.verdict == "inconclusive" and none.touched == 0
    assert "0 of 1 flips touched a release" in none.describe()
    both = audit_replays(recorded, {"no flip": lambda: toy(1, flip=-1),
                                    "flip at 2": lambda: toy(1, flip=2)}, DELTA, CLAIM)
    assert both.verdict == "consistent" and both.touched == 1
    assert audit_replays(recorded, {}, DELTA, None).verdict == "measured"


def test_a_run_without_ledgers_is_audited_on_its_releases_alone():
    loss = forced_replay(lambda which: toy(which, charge=False))
    assert loss.differing == 1 and loss.public == 4
