"""privbandit's audit on what leaves a guarded party: every noisy prefix its streams release,
on neighbouring record streams.  The honest party keeps its claim; a party that draws 0.15
of its noise (the claim unchanged) is caught.  (At 0.3 the tree's control passes this
tester: the accounting of symmetric releases is loose -- each off-diagonal entry is released
once but counted twice in the Frobenius sensitivity -- so its real loss sits below the claim.)"""
from __future__ import annotations

import numpy as np
import pytest

from privbandit.audits import (
    CONSISTENT,
    VIOLATION,
    Claim,
    GaussianDPTester,
    LinearDiscriminant,
    NeighbouringPair,
    run_audit,
)
from privbandit.audits.broken import NoiseScaleSampler
from privbandit.mechanisms.samplers import FAST
from privbandit.private import PartyStreams, ReleasePlan, ReleaseSchedule

EPSILON, DELTA, ROUNDS, BATCH = 2.0, 1e-5, 8, 2


def party(sampler, mechanism: str) -> callable:
    """(dataset, rng, n) -> (n, F): the releases of a one-user party, n independent runs.

    dataset: (ROUNDS, 2) rows z = [x, y], one record a round; the transcript is every
    released prefix (2 x 2 each), in order."""
    schedule = ReleaseSchedule("fixed", ROUNDS, BATCH)

    def run(dataset, rng, n):
        out = np.empty((n, schedule.releases * 4))
        for i in range(n):
            plan = ReleasePlan(EPSILON, DELTA, ROUNDS, mechanism, "fixed", BATCH, sampler)
            streams = PartyStreams([np.array([0])], 1, plan, record_bound=2.0)
            k = 0
            for t, z in enumerate(dataset):
                streams.observe(0, np.outer(z, z))
                if schedule.is_release(t):
                    streams.release(rng)
                    out[i, 4 * k: 4 * k + 4] = streams.released[0].ravel()
                    k += 1
        return out

    return run


@pytest.mark.parametrize("mechanism", ["tree", "mf"])
def test_a_party_keeps_its_claim_and_too_little_noise_is_caught(mechanism):
    base = np.zeros((ROUNDS, 2))
    other = base.copy()
    other[3] = [1.0, 1.0]  # one record replaced: ||z z^T||_F = 2 = the record bound
    pair = NeighbouringPair(base, other, "record-level: one round of one user")
    claim, tester = Claim(EPSILON, DELTA), GaussianDPTester(LinearDiscriminant())
    honest = run_audit(party(FAST, mechanism), pair, tester, claim, samples=3_000, rng=1)
    broken = run_audit(party(NoiseScaleSampler(FAST, 0.15), mechanism), pair, tester, claim,
                       samples=3_000, rng=1)
    assert honest.verdict == CONSISTENT, honest.to_dict()
    assert broken.verdict == VIOLATION, broken.to_dict()
