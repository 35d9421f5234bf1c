"""privbandit's own audit on neighbouring streams: each mechanism keeps its claim, and a
twin whose noise is scaled down by 2 is caught."""
from __future__ import annotations

import math

import pytest

from privbandit.audits import (
    CONSISTENT,
    VIOLATION,
    Claim,
    GaussianDPTester,
    LinearDiscriminant,
    StreamAdapter,
    run_audit,
)
from privbandit.audits.broken import NoiseScaleSampler
from privbandit.audits.cases import CANARY, stream_pair
from privbandit.mechanisms import CONTINUAL_MECHANISMS, continual_release
from privbandit.mechanisms.samplers import FAST

DELTA, HORIZON, EPSILON = 1e-5, 16, 4.0


def batched(kind: str, sigma: float, sampler) -> StreamAdapter:
    """n runs as one mechanism over a batch axis: noise is independent per entry, and the
    batch-wide clip norm is wide enough never to clip a run whose increments have norm <= 1."""

    def build(batch: int):
        wide = math.sqrt(batch) * (1 + 1e-9)
        return continual_release(kind, (batch, 2), HORIZON, sigma=sigma, l2_sensitivity=wide,
                                  sampler=sampler)

    return StreamAdapter(build, kind)


@pytest.mark.parametrize("kind", sorted(CONTINUAL_MECHANISMS))
def test_audit_passes_the_mechanism_and_catches_half_the_noise(kind, rng, audit_samples):
    reference = continual_release(kind, (2,), HORIZON, epsilon=EPSILON, delta=DELTA,
                                  sampler=FAST)
    claim = Claim.from_event(reference.event, DELTA)
    assert claim.epsilon == pytest.approx(EPSILON, rel=1e-6)
    pair = stream_pair(HORIZON, CANARY)  # the canary enters every prefix
    tester = GaussianDPTester(LinearDiscriminant())
    honest = run_audit(batched(kind, reference.sigma, FAST), pair, tester, claim,
                       samples=audit_samples, rng=rng)
    broken = run_audit(batched(kind, reference.sigma, NoiseScaleSampler(FAST, 0.5)), pair,
                       tester, claim, samples=audit_samples, rng=rng)
    assert honest.verdict == CONSISTENT, honest.to_dict()
    assert broken.verdict == VIOLATION, broken.to_dict()
