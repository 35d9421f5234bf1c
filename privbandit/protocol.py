"""`Protocol`: what the run loop plays against an environment, one step at a time.

The run loop (`privbandit.runtime`) calls, for t = 0 until the horizon,

    played = protocol.advance(env, t, regret[t:stop], reward[t:stop], rng)

and the protocol plays rounds t, t + 1, ... -- at least one, at most
`stop - t` -- writing each round's pseudo-regret and reward into the views
and returning how many it played.  A per-round policy
(`privbandit.policies.Policy`) is a protocol whose steps are single rounds
(its `advance` plays them one after the other); a protocol that simulates
many rounds at once (an epoch of the federated MAB, a batch of anonymous
elicitations) returns the per-round arrays of a whole step.  `stop` is where
an observer of the loop (a checkpoint, a ledger trace) wants control back; a
step may end there or before.

Reporting hooks, with defaults: `params()`, `comm` (the federation's
`CommLog`) and `comm_details()` (extra entries of the result's `comm`),
`ledgers()` (ledgers of the protected units), `cluster_labels()` (detected
clusters, for `Environment.detection_error`), `checkpoint_every(horizon)`
(how often the loop measures it), `privacy()` (the stated guarantee, a
`privbandit.accounting.PrivacyStatement`) and `timings()`.  The loop reads
them once the last step is played and builds the one `RunResult`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from privbandit.accounting.statement import PrivacyStatement

from .comm import CommLog

NON_PRIVATE = PrivacyStatement.none("non-private algorithm: it reads raw rewards")


class Protocol(ABC):
    """Base class of everything the run loop plays (see the module docstring)."""

    name: ClassVar[str] = "protocol"

    def start(self, env: Any, horizon: int, rng: np.random.Generator) -> None:
        """Called once before the first step with the run's generator (check the
        environment, size the state); per-round policies need nothing."""
        return None

    @abstractmethod
    def advance(self, env: Any, t: int, regret: np.ndarray, reward: np.ndarray,
                rng: np.random.Generator) -> int:
        """Play rounds t, t + 1, ... (at most len(regret)); fill regret[i], reward[i]
        for each round played; return how many were played (>= 1)."""

    def params(self) -> dict[str, Any]:
        """The algorithm's parameters, JSON-serialisable (recorded in the run result)."""
        return {}

    @property
    def comm(self) -> CommLog | None:
        """The communication log of a federated algorithm; None for centralised ones."""
        return None

    def comm_details(self) -> dict[str, Any]:
        """Entries added to the result's `comm` besides the log's summary."""
        return {}

    def ledgers(self) -> list[Any]:
        """Ledgers of the protected units (`Ledger`s; empty for non-private algorithms)."""
        return []

    def cluster_labels(self) -> np.ndarray | None:
        """Detected cluster label of each user, (n_users,), or None if it does not cluster."""
        return None

    def checkpoint_every(self, horizon: int) -> int | None:
        """Rounds between measurements of the detection error (None: after every step)."""
        return max(1, horizon // 100)

    @property
    def between_steps(self) -> bool:
        """True when the rounds played so far end a natural step of the protocol."""
        return True

    def privacy(self) -> PrivacyStatement:
        """The stated guarantee."""
        return NON_PRIVATE

    def timings(self) -> dict[str, float]:
        """Seconds spent in the protocol's phases, added to the result's timings."""
        return {}


class StepProtocol(Protocol):
    """A protocol whose natural steps (an epoch, a batch of elicitations) span rounds.

    Subclasses implement `step(env, t, rng) -> runs`: play the next natural
    step from round t (the rounds played so far) and describe its rounds as
    runs `(regret, reward, reps)` -- L rounds with those per-round values,
    repeated `reps` times -- at least one round, never past the horizon.
    `advance` writes them into the loop's arrays (a repeated run with one
    broadcast, no temporary copies), as many rounds at a time as the loop
    asks for; an observer that looks in the middle of a step sees the
    protocol as the step left it.  The detection error is measured after
    every step (`checkpoint_every` is None).  Subclasses that override
    `start` call this one.
    """

    _runs: list = []
    _done = 0  # rounds of the first run already handed out

    def start(self, env: Any, horizon: int, rng: np.random.Generator) -> None:
        self._runs, self._done = [], 0

    @abstractmethod
    def step(self, env: Any, t: int, rng: np.random.Generator
             ) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """Play the next step from round t: its rounds as runs (regret, reward, reps)."""

    def advance(self, env: Any, t: int, regret: np.ndarray, reward: np.ndarray,
                rng: np.random.Generator) -> int:
        if not self._runs:
            self._runs, self._done = [run for run in self.step(env, t, rng) if run[2] > 0], 0
        filled, room = 0, regret.shape[0]
        while self._runs and filled < room:
            values, gains, reps = self._runs[0]
            period = values.shape[0]
            total = period * reps
            take = min(total - self._done, room - filled)
            out, won = regret[filled:filled + take], reward[filled:filled + take]
            if self._done == 0 and take == total:  # the whole run at once
                out.reshape(reps, period)[:] = values
                won.reshape(reps, period)[:] = gains
            else:
                rows = (self._done + np.arange(take)) % period
                out[:], won[:] = values[rows], gains[rows]
            filled += take
            self._done += take
            if self._done == total:
                self._runs.pop(0)
                self._done = 0
        return filled

    def checkpoint_every(self, horizon: int) -> int | None:
        return None

    @property
    def between_steps(self) -> bool:
        return not self._runs
