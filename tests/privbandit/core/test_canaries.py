"""Canary protocols for one-run audits of the registry's private algorithms."""
import numpy as np
import pytest

from privbandit.audits import Claim
from privbandit.audits.one_run import one_run_audit
from privbandit.canaries import anonymous_protocol, epoch_means_protocol, registry_cases

BUILDERS = [epoch_means_protocol, anonymous_protocol]


@pytest.mark.parametrize("build", BUILDERS)
def test_the_score_reads_the_planted_reward(build):
    protocol = build(50.0)  # little noise: the view shows each planted reward
    included = np.random.default_rng(0).random(protocol.canaries) < 0.5
    view = protocol.pipeline(protocol.build(included), np.random.default_rng(1))
    scores = protocol.score(view)
    assert np.mean(np.abs(scores - included)) < 0.1


@pytest.mark.parametrize("build", BUILDERS)
def test_the_correct_algorithm_is_never_flagged(build):
    protocol = build(1.0)
    for seed in range(4):
        r = one_run_audit(protocol, Claim(1.0), rng=seed, confidence=0.95, guesses=(20, 20))
        assert r.verdict == "consistent"


@pytest.mark.parametrize("build", BUILDERS)
def test_too_little_noise_is_caught_in_one_run(build):
    r = one_run_audit(build(8.0), Claim(1.0), rng=0, confidence=0.95, guesses=(20, 20))
    assert r.violation and r.correct >= 38, r


def test_every_private_registry_algorithm_is_listed():
    cases = registry_cases()
    names = {c.algorithm for c in cases}
    assert {"cdp-mab", "ddp-mab", "hdp-mab", "anonymous-base-laplace", "cdp-fclub-dc"} <= names
    for c in cases:
        assert (c.protocol is None) == bool(c.note)
        if c.protocol is not None:
            assert c.claim.epsilon == 1.0 and c.protocol.canaries >= 400
