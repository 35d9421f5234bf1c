"""The audit layer on one agent's transcript: the correct one passes, the broken one fails."""
from itertools import pairwise

import numpy as np
import pytest

from privbandit.errors import RewardError, ShapeError
from privbandit.fedmab import EpochSchedule
from privbandit.fedmab.audit import (
    EpochMeansTranscript,
    audit_transcript,
    canary_epoch,
    neighbouring_rewards,
)


class MisSized(EpochMeansTranscript):
    """Positive control: noise sized for the S(r) rewards so far instead of n_r, while the
    event still claims epsilon (its true epsilon in epoch r is epsilon S(r) / n_r)."""

    def rewards_per_epoch(self):
        return self.sizes


EPS = 1.0
# the schedule CDP-MAB itself uses (M = 5 agents, K = 3 arms, T = 2000), first 3 epochs
SIZES = EpochSchedule.build(EPS, 3, 2000, 5).sizes[:3]


def test_transcript_shape_and_noise_scale_follow_the_epochs():
    tr = EpochMeansTranscript(EPS, SIZES)
    pair = neighbouring_rewards(SIZES, 3, np.random.default_rng(0))
    out = tr(pair.dataset, np.random.default_rng(1), 4000)
    assert out.shape == (4000, len(SIZES), 3)
    n = np.diff((0, *SIZES))
    edges = np.cumsum((0, *n))
    means = [pair.dataset[:, a:b].mean(axis=1) for a, b in pairwise(edges)]
    np.testing.assert_allclose(out.mean(axis=0), means, atol=6 / (EPS * n.min() * 60))
    # Laplace(b) has mean absolute deviation b = 1 / (eps n_r)
    spread = np.abs(out - np.array(means)).mean(axis=(0, 2))
    np.testing.assert_allclose(spread, 1 / (EPS * n), rtol=0.1)
    broken_tr = MisSized(EPS, SIZES)
    broken = broken_tr(pair.dataset, np.random.default_rng(1), 4000)
    spread_b = np.abs(broken - np.array(means)).mean(axis=(0, 2))
    np.testing.assert_allclose(spread_b, 1 / (EPS * np.array(SIZES)), rtol=0.1)


def test_pair_differs_in_exactly_one_reward_of_the_canary_epoch():
    pair = neighbouring_rewards(SIZES, 3, np.random.default_rng(0))
    diff = np.argwhere(pair.dataset != pair.neighbour)
    r = canary_epoch(SIZES)
    assert diff.tolist() == [[0, (0, *SIZES)[r - 1]]]
    s = np.array(SIZES, float)
    assert r == int(np.argmax(s / np.diff(s, prepend=0))) + 1 and r > 1


def test_audit_accepts_the_correct_transcript_and_rejects_the_broken_one():
    rng = np.random.default_rng(2024)
    ok = audit_transcript(EpochMeansTranscript(EPS, SIZES), 3, rng, samples=40000)
    bad = audit_transcript(MisSized(EPS, SIZES), 3, rng, samples=40000)
    assert ok.claimed_epsilon == pytest.approx(EPS) and bad.claimed_epsilon == pytest.approx(EPS)
    assert ok.verdict == "consistent", ok.to_dict()
    assert bad.verdict == "violation", bad.to_dict()
    assert ok.epsilon_lower_bound <= EPS < bad.epsilon_lower_bound


@pytest.mark.parametrize(
    "dataset, error, match",
    [
        (np.full((3, SIZES[-1]), 1.5), RewardError,
         r"rewards must lie in \[0, 1\]; got values \[1.5"),
        (np.full((3, SIZES[-1]), -0.2), RewardError, r"got values \[-0.2"),
        (np.zeros((3, SIZES[-1] - 1)), ShapeError, rf"rewards must have shape \(K, {SIZES[-1]}\)"),
    ],
)
def test_bad_reward_sequences_are_refused(dataset, error, match):
    with pytest.raises(error, match=match):
        EpochMeansTranscript(EPS, SIZES)(dataset, np.random.default_rng(0), 10)


@pytest.mark.parametrize("sizes", [(), (3, 3), (0, 4), "abc"])
def test_bad_sizes_are_refused(sizes):
    with pytest.raises(ValueError, match="sizes must be"):
        EpochMeansTranscript(EPS, sizes)
