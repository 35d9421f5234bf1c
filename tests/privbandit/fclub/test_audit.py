"""End-to-end audit of CDP-FCLUB-DC's transcript: the algorithm is consistent with its
claim, and both positive controls (raw-statistics trigger, noiseless uploads) are rejected."""
import numpy as np
import pytest

from privbandit.errors import ConfigError, RewardError, ShapeError
from privbandit.fclub.algorithm import FederatedClub
from privbandit.fclub.audit import (
    AuditWorld,
    CanaryStatistic,
    TranscriptMechanism,
    audit_cdp,
    canary_pair,
)

from .controls import CONTROLS, NoNoiseClub

SAMPLES = 150
WORLD = {"horizon": 32}


@pytest.mark.parametrize(("algorithm", "verdict"), [
    (FederatedClub, "consistent"), (CONTROLS["raw-trigger"], "violation"),
    (CONTROLS["no-noise"], "violation")])
def test_audit_verdicts(algorithm, verdict):
    report = audit_cdp(AuditWorld(**WORLD), np.random.default_rng(4), samples=SAMPLES,
                       algorithm=algorithm)
    assert report.verdict == verdict
    assert report.claimed_epsilon == pytest.approx(1.0, rel=1e-6)
    assert report.claimed_delta == 0.1
    assert "cluster-level" in report.relation
    if verdict == "violation":
        assert report.epsilon_lower_bound > 2.0


@pytest.mark.parametrize("settings", [{"schedule": "fixed", "batch": 4},
                                      {"schedule": "doubling", "batch": 2},
                                      {"detection": "noise-aware"}])
def test_batched_schedules_and_noise_aware_detection_pass_the_audit(settings):
    report = audit_cdp(AuditWorld(**WORLD, **settings), np.random.default_rng(4),
                       samples=SAMPLES)
    assert report.verdict == "consistent"


def test_transcript_is_what_leaves_server_zero():
    world = AuditWorld(**WORLD)
    mech = TranscriptMechanism(world)
    pair = canary_pair(mech)
    out = mech(pair.dataset, np.random.default_rng(0), 3)
    assert out.shape == (3, mech.size)
    assert np.all(np.isfinite(out))
    # the noise differs between runs; the other users' chosen items are recorded
    assert not np.array_equal(out[0], out[1])
    actions = out[:, mech.layout["actions"]]
    others = np.setdiff1d(np.arange(world.horizon), mech.target_rounds)
    assert np.all(actions[:, others] >= 0) and np.all(actions[:, mech.target_rounds] == -1)
    # a phase upload is recorded for every phase start, for server 0's local clusters
    phase = out[:, mech.layout["phase"]].reshape(3, len(mech.phases), mech.slots, -1)
    assert np.all(phase[:, :, :, 0].sum(axis=2) >= 1)
    same = mech(pair.dataset, np.random.default_rng(0), 3)
    assert np.array_equal(out, same)  # the world is fixed; only the seeded noise varies


def test_canary_statistic_separates_a_deterministic_difference():
    mech = TranscriptMechanism(AuditWorld(**WORLD), NoNoiseClub)
    pair = canary_pair(mech)
    t = int(mech.target_rounds[int(np.flatnonzero(pair.dataset[:, -1])[0])])
    stat = CanaryStatistic(mech, t)
    a = mech(pair.dataset, np.random.default_rng(1), 6)
    b = mech(pair.neighbour, np.random.default_rng(2), 6)
    f = stat.fit(a[:3], b[:3])
    assert min(f(a[3:])) > max(f(b[3:])) or max(f(a[3:])) < min(f(b[3:]))


def test_dataset_and_algorithm_are_checked():
    with pytest.raises(ConfigError, match="algorithm must be FederatedClub or a subclass"):
        TranscriptMechanism(AuditWorld(**WORLD), object)
    mech = TranscriptMechanism(AuditWorld(**WORLD))
    rng = np.random.default_rng(0)
    good = np.zeros((mech.n_records, 3))
    with pytest.raises(ShapeError, match=r"dataset must have shape \(\d+, 3\)"):
        mech(good[:-1], rng, 1)
    bad = good.copy()
    bad[0, 0] = 2.0
    with pytest.raises(RewardError, match=r"\|\|x\|\| <= 1 and y in \[0, 1\]"):
        mech(bad, rng, 1)
