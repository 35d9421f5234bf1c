"""End-to-end audits of interactive algorithms on neighbouring environments (white-box).

An interactive algorithm chooses its own actions, so the records it releases
are not input data: a changed reward can change later actions and hence
later records.  The only relation that protects anyone is over what the
environment holds (one user-round's reward differs), with the view being
everything the algorithm releases over the whole run, actions adapting.

`forced_replay(run)` measures one such pair exactly where the releases are
Gaussian or Laplace: `run(0)` plays the first environment and every release
is recorded (`privbandit.mechanisms.tape`); `run(1)` plays the neighbour
with every release forced to the first run's output, and the pre-noise
inputs of the two runs are compared release by release through each
mechanism.  Along the forced path the loss is what adaptive composition
counts: an algorithm whose released records come only from released
information differs in the flipped record only; one whose raw data drives
released records differs in many.  A replay whose releases differ in number,
place, round or releasing unit (a data-dependent schedule) is reported as
unbounded, and so is a value released unnoised as public
(`mechanisms.tape.PublicValue`: message metadata, clusters, exact Gram
matrices) that differs between the neighbours.

What the audit can see, and what it cannot.  The loss is read from the tape,
so a release that bypasses it would pass unseen.  Every run is therefore
checked against its ledgers (`accounting.ledger.recording_charges`): every
event a ledger paid for must be carried by a release on the tape, and every
noised release on the tape must have been paid for; and against its own
declarations, per mechanism instance and per release: every record declared
to enter a mechanism's release by some round (`mechanisms.Publication.fed`)
must reach a release of that very mechanism on the tape by then, so units
whose releases skip the tape are found even when others of the same event stay
on it (`check_recorded`); a mismatch is an unbounded finding.  A flip that
moves no release tests nothing: `PairFinding.touched` says whether it moved
one, and a report in which no flip did is `inconclusive`, never
`consistent`.  A flip of a round whose record was never released
(`PairFinding.evidence` False) is never counted as evidence: it must move
nothing ("no release touched"), and one that moves a release contradicts the
run's own declarations, a violation whatever its loss.

`record(first)` plays the first environment once; `audit_replays` forces any
number of neighbours against that one recording (the application may read
the recording first, e.g. to choose flips that reach releases:
`Tape.released_feeds`).  `audit_pairs` records afresh for every pair.

The audit layer never learns what a bandit is: `run(which)`, `first()` and
the neighbours are plain callables that the application builds
(`privbandit.auditing.end_to_end`).
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from privbandit.accounting.events import (
    ComposedEvent,
    FactorizationEvent,
    NotDifferentiallyPrivate,
    PrivacyEvent,
    RepeatedEvent,
    TreeAggregationEvent,
)
from privbandit.accounting.ledger import recording_charges
from privbandit.accounting.validation import check_delta, check_positive
from privbandit.mechanisms.tape import (
    PairLoss,
    PublicValue,
    ReplayDivergedError,
    Tape,
    pair_loss,
    recording,
)

# relative tolerance on the claim: the measured loss omits the events' float slacks
_TOLERANCE = 1e-9


class UnrecordedReleaseError(RuntimeError):
    """What a run's ledgers paid for and the releases on its tape disagree."""


def _leaves(event: PrivacyEvent) -> set[PrivacyEvent]:
    """The single-release events an event is made of (compositions, repetitions, trees'
    nodes and a factorization's Gaussian release opened up)."""
    if isinstance(event, ComposedEvent):
        return set().union(*(_leaves(e) for e in event.events))
    if isinstance(event, RepeatedEvent):
        return _leaves(event.event)
    if isinstance(event, TreeAggregationEvent):
        return _leaves(event.node_event)
    if isinstance(event, FactorizationEvent):
        return {event.release_event}
    return {event}


def check_recorded(tape: Tape, charges: Iterable[tuple[str, PrivacyEvent, int]]) -> None:
    """Raise UnrecordedReleaseError unless the tape holds what the ledgers paid for and what
    the run declared.

    charges: (unit, event, count) of every charge of the run
    (`recording_charges`).  Both directions: every DP event charged is carried
    by a mechanism that released on the tape (else its releases bypassed the
    tape, or its noise was drawn outside any mechanism), and every noised
    release on the tape has an event some ledger was charged with (else it was
    released unpaid).  A run that charged no ledger at all (a toy, a mechanism
    audited alone) is not held to the second: the audit cannot know what it
    should have paid (`privbandit.auditing` requires charges of every private
    entry).  Public values carry no event and are not checked here.  Then
    `check_declared`: each declared record reached its own mechanism's release.
    """
    taped: dict[PrivacyEvent, Any] = {}
    for i, e in enumerate(tape.entries):
        if isinstance(e.mechanism, PublicValue):
            continue
        event = getattr(e.mechanism, "event", None)
        if event is None or isinstance(event, NotDifferentiallyPrivate):
            continue
        for leaf in _leaves(event):
            taped.setdefault(leaf, (i, e.mechanism))
    paid: dict[PrivacyEvent, str] = {}
    for unit, event, _ in charges:
        if not isinstance(event, NotDifferentiallyPrivate):
            for leaf in _leaves(event):
                paid.setdefault(leaf, unit)
    for leaf, unit in paid.items():
        if leaf not in taped:
            built = sum(1 for m in tape.mechanisms
                        if leaf in _leaves(getattr(m, "event", NotDifferentiallyPrivate("-"))))
            how = (f"{built} mechanism(s) carrying it were built and none released on the "
                   "tape: their releases bypassed it" if built else
                   "no mechanism carrying it was built: its noise was drawn outside the "
                   "mechanisms")
            raise UnrecordedReleaseError(
                f"ledger {unit!r} was charged for {leaf!r} but no release on the tape carries "
                f"that event ({len(tape.entries)} releases recorded; {how})")
    for leaf, (i, mechanism) in taped.items():
        if paid and leaf not in paid:
            raise UnrecordedReleaseError(
                f"release {i} by {type(mechanism).__name__} carries {leaf!r}, which no ledger "
                "was charged with: it was released unpaid")
    check_declared(tape)


def check_declared(tape: Tape) -> None:
    """Raise UnrecordedReleaseError unless every record the run declared
    (`Tape.declared`, with a round `until` promised) reached a release of the very
    mechanism it was declared to, on the tape, after the declaration and by that round:
    completeness per mechanism instance and per release, so one stream on the tape does
    not cover others of the same event that bypass it."""
    released: dict[int, tuple[list[int], list[int | None]]] = {}
    for i, e in enumerate(tape.entries):
        positions, rounds = released.setdefault(id(e.mechanism), ([], []))
        positions.append(i)
        rounds.append(e.round)
    for feed in tape.declared:
        if feed.until is None:
            continue
        positions, rounds = released.get(id(feed.mechanism), ([], []))
        k = bisect.bisect_left(positions, feed.position)
        if k < len(positions) and (rounds[k] is None or rounds[k] <= feed.until):
            continue
        facts = ", ".join(f"{key} {value}" for key, value in feed.facts.items())
        late = ("" if k == len(positions) else
                f" (its next release on the tape left at round {rounds[k]})")
        raise UnrecordedReleaseError(
            f"{feed.party or 'a party'} declared the record of round {feed.round}"
            f"{f' ({facts})' if facts else ''} to enter a release of its "
            f"{type(feed.mechanism).__name__} by round {feed.until}, and no release of that "
            f"mechanism reached the tape by then{late}: its release bypassed the tape")


@dataclass(frozen=True)
class Recorded:
    """One recorded run: its tape, the charges its ledgers took, and what it returned."""

    tape: Tape
    charges: tuple[tuple[str, PrivacyEvent, int], ...]
    result: Any

    @property
    def unrecorded(self) -> str:
        """Why the tape does not hold what the ledgers paid for ("" when it does)."""
        try:
            check_recorded(self.tape, self.charges)
        except UnrecordedReleaseError as err:
            return str(err)
        return ""


def record(first: Callable[[], Any]) -> Recorded:
    """Play `first()` once with every release and every ledger charge recorded.  (A caller
    that knows the rounds marks them on the active tape: `tape.active().mark(t)`.)"""
    tape = Tape()
    with recording_charges() as charges, recording(tape):
        result = first()
    return Recorded(tape, tuple(charges), result)


def replay(recorded: Recorded, neighbour: Callable[[], Any]) -> PairLoss:
    """The pair loss of `recorded` and `neighbour()` replayed with every release forced to
    the recording's.

    Raises ReplayDivergedError when the releases do not line up, and
    UnrecordedReleaseError when either run's tape misses what its ledgers paid for.
    """
    check_recorded(recorded.tape, recorded.charges)
    second = Tape(forced=recorded.tape)
    with recording_charges() as charges, recording(second):
        neighbour()
    check_recorded(second, charges)
    return pair_loss(recorded.tape, second)


def forced_replay(run: Callable[[int], Any]) -> PairLoss:
    """The pair loss of `run(0)` (recorded) and `run(1)` (replayed, releases forced).

    Raises ReplayDivergedError when the replay's releases do not line up, and
    UnrecordedReleaseError when a tape misses what its run's ledgers paid for.
    """
    return replay(record(lambda: run(0)), lambda: run(1))


@dataclass(frozen=True)
class PairFinding:
    """One neighbouring pair: its name, epsilon at the audit's delta, and the evidence.

    releases: releases compared (public values included), public: how many were
    public values, differing: how many differed; diverged: why the pair is
    unbounded ("" when it is not); evidence: False for a flip of a round whose
    record was never released (it must move nothing and never counts as evidence).
    """

    pair: str
    epsilon: float
    mu: float
    pure_epsilon: float
    releases: int
    differing: int
    diverged: str = ""
    public: int = 0
    evidence: bool = True

    @property
    def touched(self) -> bool:
        """Whether the flip moved anything the audit sees (a release, or the schedule)."""
        return self.differing > 0 or bool(self.diverged)

    @property
    def stray(self) -> bool:
        """A never-released round whose flip moved a release: the run's declarations lie."""
        return not self.evidence and self.touched

    def describe(self) -> str:
        if self.diverged:
            return f"{self.pair}: unbounded ({self.diverged})"
        if not self.evidence and not self.touched:
            return f"{self.pair}: no release touched (never released; not evidence)"
        noised = self.releases - self.public
        public = f", {self.public} public values equal" if self.public else ""
        stray = ("; its round was never released, yet the flip moved a release"
                 if self.stray else "")
        return (f"{self.pair}: epsilon {self.epsilon:.4g} (mu {self.mu:.4g}, pure "
                f"{self.pure_epsilon:.4g}); {self.differing} of {noised} releases "
                f"differ{public}{stray}")


@dataclass(frozen=True)
class EnvironmentAuditReport:
    """Every pair tried against a claim; `claimed_epsilon` None: report only (no claim
    under the interactive relation, e.g. a paper preset's realised-sequence guarantee).
    `scope`: what the application says about the flips it chose (one line, or "")."""

    claimed_epsilon: float | None
    delta: float
    findings: tuple[PairFinding, ...] = field(default_factory=tuple)
    scope: str = ""

    @property
    def worst(self) -> PairFinding | None:
        return max(self.findings, key=lambda f: f.epsilon, default=None)

    @property
    def touched(self) -> int:
        """How many pairs that count as evidence moved a release (or diverged)."""
        return sum(f.touched for f in self.findings if f.evidence)

    @property
    def verdict(self) -> str:
        """"violation" (a pair beyond the claim, unbounded, or a never-released round whose
        flip moved a release), "inconclusive" (no pair that counts as evidence moved a
        release: nothing was tested), "consistent" (every pair within the claim, at least
        one moved a release), or "measured" (no claim)."""
        if self.claimed_epsilon is None:
            return "measured"
        worst = self.worst
        if worst is not None and not worst.epsilon <= self.claimed_epsilon * (1 + _TOLERANCE):
            return "violation"
        if any(f.stray for f in self.findings):
            return "violation"
        return "consistent" if self.touched else "inconclusive"

    def describe(self) -> str:
        claim = ("no interactive claim" if self.claimed_epsilon is None
                 else f"claim epsilon {self.claimed_epsilon:g}")
        worst = self.worst
        evidence = sum(f.evidence for f in self.findings)
        head = (f"{self.verdict}: {claim} at delta {self.delta:g}; worst pair "
                f"{'none' if worst is None else f'{worst.epsilon:.4g}'}; {self.touched} of "
                f"{evidence} flips touched a release"
                + (f" ({len(self.findings) - evidence} more of never-released rounds, not "
                   "evidence)" if evidence < len(self.findings) else ""))
        lines = [head] + ([f"  {self.scope}"] if self.scope else [])
        return "\n".join([*lines, *(f"  {f.describe()}" for f in self.findings)])


def _finding(name: str, measure: Callable[[], PairLoss], delta: float,
             evidence: bool = True) -> PairFinding:
    try:
        loss = measure()
    except (ReplayDivergedError, UnrecordedReleaseError) as err:
        return PairFinding(name, math.inf, math.inf, math.inf, 0, 0, str(err),
                           evidence=evidence)
    return PairFinding(name, loss.epsilon(delta), loss.mu, loss.pure_epsilon, loss.releases,
                       loss.differing, loss.public_difference, loss.public, evidence)


def _checked(delta: float, claimed_epsilon: float | None) -> tuple[float, float | None]:
    delta = check_delta("delta", delta)
    if claimed_epsilon is not None:
        claimed_epsilon = check_positive("claimed_epsilon", claimed_epsilon)
    return delta, claimed_epsilon


def audit_pairs(pairs: Mapping[str, Callable[[int], Any]], delta: float,
                claimed_epsilon: float | None = None, scope: str = "") -> EnvironmentAuditReport:
    """Forced-replay every named pair; the report holds each pair's epsilon at `delta`."""
    delta, claimed_epsilon = _checked(delta, claimed_epsilon)
    findings = tuple(_finding(name, lambda run=run: forced_replay(run), delta)
                     for name, run in pairs.items())
    return EnvironmentAuditReport(claimed_epsilon, delta, findings, scope)


def audit_replays(recorded: Recorded, neighbours: Mapping[str, Callable[[], Any]],
                  delta: float, claimed_epsilon: float | None = None, scope: str = "",
                  never_released: Collection[str] = ()) -> EnvironmentAuditReport:
    """Force every named neighbour against one recording (`record`); `never_released`:
    the names of neighbours whose flipped round's record was never released (not
    evidence: each must move nothing)."""
    delta, claimed_epsilon = _checked(delta, claimed_epsilon)
    findings = tuple(_finding(name, lambda run=run: replay(recorded, run), delta,
                              name not in never_released)
                     for name, run in neighbours.items())
    return EnvironmentAuditReport(claimed_epsilon, delta, findings, scope)
