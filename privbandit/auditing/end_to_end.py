"""End-to-end audits of private registry entries on neighbouring environments (white box).

The interactive relation (`Relation.INTERACTIVE`): two environments that hold
the same world, arrivals, contexts and random streams and differ in ONE
user-round's feedback; the world makes that neighbour itself
(`Environment.neighbour(flip)`, `envs.neighbours`).  `audit_entry` records an
entry's run on its world once (`privbandit.audits.record`) and replays
neighbours against it, every release forced to the recorded output
(`privbandit.audits.audit_replays`): everything on the tape is compared --
noised releases through their mechanisms, public values (partitions, models,
communication metadata, public Gram matrices) exactly -- and the run is
checked against its ledgers and its own declarations (`audits.check_recorded`).

Flips.  Unless the entry's profile fixes them (an epoch world's epochs, an
anonymous world's draws), they are chosen from the recorded run: every record
that enters a release is declared where it enters (`mechanisms.Publication.fed`),
stamped with the round being played.  The audit flips the first, the middle
and the last round whose record was released; the first and the last of a
merged unit (one that the partition published before its record, channel
"clusters", puts with units of other parties); and never-released rounds: a
local round (after the first release, its record never released) and the
last round when it follows the last release.  A run that declares nothing (an
entry that has not told the audit what it releases) is flipped early, mid-run
and late.  A never-released flip is never
counted as evidence: it must move nothing and reads "no release touched"; one
that moves a release contradicts the run's declarations (a violation).  The
report counts the flips of released rounds that moved a release; none is
`inconclusive`.

`audit_registry` runs every private entry on every audit world of its profile
(`registry.AuditProfile.worlds`); an entry without a profile is an error, never
skipped.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.audits.environment import (
    EnvironmentAuditReport,
    PairFinding,
    audit_replays,
    record,
)
from privbandit.mechanisms.publication import PARTITION
from privbandit.mechanisms.tape import Entry, Feed, PublicValue, Tape, recording

from ..clustering import by_first_appearance
from ..envs.neighbours import ROUND, Flip
from ..registry import AlgorithmEntry, algorithms
from ..runtime import Setup
from .target import AuditTarget, claim_of, profile_of

RELEASED, MERGED = "released", "released, merged"
LOCAL, AFTER_LAST = "never released (local)", "never released (after the last release)"
UNDECLARED = "undeclared"  # the run declares nothing of its records
FIXED = ""  # a flip the profile fixes (an epoch, a draw): what it reaches is the world's


@dataclass(frozen=True)
class PlannedFlip:
    """One neighbour the audit tries: the `flip`, and what the recorded run declared of its
    round (`kind`: RELEASED, MERGED, LOCAL, AFTER_LAST, UNDECLARED, or FIXED)."""

    flip: Flip
    kind: str = FIXED

    @property
    def evidence(self) -> bool:
        """Whether the flip counts as evidence (its record was released, or it is fixed)."""
        return self.kind not in (LOCAL, AFTER_LAST)

    def label(self, agents: bool = False) -> str:
        return self.flip.label(agents) + (f" ({self.kind})" if self.kind else "")


@dataclass(frozen=True)
class Declared:
    """What a recorded run declared: the rounds whose record reached a release, those of a
    merged unit among them."""

    released: tuple[int, ...]
    merged: tuple[int, ...]

    @classmethod
    def of(cls, tape: Tape) -> Declared:
        feeds = [f for f in tape.released_feeds() if f.round is not None]
        merged = _merged_feeds(tape, feeds)
        return cls(tuple(sorted({f.round for f in feeds})),
                   tuple(sorted({f.round for f, m in zip(feeds, merged, strict=True) if m})))

    def kind(self, t: int) -> str:
        """What the run declared of round t."""
        if t in self.merged:
            return MERGED
        if t in self.released:
            return RELEASED
        return LOCAL if self.released and t < self.released[-1] else AFTER_LAST


def _merged_feeds(tape: Tape, feeds: Sequence[Feed]) -> list[bool]:
    """Whether each feed's unit was merged: the last partition published before it puts the
    unit with a unit of another party (parties as the declarations name them)."""
    party: dict[int, Any] = {}
    for f in tape.declared:
        if "unit" in f.facts and "party" in f.facts:
            party[int(f.facts["unit"])] = f.facts["party"]
    published = [(i, e.value) for i, e in enumerate(tape.entries)
                 if isinstance(e.mechanism, PublicValue) and e.mechanism.name == PARTITION]
    positions = [i for i, _ in published]
    out = []
    for f in feeds:
        k = int(np.searchsorted(positions, f.position, side="right")) - 1
        unit = f.facts.get("unit")
        if k < 0 or unit is None or unit not in party:
            out.append(False)
            continue
        labels = published[k][1]
        mates = np.flatnonzero(labels == labels[int(unit)])
        out.append(len({party.get(int(u)) for u in mates} - {None}) > 1)
    return out


def choose_flips(tape: Tape, horizon: int) -> tuple[PlannedFlip, ...]:
    """The flips tried on a recorded run (module docstring); a run that declared nothing
    (any round may feed a release) is flipped early, mid-run and late."""
    if not tape.declared:
        rounds = dict.fromkeys(min(t, horizon - 1) for t in (5, horizon // 2, horizon - 2))
        return tuple(PlannedFlip(Flip(t), UNDECLARED) for t in rounds)
    declared = Declared.of(tape)
    released, merged = declared.released, declared.merged
    picks = [*released[:1], *released[len(released) // 2:][:1], *released[-1:],
             *merged[:1], *merged[-1:]]
    if released:
        local = next((t for t in range(released[0] + 1, released[-1])
                      if t not in released), None)
        picks += [] if local is None else [local]
    if horizon - 1 not in released:
        picks.append(horizon - 1)
    return tuple(PlannedFlip(Flip(t), declared.kind(t)) for t in sorted(dict.fromkeys(picks)))


def planned(target: AuditTarget, tape: Tape, flips: Sequence[Any] | None = None,
            agents: Sequence[int] = (0,)) -> tuple[PlannedFlip, ...]:
    """The flips of an audit: `flips` (`Flip`s, or indices of the kind the profile's fixed
    flips have -- rounds by default -- each for each agent of `agents`), else the profile's
    fixed ones, else those chosen from the run's tape."""
    declared = Declared.of(tape)
    fixed = None if target.entry.audit is None else target.entry.audit.flips
    if flips is not None:  # rounds count the kind the profile flips (epochs, draws)
        kind = fixed[0].kind if fixed else ROUND
        out = []
        for f in flips:
            for flip in ([f] if isinstance(f, Flip) else [Flip(int(f), a, kind)
                                                           for a in agents]):
                out.append(PlannedFlip(flip, declared.kind(flip.at)
                                       if flip.kind == ROUND and tape.declared else FIXED))
        return tuple(out)
    if fixed is not None:
        return tuple(PlannedFlip(f) for f in fixed)
    return choose_flips(tape, target.horizon)


def audit_entry(name: str, config: dict[str, Any] | None = None, seed: Any = 3,
                flips: Sequence[Any] | None = None, agents: Sequence[int] = (0,), *,
                epsilon: float = 1.0, world: int = 0,
                variant: Callable[[Setup], Setup] | None = None) -> EnvironmentAuditReport:
    """Forced-replay audit of entry `name` on `config` (a full run config: horizon,
    environment and parameters), or on its profile's audit world number `world` at
    `epsilon` when config is None: its run is recorded once, then replayed on the
    neighbours of `flips` (rounds or `Flip`s; None: the profile's, else chosen from the
    recorded run).  `variant` replaces what the entry builds (a control)."""
    return audit_target(AuditTarget.of(name, config, epsilon=epsilon, world=world,
                                       variant=variant), seed, flips, agents)


def audit_target(target: AuditTarget, seed: Any = 3, flips: Sequence[Any] | None = None,
                 agents: Sequence[int] = (0,)) -> EnvironmentAuditReport:
    """`audit_entry` of a prepared target."""
    recorded = record(lambda: target.play(seed))
    eps, delta, statement = claim_of(recorded.result)
    unrecorded = recorded.unrecorded or _unpaid(recorded, statement)
    if unrecorded:  # the audit cannot see, or account for, every release: fail closed
        return EnvironmentAuditReport(eps, delta, (PairFinding(
            "recorded run", math.inf, math.inf, math.inf, len(recorded.tape.entries), 0,
            f"unrecorded: {unrecorded}"),))
    chosen = planned(target, recorded.tape, flips, agents)
    many = len({p.flip.agent for p in chosen}) > 1
    neighbours = {p.label(many): (lambda f=p.flip: target.play(seed, flip=f)) for p in chosen}
    never = [p.label(many) for p in chosen if not p.evidence]
    return audit_replays(recorded, neighbours, delta, eps, scope(recorded.tape, chosen), never)


def released_rounds(name: str, config: dict[str, Any] | None, seed: Any, *,
                    epsilon: float = 1.0) -> tuple[int, ...]:
    """The rounds whose record entry `name`'s run on `config` and `seed` declared released
    (one recorded run)."""
    target = AuditTarget.of(name, config, epsilon=epsilon)
    return Declared.of(record(lambda: target.play(seed)).tape).released


def differing_releases(name: str, config: dict[str, Any] | None, seed: Any, at: int,
                       agent: int = 0, *, epsilon: float = 1.0) -> list[tuple[Entry, Entry]]:
    """The releases whose pre-noise inputs differ between entry `name`'s run and the
    neighbour flipped at round `at` (agent `agent`), replayed with every release forced:
    (recorded entry, replayed entry) pairs in tape order.  What they hold says which parts
    of a released statistic the flip reaches (docs/cascade.md reads a cascade's Gram
    block this way)."""
    target = AuditTarget.of(name, config, epsilon=epsilon)
    first = record(lambda: target.play(seed)).tape
    second = Tape(forced=first)
    with recording(second):
        target.play(seed, flip=Flip(at, agent))
    return [(a, b) for a, b in zip(first.entries, second.entries, strict=True)
            if not np.array_equal(np.asarray(a.value), np.asarray(b.value))]


def _unpaid(recorded: Any, statement: Any) -> str:
    """Why a DP-claiming run's noised releases went unpaid ("" when they did not): a private
    entry's run must charge its ledgers (the audit layer cannot require it of a toy)."""
    noised = [e for e in recorded.tape.entries if not isinstance(e.mechanism, PublicValue)]
    if statement.epsilon is None or recorded.charges or not noised:
        return ""
    return (f"the run states {statement.epsilon:g}-DP and made {len(noised)} noised releases "
            "but charged no ledger")


def scope(tape: Tape, flips: Sequence[PlannedFlip]) -> str:
    """One line: what the recorded run declared released, the partitions it published, and
    the kinds of flips tried ("" when it declared nothing)."""
    if not tape.declared:  # the labels say what each flip is
        return ""
    kinds: dict[str, int] = {}
    for p in flips:
        kinds[p.kind or "fixed"] = kinds.get(p.kind or "fixed", 0) + 1
    tried = ", ".join(f"{n} {k}" for k, n in kinds.items())
    declared = Declared.of(tape)
    partitions = _partition_changes(tape)
    return (f"records released from {len(declared.released)} rounds "
            f"({len(declared.merged)} of a merged unit); {partitions} changes of the "
            f"published partition; flips tried: {tried}")


def _partition_changes(tape: Tape) -> int:
    """How many published partitions differ from the one before (per publisher)."""
    last: dict[int, np.ndarray] = {}
    changes = 0
    for e in tape.entries:
        if isinstance(e.mechanism, PublicValue) and e.mechanism.name == PARTITION:
            before = last.get(id(e.mechanism))
            if before is not None and not np.array_equal(by_first_appearance(before),
                                                         by_first_appearance(e.value)):
                changes += 1
            last[id(e.mechanism)] = e.value
    return changes


def private_entries() -> Iterator[tuple[str, AlgorithmEntry]]:
    """Every private registry entry, by name."""
    return ((name, entry) for name, entry in algorithms().items() if entry.private)


def entry_audits(name: str, entry: AlgorithmEntry, epsilons: Sequence[float] = (1.0,),
                 seed: int = 3) -> dict[str, EnvironmentAuditReport]:
    """Entry `name` audited on every audit world of its profile at each epsilon, flips
    chosen from the run (or the profile's); keys "name", "name [label]" for a labelled
    world, " at epsilon e" appended when several epsilons are audited.  An entry without
    a profile raises a ConfigError naming it."""
    out: dict[str, EnvironmentAuditReport] = {}
    for w, world in enumerate(profile_of(entry).worlds):
        for eps in epsilons:
            key = name + (f" [{world.label}]" if world.label else "") + (
                f" at epsilon {eps:g}" if len(epsilons) > 1 else "")
            out[key] = audit_entry(name, seed=seed, epsilon=eps, world=w)
    return out


def audit_registry(epsilons: Sequence[float] = (1.0,), seed: int = 3
                   ) -> dict[str, EnvironmentAuditReport]:
    """`entry_audits` of every private entry."""
    out: dict[str, EnvironmentAuditReport] = {}
    for name, entry in private_entries():
        out.update(entry_audits(name, entry, epsilons, seed))
    return out
