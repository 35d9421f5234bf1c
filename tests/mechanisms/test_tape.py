"""The release tape: forced replays, the pair loss of each mechanism against its event."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting.accountants import ExactGaussianAccountant
from privbandit.mechanisms import (
    FAST,
    GaussianVector,
    LaplaceMeans,
    SymmetricGaussianMatrix,
    continual_release,
)
from privbandit.mechanisms.tape import ReplayDivergedError, Tape, pair_loss, recording


def _event_mu(event) -> float:
    acc = ExactGaussianAccountant().compose(event)
    return acc.mu if hasattr(acc, "mu") else math.nan


def _stream_pair(mechanism: str, steps: int, flip: int, first, second):
    """Record a stream fed `first` at every step, replay it fed `second` at step `flip`."""
    def play(tape, at):
        rng = np.random.default_rng(7)
        s = continual_release(mechanism, (3, 3), steps, epsilon=1.0, delta=1e-5,
                              l2_sensitivity=math.sqrt(2.0) * 2.0, clip_norm=2.0,
                              symmetric=True, sampler=FAST)
        outs = []
        with recording(tape):
            for t in range(steps):
                z = second if t == at else first
                outs.append(s.add(np.outer(z, z), rng))
        return s, outs

    a = Tape()
    stream, outs_a = play(a, -1)
    b = Tape(forced=a)
    _, outs_b = play(b, flip)
    return stream, a, b, outs_a, outs_b


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(["tree", "honaker", "mf"]), st.integers(2, 40), st.data())
def test_one_replaced_record_costs_at_most_the_event_and_worst_case_meets_it(mech, steps, data):
    flip = data.draw(st.integers(0, steps - 1))
    root2 = math.sqrt(2.0)
    # ||z||^2 = 2 = clip norm; orthogonal z, z' give ||z z' - z' z'||_F = 2 sqrt 2, the
    # declared sensitivity: whitened, 2, the event's
    stream, a, b, outs_a, outs_b = _stream_pair(mech, steps, flip, np.array([root2, 0, 0]),
                                                np.array([0, root2, 0]))
    assert all(np.array_equal(x, y) for x, y in zip(outs_a, outs_b, strict=True))  # forced
    loss = pair_loss(a, b)
    assert loss.differing == 1 and loss.releases == steps
    claimed = stream.event
    mu_claim = (claimed.release_event.mu if mech == "mf"
                else claimed.node_event.mu * math.sqrt(claimed.nodes_per_record))
    assert loss.mu <= mu_claim * (1 + 1e-9)
    if mech == "mf" and flip == 0:  # the first column is the largest: the event is exact
        assert loss.mu == pytest.approx(mu_claim, rel=1e-6)


def test_a_replay_that_releases_more_diverges():
    mech = GaussianVector(1.0, 1.0, sampler=FAST)
    a = Tape()
    with recording(a):
        mech.release(np.zeros(2), np.random.default_rng(0))
    b = Tape(forced=a)
    with recording(b), pytest.raises(ReplayDivergedError, match="depend on the data"):
        mech.release(np.zeros(2), np.random.default_rng(0))
        mech.release(np.zeros(2), np.random.default_rng(0))


@given(st.floats(-3, 3), st.floats(-3, 3))
def test_symmetric_matrix_loss_is_half_the_frobenius_square(x, y):
    mech = SymmetricGaussianMatrix(2.0, 1.0, sampler=FAST)
    a = Tape()
    with recording(a):
        mech.release(np.array([[x, 1.0], [1.0, 0.0]]), np.random.default_rng(0))
    b = Tape(forced=a)
    with recording(b):
        mech.release(np.array([[y, 0.0], [0.0, 0.0]]), np.random.default_rng(0))
    diff = np.array([[x - y, 1.0], [1.0, 0.0]])
    assert pair_loss(a, b).mu**2 == pytest.approx(np.sum(diff**2) / 2 / 4.0)


def test_laplace_loss_is_l1_over_scale():
    mech = LaplaceMeans(0.5, 0.0, 1.0, 4, sampler=FAST)
    a = Tape()
    with recording(a):
        mech.release(np.array([[0.0, 0.0, 0.0, 1.0]]), np.random.default_rng(0))
    b = Tape(forced=a)
    with recording(b):
        mech.release(np.array([[0.0, 0.0, 0.0, 0.0]]), np.random.default_rng(0))
    loss = pair_loss(a, b)
    assert loss.mu == 0.0 and loss.pure_epsilon == pytest.approx(0.25 / mech.scale)
    assert loss.epsilon(1e-5) == pytest.approx(0.5, rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 6), st.integers(-1, 5), st.floats(1e-12, 1e3))
def test_a_public_value_costs_nothing_when_equal_and_is_unbounded_when_it_differs(
        n, moved, gap):
    """PublicValue: equal releases cost 0 alongside a noised release; one differing release
    of any size makes the pair's loss unbounded and names the first difference."""
    from privbandit.mechanisms import PublicValue

    def play(tape, shift):
        rng = np.random.default_rng(3)
        gram, noisy = PublicValue("gram"), GaussianVector(1.0, 1.0, sampler=FAST)
        with recording(tape):
            for i in range(n):
                gram.release(np.eye(2) * (i + (shift if i == moved else 0.0)))
                noisy.release(np.ones(2), rng)
    a = Tape()
    play(a, 0.0)
    b = Tape(forced=a)
    play(b, gap)
    loss = pair_loss(a, b)
    if 0 <= moved < n:
        assert loss.mu == math.inf and loss.epsilon(1e-5) == math.inf
        assert f"release {2 * moved}: public value 'gram'" in loss.public_difference
    else:
        assert loss.mu == 0.0 and loss.public_difference == "" and loss.differing == 0
    with pytest.raises(Exception, match="channel"):
        PublicValue("")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=12))
def test_the_replay_pairs_mechanisms_one_to_one_in_both_directions(units):
    """Release i comes from unit units[i][0] in the recorded run and units[i][1] in the
    replay, every value equal: the pair is finite exactly when the units pair one to one
    (a replayed unit in two recorded places, or a recorded unit in two replayed ones, is
    a data-dependent choice of who releases)."""
    def play(tape, side):
        mechs = [GaussianVector(1.0, 1.0, sampler=FAST) for _ in range(4)]
        with recording(tape):
            for pair in units:
                mechs[pair[side]].release(np.zeros(1), np.random.default_rng(0))
    a = Tape()
    play(a, 0)
    b = Tape(forced=a)
    play(b, 1)
    forward = {r: {p for q, p in units if q == r} for r, _ in units}
    backward = {p: {q for q, s in units if s == p} for _, p in units}
    bijective = all(len(v) == 1 for v in (*forward.values(), *backward.values()))
    if bijective:
        assert pair_loss(a, b).differing == 0
    else:
        with pytest.raises(ReplayDivergedError, match="one to one"):
            pair_loss(a, b)


def test_a_marked_tape_stamps_rounds_and_a_replay_at_another_round_diverges():
    from privbandit.mechanisms.publication import Publication

    mech = GaussianVector(1.0, 1.0, sampler=FAST)
    party = Publication("party")

    def play(tape, rounds):
        with recording(tape):
            for t in rounds:
                tape.mark(t)
                party.fed(mech, merged=t == 4)
                mech.release(np.zeros(1), np.random.default_rng(0))
            party.fed(mech)  # after the last release: never released
    a = Tape()
    play(a, [2, 4])
    assert [e.round for e in a.entries] == [2, 4]
    assert [(f.round, f.facts["merged"]) for f in a.released_feeds()] == [(2, False), (4, True)]
    assert len(a.declared) == 3 and a.mechanisms == []  # built before the tape was active
    with pytest.raises(ReplayDivergedError, match="left at round 5 in the replay and at "
                                                  "round 4"):
        play(Tape(forced=a), [2, 5])
