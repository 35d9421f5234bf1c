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
released records differs in many.  A replay whose releases differ in number
or place (a data-dependent schedule) is reported as unbounded, and so is a
value released unnoised as public (`mechanisms.tape.PublicValue`) that
differs between the neighbours.

The audit layer never learns what a bandit is: `run(which)` is a plain
callable that the application builds (`privbandit.endtoend`).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from privbandit.accounting.validation import check_delta, check_positive
from privbandit.mechanisms.tape import (
    PairLoss,
    ReplayDivergedError,
    Tape,
    pair_loss,
    recording,
)

# relative tolerance on the claim: the measured loss omits the events' float slacks
_TOLERANCE = 1e-9


def forced_replay(run: Callable[[int], Any]) -> PairLoss:
    """The pair loss of `run(0)` (recorded) and `run(1)` (replayed, releases forced).

    Raises ReplayDivergedError when the replay's releases do not line up.
    """
    first = Tape()
    with recording(first):
        run(0)
    second = Tape(forced=first)
    with recording(second):
        run(1)
    return pair_loss(first, second)


@dataclass(frozen=True)
class PairFinding:
    """One neighbouring pair: its name, epsilon at the audit's delta, and the evidence."""

    pair: str
    epsilon: float
    mu: float
    pure_epsilon: float
    releases: int
    differing: int
    diverged: str = ""

    def describe(self) -> str:
        if self.diverged:
            return f"{self.pair}: unbounded ({self.diverged})"
        return (f"{self.pair}: epsilon {self.epsilon:.4g} (mu {self.mu:.4g}, pure "
                f"{self.pure_epsilon:.4g}); {self.differing} of {self.releases} releases differ")


@dataclass(frozen=True)
class EnvironmentAuditReport:
    """Every pair tried against a claim; `claimed_epsilon` None: report only (no claim
    under the interactive relation, e.g. a paper preset's realised-sequence guarantee)."""

    claimed_epsilon: float | None
    delta: float
    findings: tuple[PairFinding, ...] = field(default_factory=tuple)

    @property
    def worst(self) -> PairFinding | None:
        return max(self.findings, key=lambda f: f.epsilon, default=None)

    @property
    def verdict(self) -> str:
        """"consistent" (every pair within the claim), "violation", or "measured" (no claim)."""
        if self.claimed_epsilon is None:
            return "measured"
        worst = self.worst
        if worst is None or worst.epsilon <= self.claimed_epsilon * (1 + _TOLERANCE):
            return "consistent"
        return "violation"

    def describe(self) -> str:
        claim = ("no interactive claim" if self.claimed_epsilon is None
                 else f"claim epsilon {self.claimed_epsilon:g}")
        worst = self.worst
        head = (f"{self.verdict}: {claim} at delta {self.delta:g}; worst pair "
                f"{'none' if worst is None else f'{worst.epsilon:.4g}'}")
        return "\n".join([head, *(f"  {f.describe()}" for f in self.findings)])


def audit_pairs(pairs: Mapping[str, Callable[[int], Any]], delta: float,
                claimed_epsilon: float | None = None) -> EnvironmentAuditReport:
    """Forced-replay every named pair; the report holds each pair's epsilon at `delta`."""
    delta = check_delta("delta", delta)
    if claimed_epsilon is not None:
        claimed_epsilon = check_positive("claimed_epsilon", claimed_epsilon)
    findings = []
    for name, run in pairs.items():
        try:
            loss = forced_replay(run)
        except ReplayDivergedError as err:
            findings.append(PairFinding(name, math.inf, math.inf, math.inf, 0, 0, str(err)))
            continue
        findings.append(PairFinding(name, loss.epsilon(delta), loss.mu, loss.pure_epsilon,
                                    loss.releases, loss.differing, loss.public_difference))
    return EnvironmentAuditReport(claimed_epsilon, delta, tuple(findings))
