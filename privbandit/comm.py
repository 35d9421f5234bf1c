"""A communication log: rounds with communication, messages and bytes by direction.

Federated algorithms record every message they exchange; the run result
carries `CommLog.summary()`.  Directions are a fixed vocabulary (typos fail
loudly): "upload" (agent -> server), "download" (server -> agent),
"broadcast" (server -> all agents, counted once per recipient by the caller)
and "p2p" (agent -> agent); a log may declare more at construction.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.validation import check_count

from .errors import config_error

DIRECTIONS: tuple[str, ...] = ("upload", "download", "broadcast", "p2p")


def payload_bytes(*arrays: Any) -> int:
    """Bytes of a message made of arrays and scalars (their in-memory size)."""
    return int(sum(np.asarray(a).nbytes for a in arrays))


class CommLog:
    """Counts of messages and bytes per direction, and the set of rounds that communicated.

    `record(direction, messages=1, nbytes=0, round=None)`: `round` is the time
    step (or epoch) of the exchange; a round is counted once however many
    messages it carries.  Records without a round count messages and bytes
    but no round.
    """

    def __init__(self, directions: tuple[str, ...] = DIRECTIONS) -> None:
        if not directions or not all(isinstance(d, str) and d for d in directions):
            raise config_error("directions", directions, "a non-empty tuple of non-empty strings")
        self._directions = tuple(directions)
        self._messages = dict.fromkeys(self._directions, 0)
        self._bytes = dict.fromkeys(self._directions, 0)
        self._rounds: set[int] = set()

    def record(
        self, direction: str, messages: int = 1, nbytes: int = 0, round: int | None = None
    ) -> None:
        """Add `messages` messages totalling `nbytes` bytes in `direction` at `round`."""
        if direction not in self._messages:
            raise config_error("direction", direction, f"one of {self._directions}")
        messages = check_count("messages", messages, minimum=0)
        nbytes = check_count("nbytes", nbytes, minimum=0)
        self._messages[direction] += messages
        self._bytes[direction] += nbytes
        if round is not None and messages > 0:
            self._rounds.add(check_count("round", round, minimum=0))

    @property
    def rounds(self) -> int:
        """Number of distinct rounds in which at least one message was recorded."""
        return len(self._rounds)

    def round_indices(self) -> np.ndarray:
        """The sorted rounds in which something was recorded, (R,) int64."""
        return np.array(sorted(self._rounds), dtype=np.int64)

    @property
    def messages(self) -> int:
        return sum(self._messages.values())

    @property
    def nbytes(self) -> int:
        return sum(self._bytes.values())

    def by_direction(self, direction: str) -> tuple[int, int]:
        """(messages, bytes) recorded in one direction."""
        if direction not in self._messages:
            raise config_error("direction", direction, f"one of {self._directions}")
        return self._messages[direction], self._bytes[direction]

    def summary(self) -> dict[str, Any]:
        """A JSON-serialisable summary: rounds, totals, and per-direction counts."""
        return {
            "rounds": self.rounds,
            "messages": self.messages,
            "bytes": self.nbytes,
            "messages_by_direction": dict(self._messages),
            "bytes_by_direction": dict(self._bytes),
        }

    def __repr__(self) -> str:
        return f"CommLog(rounds={self.rounds}, messages={self.messages}, bytes={self.nbytes})"
