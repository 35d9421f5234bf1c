"""Whole transcripts of a registry entry's runs, for the black-box audit.

    sample_entry(name, config, seed, at, agent=0) -> sample(which, rng) -> Transcript
    audit_entry_transcripts(name, config, seed, at, n, *, rng, confidence=0.95,
                            gaussian=False, power=()) -> AuditReport
    power_line(report) -> str

`sample(which, rng)` plays entry `name` once on its world (which = 0) or on
the neighbour whose reward of round `at` moved to the other end of its range
(which = 1, `privbandit.auditing.end_to_end.FlippedReward`) and returns what other
parties receive: every release of the run, recorded through
`privbandit.mechanisms.tape`, stamped with the round last observed when it
left and with its channel (the releasing mechanism, numbered in order of
first release).  `privbandit.audits.audit_transcripts` audits the two
samples black-box.

Worlds fixed, coins fresh: the world (hidden parameters) comes from `seed`'s
"world" stream and the rounds (arrivals, contexts, reward draws) from its
"rounds" stream in every sample; the protocol's "policy" stream (its coins
and its mechanisms' noise) is a fresh one drawn from `rng`
(`privbandit.auditing.end_to_end.setup(..., coins=...)`).  Worlds that draw many
rounds' rewards at once (the federated MAB's epochs, the anonymous
aggregator's released rounds) draw them from the round stream too
(`ContextFreeRounds.round_stream`), so their rewards stay fixed as well.
`audit_registry_transcripts` runs it on every private entry.

What it can see.  At these sizes a black-box audit often has little power,
so a bound of 0 is no evidence of privacy by itself: the registry audit plants
known leaks of 2, 8 and 32 times the claim in the same transcripts
(`privbandit.audits.audit_transcripts(power=...)`) and reports the bound found
on each beside its own, with the largest bound its size can give
(`power_line`; docs/audits.md has the figures at several sizes).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.statement import Relation
from privbandit.audits.report import AuditReport
from privbandit.audits.transcript import Release, Transcript, audit_transcripts
from privbandit.mechanisms.tape import Tape, recording

from ..errors import config_error
from .end_to_end import FlippedReward, claimed, marked, setup


def sample_entry(name: str, config: dict[str, Any], seed: Any, at: int, agent: int = 0):
    """`sample(which, rng)`: one transcript of entry `name` (see the module docstring)."""
    setup(name, config, seed)  # fails early: an unknown entry, a bad config

    def sample(which: int, rng: np.random.Generator) -> Transcript:
        world, play = setup(name, config, seed, coins=int(rng.integers(2**63)))
        if which:
            FlippedReward(world, at, agent)
        return _transcript(play, world)

    return sample


# Black-box sizes: small worlds (long enough for the first releases), a flip early in the
# run -- a round, an epoch of the federated MAB, a user's first drawn anonymous reward
BLACK_BOX_SIZES = {"cdp-fclub-dc": 32, "cdp-fclub-dc+": 32, "cdp-fedc3ucb-h": 32,
                   "cdp-fedc3ucb-h+": 32, "cdp-fedc3ucb-sets": 32, "cdp-mab": 3000,
                   "ddp-mab": 3000, "hdp-mab": 3000, "anonymous-base-laplace": 2000}
BLACK_BOX_FLIPS = {"cdp-mab": 0, "ddp-mab": 0, "hdp-mab": 0, "anonymous-base-laplace": 0}


# the known leaks planted by the registry audit, as multiples of the claim
POWER_MULTIPLES = (2.0, 8.0, 32.0)


def audit_registry_transcripts(n: int, *, epsilon: float = 1.0, seed: int = 3,
                               rng: Any = 0, confidence: float = 0.95) -> dict[str, AuditReport]:
    """Every private entry audited black-box: `n` transcripts per world on its registry
    audit world (`endtoend.AUDIT_WORLDS`: the guarded entries share half their rounds, so
    the flipped round is released in about half the samples) at its BLACK_BOX_SIZES
    horizon, the flip of BLACK_BOX_FLIPS (default round 5), with its power on planted
    leaks of POWER_MULTIPLES times the claim (`power_line`)."""
    from .end_to_end import audit_config

    out: dict[str, AuditReport] = {}
    streams = np.random.default_rng(rng).spawn(len(BLACK_BOX_SIZES))
    for (name, horizon), g in zip(BLACK_BOX_SIZES.items(), streams, strict=True):
        config = {**audit_config(name, epsilon), "horizon": horizon}
        out[name] = audit_entry_transcripts(
            name, config, seed, BLACK_BOX_FLIPS.get(name, 5), n, rng=g, confidence=confidence,
            power=tuple(m * epsilon for m in POWER_MULTIPLES))
    return out


def power_line(report: AuditReport) -> str:
    """What the audit can see at its size, in words: the bound found on each planted leak
    and the largest bound its size can give (empty without a power measurement)."""
    power = report.details.get("power")
    if not power:
        return ""
    found = ", ".join(f"{p['planted_epsilon']:g} -> {p['epsilon_lower_bound']:.2g}"
                      for p in power)
    seen = [p["planted_epsilon"] for p in power
            if p["epsilon_lower_bound"] > report.claimed_epsilon]
    reach = (f"leaks above the claim are seen from epsilon {min(seen):g}" if seen else
             f"no planted leak up to epsilon {power[-1]['planted_epsilon']:g} was seen above "
             "the claim")
    return (f"power at this size: planted leaks epsilon {found}; {reach}; the largest bound "
            f"{report.samples_per_side} transcripts per world can give is "
            f"{report.details['ceiling']:.2g}")


def _transcript(play: Any, world: Any) -> Transcript:
    """Every release of `play(world)` -- public values such as message metadata included --
    with the round last observed (0 before the first) and its channel."""
    tape = Tape()
    marked(world)
    with recording(tape):
        play(world)
    channels: dict[int, int] = {}
    return Transcript(tuple(
        Release(e.round or 0, e.output, channels.setdefault(id(e.mechanism), len(channels)))
        for e in tape.entries))


def audit_entry_transcripts(name: str, config: dict[str, Any], seed: Any, at: int, n: int,
                            *, rng: Any, confidence: float = 0.95,
                            gaussian: bool = False, power: Any = ()) -> AuditReport:
    """Black-box audit of entry `name` flipped at round `at`, `n` transcripts per world,
    against its claim under the interactive relation (an entry without one is refused);
    `power`: epsilons of known leaks planted in the same transcripts (`power_line`)."""
    eps, delta, statement = claimed(name, config, seed)
    if eps is None:
        raise config_error("algorithm", name, "an entry whose statement holds under the "
                           f"interactive relation (its relation is {statement.relation.value})")
    return audit_transcripts(
        sample_entry(name, config, seed, at), n, (eps, delta), rng=rng, confidence=confidence,
        gaussian=gaussian, power=power, name=name, relation=Relation.INTERACTIVE.value,
        pair=f"reward of round {at} flipped")
