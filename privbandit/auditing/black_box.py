"""Whole transcripts of a registry entry's runs, for the black-box audit.

    sample_entry(target, flip) -> sample(which, rng) -> Transcript
    audit_entry_transcripts(name, config, seed, at, n, *, rng, confidence=0.95,
                            gaussian=False, power=()) -> AuditReport
    power_line(report) -> str

`sample(which, rng)` plays the entry once on its world (which = 0) or on the
neighbour the world makes for `flip` (which = 1, `Environment.neighbour`) and
returns what other parties receive: every release of the run, recorded through
`privbandit.mechanisms.tape`, stamped with the round being played when it left
and with its channel (the releasing mechanism or public value, numbered in
order of first release).  `privbandit.audits.audit_transcripts` audits the two
samples black-box.

Worlds fixed, coins fresh: the world (hidden parameters) comes from `seed`'s
"world" stream and the rounds (arrivals, contexts, reward draws) from its
"rounds" stream in every sample; the protocol's "policy" stream (its coins
and its mechanisms' noise) is a fresh one drawn from `rng`
(`AuditTarget.play(..., coins=...)`).  Worlds that draw many rounds' rewards
at once (the federated MAB's epochs, the anonymous aggregator's released
rounds) draw them from the round stream too (`ContextFreeRounds.round_stream`),
so their rewards stay fixed as well.  `audit_registry_transcripts` runs it on
every private entry, at the size and flip its profile declares
(`registry.AuditProfile.black_box`) on its first audit world.

What it can see.  At these sizes a black-box audit often has little power,
so a bound of 0 is no evidence of privacy by itself: the registry audit plants
known leaks of 2, 8 and 32 times the claim in the same transcripts
(`privbandit.audits.audit_transcripts(power=...)`) and reports the bound found
on each beside its own, with the largest bound its size can give
(`power_line`; docs/audits.md has the figures at several sizes).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from privbandit.accounting.statement import Relation
from privbandit.audits.report import AuditReport
from privbandit.audits.transcript import Release, Transcript, audit_transcripts
from privbandit.mechanisms.tape import Tape, recording

from ..envs.neighbours import Flip
from .end_to_end import private_entries
from .target import AuditTarget, claim_of, measured, profile_of

# the known leaks planted by the registry audit, as multiples of the claim
POWER_MULTIPLES = (2.0, 8.0, 32.0)


def sample_entry(target: AuditTarget, flip: Flip, seed: Any = 3):
    """`sample(which, rng)`: one transcript of `target`'s run on `seed`'s world (which = 0)
    or its neighbour for `flip` (which = 1), coins fresh from `rng` (module docstring)."""
    def sample(which: int, rng: np.random.Generator) -> Transcript:
        coins = int(rng.integers(2**63))
        tape = Tape()
        with recording(tape):
            target.play(seed, flip=flip if which else None, coins=coins)
        channels: dict[int, int] = {}
        return Transcript(tuple(
            Release(e.round or 0, e.output, channels.setdefault(id(e.mechanism), len(channels)))
            for e in tape.entries))

    return sample


def audit_registry_transcripts(n: int, *, epsilon: float = 1.0, seed: int = 3,
                               rng: Any = 0, confidence: float = 0.95) -> dict[str, AuditReport]:
    """Every private entry audited black-box (`audit_entries_transcripts`)."""
    return audit_entries_transcripts(dict(private_entries()), n, epsilon=epsilon, seed=seed,
                                     rng=rng, confidence=confidence)


def audit_entries_transcripts(entries: dict[str, Any], n: int, *, epsilon: float = 1.0,
                              seed: int = 3, rng: Any = 0, confidence: float = 0.95
                              ) -> dict[str, AuditReport]:
    """The entries (name -> registry entry) audited black-box: `n` transcripts per world on
    each one's first audit world at its profile's black-box horizon and flip (the guarded
    entries share half their rounds there, so the flipped round is released in about
    half the samples), with its power on planted leaks of POWER_MULTIPLES times the claim
    (`power_line`).  An entry without a profile raises a ConfigError naming it."""
    out: dict[str, AuditReport] = {}
    streams = np.random.default_rng(rng).spawn(len(entries))
    for (name, entry), g in zip(entries.items(), streams, strict=True):
        horizon, flip = profile_of(entry).black_box
        target = AuditTarget.of(name, epsilon=epsilon).with_horizon(horizon)
        out[name] = audit_target_transcripts(
            target, seed, flip, n, rng=g, confidence=confidence,
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


def audit_entry_transcripts(name: str, config: dict[str, Any] | None, seed: Any,
                            flip: Flip | int, n: int, *, rng: Any, confidence: float = 0.95,
                            gaussian: bool = False, power: Any = (),
                            epsilon: float = 1.0) -> AuditReport:
    """Black-box audit of entry `name` (on `config`, or its first audit world at `epsilon`)
    against the neighbour of `flip` (a `Flip`, or a round), `n` transcripts per world,
    against its claim under the interactive relation (an entry without one is measured);
    `power`: epsilons of known leaks planted in the same transcripts (`power_line`)."""
    flip = flip if isinstance(flip, Flip) else Flip(int(flip))
    return audit_target_transcripts(AuditTarget.of(name, config, epsilon=epsilon), seed, flip,
                                    n, rng=rng, confidence=confidence, gaussian=gaussian,
                                    power=power)


def audit_target_transcripts(target: AuditTarget, seed: Any, flip: Flip, n: int, *, rng: Any,
                             confidence: float = 0.95, gaussian: bool = False,
                             power: Any = ()) -> AuditReport:
    """`audit_entry_transcripts` of a prepared target.  An entry whose statement holds
    under another relation (a paper's realised-sequence guarantee) is measured: the bound
    is reported against its stated epsilon as a reference, verdict "measured"."""
    eps, delta, statement = claim_of(target.play(seed))
    report = audit_transcripts(
        sample_entry(target, flip, seed), n, (eps or statement.epsilon, delta), rng=rng,
        confidence=confidence, gaussian=gaussian, power=power, name=target.name,
        relation=Relation.INTERACTIVE.value,
        pair=f"{flip.label(True)}: one user-round's feedback flipped")
    if eps is not None:
        return report
    return replace(report, details={**report.details, "measured": measured(statement)})

