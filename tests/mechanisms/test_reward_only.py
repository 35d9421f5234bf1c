"""Reward-only continual release: public features travel exactly, only sum y x is noised."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting.accountants import ExactGaussianAccountant
from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms import FAST, Publication, PublicFeatures, RewardOnlyRelease
from privbandit.mechanisms.errors import OutOfBoundsError, ShapeError
from privbandit.mechanisms.tape import Tape, pair_loss, recording

PARTY = Publication("test party")  # marks the tests' features public


def _unit_rows(rng, n, d):
    x = rng.standard_normal((n, d))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _play(tape, features, rewards, mechanism="mf", lo=0.0, hi=1.0):
    """One stream over the steps (features[i], rewards[i]), recorded on `tape`."""
    rng = np.random.default_rng(11)
    stream = RewardOnlyRelease(features[0].shape[1], len(features), mechanism=mechanism,
                               epsilon=1.0, delta=1e-5, reward_range=(lo, hi),
                               records_per_step=max(len(f) for f in features) or 1,
                               sampler=FAST)
    with recording(tape):
        outs = [stream.add(PARTY.features(x, why="test"), y, rng)
                for x, y in zip(features, rewards, strict=True)]
    return stream, outs


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["mf", "tree", "honaker"]), st.integers(1, 12), st.integers(1, 4),
       st.integers(2, 6), st.data())
def test_one_changed_reward_costs_at_most_the_event_and_the_public_part_is_equal(
        mechanism, steps, per_step, d, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    features = [_unit_rows(rng, per_step, d) for _ in range(steps)]
    rewards = [rng.random(per_step) for _ in range(steps)]
    step, row = data.draw(st.integers(0, steps - 1)), data.draw(st.integers(0, per_step - 1))
    flipped = [r.copy() for r in rewards]
    flipped[step][row] = 1.0 - math.floor(rewards[step][row] + 0.5)  # the far end of [0, 1]
    a = Tape()
    stream, outs = _play(a, features, rewards, mechanism)
    b = Tape(forced=a)
    _play(b, features, flipped, mechanism)
    loss = pair_loss(a, b)
    assert loss.public_difference == "" and loss.differing <= 1
    assert loss.mu <= ExactGaussianAccountant().compose(stream.event).mu * (1 + 1e-9)
    gram = sum(x.T @ x for x in features)
    assert np.allclose(outs[-1].gram, gram) and outs[-1].count == steps * per_step


def test_the_worst_reward_change_meets_the_event():
    """A unit feature whose reward moves across the whole range is the sensitivity."""
    x = [np.eye(3)[:1]]
    a = Tape()
    stream, _ = _play(a, x, [np.array([0.0])])
    b = Tape(forced=a)
    _play(b, x, [np.array([1.0])])
    assert stream.l2_sensitivity == pytest.approx(1.0)
    assert pair_loss(a, b).mu == pytest.approx(
        ExactGaussianAccountant().compose(stream.event).mu, rel=1e-3)


def test_features_that_differ_between_neighbours_are_an_unbounded_loss():
    rng = np.random.default_rng(0)
    x = _unit_rows(rng, 2, 3)
    a = Tape()
    _play(a, [x, x], [np.zeros(2), np.zeros(2)])
    b = Tape(forced=a)
    _play(b, [x, _unit_rows(rng, 2, 3)], [np.zeros(2), np.zeros(2)])
    loss = pair_loss(a, b)
    assert loss.mu == math.inf and "public value" in loss.public_difference


def test_moments_are_the_exact_sums_plus_noise_of_the_stated_variance():
    rng = np.random.default_rng(5)
    x, y = _unit_rows(rng, 3, 4), np.array([0.2, 0.9, 1.0])
    noise = []
    for seed in range(400):
        s = RewardOnlyRelease(4, 3, sigma=2.0, sampler=FAST, records_per_step=3)
        out = s.add(PARTY.features(x, why="test"), y, np.random.default_rng(seed))
        noise.append(out.moments - y @ x)
    noise = np.array(noise)
    assert abs(noise.mean()) < 0.2 and noise.var() == pytest.approx(out.variance, rel=0.15)
    assert np.allclose(out.features, x.sum(axis=0))


def test_bad_records_are_refused_and_change_nothing():
    rng = np.random.default_rng(1)
    s = RewardOnlyRelease(3, 4, epsilon=1.0, delta=1e-5, records_per_step=2, sampler=FAST,
                          on_excess="reject")
    x = _unit_rows(rng, 2, 3)
    with pytest.raises(InvalidParameterError, match="PublicFeatures"):
        s.add(x, np.zeros(2), rng)
    with pytest.raises(OutOfBoundsError, match="feature_bound"):
        s.add(PARTY.features(2 * x, why="test"), np.zeros(2), rng)
    with pytest.raises(OutOfBoundsError, match="rewards must lie"):
        s.add(PARTY.features(x, why="test"), np.array([0.5, 1.5]), rng)
    with pytest.raises(ShapeError, match="rewards"):
        s.add(PARTY.features(x, why="test"), np.zeros(3), rng)
    with pytest.raises(InvalidParameterError, match="records_per_step"):
        s.add(PARTY.features(_unit_rows(rng, 3, 3), why="test"), np.zeros(3), rng)
    with pytest.raises(InvalidParameterError, match="rewards"):
        s.add(PARTY.features(x, why="test"), np.array([0.5, math.nan]), rng)
    with pytest.raises(InvalidParameterError, match="why"):
        PublicFeatures(x, by=PARTY, why="")
    with pytest.raises(InvalidParameterError, match="Publication"):
        PublicFeatures(x, by="free text", why="test")
    assert s.steps == 0 and s.clipped == 0
    clip = RewardOnlyRelease(3, 4, sigma=1.0, sampler=FAST, records_per_step=2)
    clip.add(PARTY.features(x, why="test"), np.array([-3.0, 0.5]), rng)
    assert clip.clipped == 1 and clip.steps == 1


def test_an_empty_step_keeps_every_prefix_aligned():
    rng = np.random.default_rng(2)
    s = RewardOnlyRelease(2, 3, sigma=1.0, sampler=FAST)
    out = s.add(PARTY.features(np.empty((0, 2)), why="test"), np.empty(0), rng)
    assert out.count == 0 and out.step == 1 and out.variance == s.prefix_variance(1)
