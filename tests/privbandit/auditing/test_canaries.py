"""Canary protocols for one-run audits of the registry's private algorithms."""
import numpy as np
import pytest

from privbandit import privacy
from privbandit.anonymous.audit import anonymous_protocol
from privbandit.auditing.canaries import registry_cases, stream_protocol
from privbandit.auditing.end_to_end import private_entries
from privbandit.auditing.target import AuditTarget
from privbandit.audits import Claim
from privbandit.audits.broken import NoiseScaleSampler
from privbandit.audits.one_run import one_run_audit
from privbandit.errors import ConfigError
from privbandit.fedmab.audit import epoch_means_protocol
from privbandit.mechanisms.samplers import GRID
from privbandit.registry import CanaryRounds

# the entries whose profile plants canary rounds in their own run, their statement
# interactive (the paper's path is measured, not judged: its own test below)
PAPER = "cdp-fclub-dc-paper"
STREAMS = sorted(n for n, e in private_entries() if n != PAPER
                 and e.audit is not None and isinstance(e.audit.canaries, CanaryRounds))

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
    assert {"cdp-mab", "ddp-mab", "hdp-mab", "anonymous-base-laplace", *STREAMS} <= names
    assert len(STREAMS) >= 4
    for c in cases:
        assert (c.protocol is None) == bool(c.note)
        assert c.protocol is not None or c.algorithm.startswith("toy")  # no profile: toys
        if c.protocol is not None:
            assert c.claim.epsilon == 1.0 and c.protocol.canaries >= 64
            assert c.method == ("fdp" if c.algorithm in (*STREAMS, PAPER) else "snj")
            assert bool(c.measured) == (c.algorithm == PAPER)
    streams = [c for c in cases if c.algorithm in STREAMS]
    assert len(streams) == len(STREAMS) and all(c.claim.delta == 1e-5 for c in streams)


@pytest.mark.parametrize("name", STREAMS)
def test_a_stream_entry_at_its_claim_is_not_flagged(name):
    protocol, claim = stream_protocol(name)
    assert claim.epsilon == 1.0 and "user-round" in claim.source
    r = one_run_audit(protocol, claim, rng=0, confidence=0.95, method="fdp")
    assert r.verdict == "consistent" and r.guesses == 40, r


@pytest.mark.parametrize("name", STREAMS)
def test_a_stream_entry_with_a_twentieth_of_its_noise_is_caught(name, monkeypatch):
    """The planted flaw: every release of the run draws 1/20 of its calibrated noise (the
    sampler is swapped in this test only; the run still states its claim)."""
    monkeypatch.setitem(privacy.SAMPLERS, "grid", NoiseScaleSampler(GRID, 0.05))
    protocol, claim = stream_protocol(name)
    assert claim.epsilon == 1.0
    r = one_run_audit(protocol, claim, rng=0, confidence=0.95, method="fdp")
    assert r.violation and r.correct >= 30, r


@pytest.mark.parametrize("name,inside,outside", [("cdp-fclub-dc", 1.0, 0.0),
                                                 ("cdp-fedc3ucb-h", 0, "list_len")])
def test_planted_feedback_follows_the_coin(name, inside, outside):
    env = AuditTarget.of(name).world(0).planted([0, 1], [True, False])
    action = np.arange(env.list_len) if hasattr(env, "list_len") else 0
    env.reset(np.random.default_rng(0))
    got = []
    for t in range(2):
        env.observe(t)
        out = env.act(t, action)
        got.append((out.feedback, out.reward))
    outside = env.list_len if outside == "list_len" else outside
    assert got == [(inside, 1.0), (outside, 0.0)]


def test_stream_protocols_refuse_what_they_cannot_audit():
    with pytest.raises(ConfigError, match="name.*canary rounds"):
        stream_protocol("cdp-mab")
    with pytest.raises(ConfigError, match="canaries"):
        stream_protocol("cdp-fclub-dc", horizon=64, canaries=40)


def test_the_paper_path_is_audited_in_one_run_and_measured():
    from privbandit.auditing.canaries import stream_case

    case = stream_case(PAPER)
    assert case.protocol is not None and "cluster-level" in case.measured
    with pytest.raises(ConfigError, match="interactive relation"):
        stream_protocol(PAPER)
