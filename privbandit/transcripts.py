"""Whole transcripts of a registry entry's runs, for the black-box audit.

    sample_entry(name, config, seed, at, agent=0) -> sample(which, rng) -> Transcript
    audit_entry_transcripts(name, config, seed, at, n, *, rng, confidence=0.95,
                            gaussian=False) -> AuditReport

`sample(which, rng)` plays entry `name` once on its world (which = 0) or on
the neighbour whose reward of round `at` moved to the other end of its range
(which = 1, `privbandit.endtoend.FlippedReward`) and returns what other
parties receive: every release of the run, recorded through
`privbandit.mechanisms.tape`, stamped with the round last observed when it
left and with its channel (the releasing mechanism, numbered in order of
first release).  `privbandit.audits.audit_transcripts` audits the two
samples black-box.

Worlds fixed, coins fresh: the world (hidden parameters) comes from `seed`'s
"world" stream and the rounds (arrivals, contexts, reward draws) from its
"rounds" stream in every sample; the protocol's "policy" stream (its coins
and its mechanisms' noise) is a fresh one drawn from `rng`
(`privbandit.endtoend.setup(..., coins=...)`).  Entries whose worlds draw
rewards per epoch from the protocol's own generator (`draw_sums`: the
federated MAB) are refused, since their rewards cannot be held fixed while
the coins vary.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.statement import Relation
from privbandit.audits.report import AuditReport
from privbandit.audits.transcript import Release, Transcript, audit_transcripts
from privbandit.mechanisms.tape import Tape, recording

from .endtoend import FlippedReward, claimed, setup
from .errors import config_error


def sample_entry(name: str, config: dict[str, Any], seed: Any, at: int, agent: int = 0):
    """`sample(which, rng)`: one transcript of entry `name` (see the module docstring)."""
    world, _ = setup(name, config, seed)  # fails early: an unknown entry, a bad config
    reason = fixed_rewards_refusal(world)
    if reason:
        raise config_error("algorithm", name, "an entry whose world draws its rounds from the "
                           f"round stream ({reason}, which a transcript sample cannot hold "
                           "fixed while the coins vary)")

    def sample(which: int, rng: np.random.Generator) -> Transcript:
        world, play = setup(name, config, seed, coins=int(rng.integers(2**63)))
        if which:
            FlippedReward(world, at, agent)
        return _transcript(play, world)

    return sample


def fixed_rewards_refusal(world: Any) -> str:
    """Why `world`'s rewards would change with the algorithm's coins ('' when they do not):
    epoch rewards drawn with the protocol's generator (the federated MAB), or rewards drawn
    by an aggregator when a sum is released (the anonymous bandits)."""
    if hasattr(world, "draw_sums"):
        return "its epoch rewards come from the protocol's generator"
    if getattr(world, "aggregator", None) is not None:
        return "its rewards are drawn by the aggregator with the protocol's generator"
    return ""


# Black-box sizes: small worlds, a flip early in the run
BLACK_BOX_HORIZON = 32
BLACK_BOX_FLIP = 5


def audit_registry_transcripts(n: int, *, epsilon: float = 1.0, seed: int = 3,
                               rng: Any = 0, confidence: float = 0.95
                               ) -> dict[str, AuditReport | str]:
    """Every private entry audited black-box (`n` transcripts per world, T =
    BLACK_BOX_HORIZON, the reward of round BLACK_BOX_FLIP flipped), or why it is not."""
    from .endtoend import AUDIT_SIZES, small_config

    out: dict[str, AuditReport | str] = {}
    streams = np.random.default_rng(rng).spawn(len(AUDIT_SIZES))
    for name, g in zip(AUDIT_SIZES, streams, strict=True):
        config = small_config(name, epsilon)
        reason = fixed_rewards_refusal(setup(name, config, seed)[0])
        if reason:
            out[name] = f"not audited black-box: {reason}"
            continue
        config["horizon"] = BLACK_BOX_HORIZON
        out[name] = audit_entry_transcripts(name, config, seed, BLACK_BOX_FLIP, n, rng=g,
                                            confidence=confidence)
    return out


def _transcript(play: Any, world: Any) -> Transcript:
    """Every release of `play(world)`, with the round last observed and its channel."""
    tape, marks = Tape(), []  # marks: (round, releases made before it was observed)
    observe = world.observe

    def observed(t: int):
        marks.append((t, len(tape.entries)))
        return observe(t)

    world.observe = observed
    with recording(tape):
        play(world)
    channels: dict[int, int] = {}
    rounds = np.zeros(len(tape.entries), dtype=int)
    for t, before in marks:
        rounds[before:] = t
    return Transcript(tuple(
        Release(int(r), e.output, channels.setdefault(id(e.mechanism), len(channels)))
        for r, e in zip(rounds, tape.entries, strict=True)))


def audit_entry_transcripts(name: str, config: dict[str, Any], seed: Any, at: int, n: int,
                            *, rng: Any, confidence: float = 0.95,
                            gaussian: bool = False) -> AuditReport:
    """Black-box audit of entry `name` flipped at round `at`, `n` transcripts per world,
    against its claim under the interactive relation (an entry without one is refused)."""
    eps, delta, statement = claimed(name, config, seed)
    if eps is None:
        raise config_error("algorithm", name, "an entry whose statement holds under the "
                           f"interactive relation (its relation is {statement.relation.value})")
    return audit_transcripts(
        sample_entry(name, config, seed, at), n, (eps, delta), rng=rng, confidence=confidence,
        gaussian=gaussian, name=name, relation=Relation.INTERACTIVE.value,
        pair=f"reward of round {at} flipped")
