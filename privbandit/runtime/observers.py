"""Observers of the run loop: checkpoints, the ledger trace, the communication log, progress.

The loop (`runtime.loop.play`) calls `start(run)` once, then after every
step `after_step(run, t)` (t rounds played so far), and at the end
`finish(run, fields)`, where an observer adds its fields of the `RunResult`.
Before each step it asks every observer for `next_stop(t)`: the round by
which it wants control back (None: any), so checkpoints land where they are
due even when a protocol could play further in one step.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..protocol import Protocol
from .progress import Progress


@dataclass(frozen=True)
class RunState:
    """What observers see: the protocol, the environment and the horizon."""

    protocol: Protocol
    env: Any
    horizon: int


class Observer:
    """Base class: every hook does nothing."""

    def start(self, run: RunState) -> None:
        """Called once, after the protocol started and before the first step."""

    def next_stop(self, t: int) -> int | None:
        """The round count (> t) by which the loop should return from the next step."""
        return None

    def after_step(self, run: RunState, t: int) -> None:
        """Called after each step; `t` rounds have been played."""

    def finish(self, run: RunState, fields: dict[str, Any]) -> None:
        """Add this observer's fields of the run result."""


class Schedule(Observer):
    """Observations at rounds every-1, 2 every-1, ... and the last round, or, when `every`
    is None, at the end of every natural step of the protocol (`Protocol.between_steps`)
    and at the last round; `observe(run, t)` records one (t: the round just played)."""

    def __init__(self, every: int | None) -> None:
        self.every = every
        self._due = 0

    def start(self, run: RunState) -> None:
        self._horizon = run.horizon
        self._due = self._after(-1)

    def _after(self, t: int) -> int:
        """The first scheduled round after round t (a fixed schedule)."""
        if self.every is None:
            return t + 1
        return min(((t + 1) // self.every + 1) * self.every - 1, self._horizon - 1)

    def next_stop(self, t: int) -> int | None:
        return None if self.every is None else self._due + 1

    def after_step(self, run: RunState, t: int) -> None:
        if self.every is None:
            if run.protocol.between_steps or t == self._horizon:
                self.observe(run, t - 1)
        elif t - 1 >= self._due:
            self.observe(run, t - 1)
            self._due = self._after(t - 1)

    def observe(self, run: RunState, t: int) -> None:
        """Record the observation of round t."""


class Checkpoints(Schedule):
    """The detection error `env.detection_error(protocol.cluster_labels())` and the mixing
    `env.detection_mixing(...)` on the schedule, whenever both sides have clusters: fields
    `cluster_error`, `cluster_mixing` and `cluster_error_rounds`.  Both are functions of
    the labels (the world is fixed over a run), so they are computed again only when the
    detected labels changed since the last checkpoint."""

    def start(self, run: RunState) -> None:
        super().start(run)
        self.rounds: list[int] = []
        self.errors: list[float] = []
        self.mixing: list[float] = []
        self._last: tuple[np.ndarray, float | None, float | None] | None = None

    def observe(self, run: RunState, t: int) -> None:
        labels = run.protocol.cluster_labels()
        if (self._last is not None and labels is not None
                and np.array_equal(labels, self._last[0])):
            error, mixing = self._last[1:]  # the clusters have not changed: nor has either
        else:
            error = run.env.detection_error(labels)
            mixing = None if error is None else run.env.detection_mixing(labels)
            if labels is not None:
                self._last = (labels.copy(), error, mixing)
        if error is not None:
            self.rounds.append(t)
            self.errors.append(error)
            self.mixing.append(math.nan if mixing is None else mixing)

    def finish(self, run: RunState, fields: dict[str, Any]) -> None:
        if self.errors:
            fields["cluster_error"] = np.array(self.errors)
            fields["cluster_error_rounds"] = np.array(self.rounds)
            if not all(math.isnan(m) for m in self.mixing):
                fields["cluster_mixing"] = np.array(self.mixing)


class LedgerTrace(Schedule):
    """Epsilon spent by each ledger over the rounds: field `ledger_trace`, for every
    ledger's unit the list of [round, epsilon spent] at which its spending changed
    (round 0 for charges made before the first round; a later change is dated at
    the first scheduled observation after it)."""

    def start(self, run: RunState) -> None:
        super().start(run)
        self.trace: dict[str, list[list[float]]] = {}
        self.observe(run, 0)

    def observe(self, run: RunState, t: int) -> None:
        for ledger in run.protocol.ledgers():
            spent = float(ledger.spent()[0])
            points = self.trace.setdefault(ledger.unit, [])
            if not points or points[-1][1] != spent:
                points.append([t, spent])

    def finish(self, run: RunState, fields: dict[str, Any]) -> None:
        self.observe(run, run.horizon - 1)
        fields["ledger_trace"] = self.trace


class Communication(Observer):
    """The federation's communication log: fields `comm` (its summary and the protocol's
    details) and `comm_rounds` (the rounds that communicated)."""

    def finish(self, run: RunState, fields: dict[str, Any]) -> None:
        log = run.protocol.comm
        details = run.protocol.comm_details()
        fields["comm"] = details if log is None else {**log.summary(), **details}
        fields["comm_rounds"] = None if log is None else log.round_indices()


class ShowProgress(Schedule):
    """A progress line over the rounds on stderr (`progress.Progress`), 100 updates."""

    def __init__(self, horizon: int) -> None:
        super().__init__(max(1, horizon // 100))

    def start(self, run: RunState) -> None:
        super().start(run)
        self.bar = Progress(run.horizon, "rounds")

    def observe(self, run: RunState, t: int) -> None:
        self.bar.update(t + 1 - self.bar.done)
