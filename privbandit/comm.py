"""The federation's vocabulary, shared by every family, and its communication log.

Parties.  Every role that holds data or combines it is a *party*, named by a
string: `party("agent", 3)` is "agent 3"; SERVER is "server"; a family may
name its roles (the vertical protocol's "active", "passive-1", "generator").

Messages, in one vocabulary of directions (a typo fails loudly):

- UPLOAD   a party sends what it computed to a server or an aggregating party
           (local statistics, noisy means, masked batches);
- DOWNLOAD a server or aggregating party sends to a party (models, the active
           set, requests, mask blocks); a broadcast counts once per recipient;
- PEER     a party sends to another party directly (gossip protocols);
- RELEASE  an aggregator publishes a mechanism's output (C-anonymous group sums).

Every privacy-relevant value leaves a party only through a mechanism
(`privbandit.mechanisms`), charged to the party's ledger before the release;
the message that carries it is then logged here.  The log counts messages
and bytes by direction (and by sending party when the sender is given) and
the rounds in which anything was sent; the run loop reads it as an observer
(`runtime.observers.Communication`) into `RunResult.comm` and `comm_rounds`.

Every message's metadata -- direction, sender, receiver, round, count, bytes --
is what other parties see whatever the payload's noise, so it is part of the
view of every privacy statement.  The log publishes it (its
`mechanisms.Publication`, "communication" on channel "messages"): inside an
end-to-end audit each `record` puts that metadata on the tape as a public
value, and the forced replay reports any difference between neighbours as an
unbounded loss, with the first differing message.  Outside an audit this
costs one context-variable read per record.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.validation import check_count
from privbandit.mechanisms.publication import Publication
from privbandit.mechanisms.tape import active

from .errors import config_error

UPLOAD, DOWNLOAD, PEER, RELEASE = "upload", "download", "peer", "release"
DIRECTIONS: tuple[str, ...] = (UPLOAD, DOWNLOAD, PEER, RELEASE)
SERVER = "server"


def party(role: str, index: int) -> str:
    """The name of party `index` of a role, e.g. party("agent", 3) == "agent 3"."""
    return f"{role} {check_count('index', index, minimum=0)}"


def payload_bytes(*arrays: Any) -> int:
    """Bytes of a message made of arrays and scalars (their in-memory size)."""
    return int(sum(np.asarray(a).nbytes for a in arrays))


class CommLog:
    """Counts of messages and bytes per direction (and sender), and the rounds that communicated.

    `record(direction, messages=1, nbytes=0, round=None, sender=None, receiver=None)`:
    `round` is the time step (or epoch) of the exchange; a round is counted
    once however many messages it carries.  Records without a round count
    messages and bytes but no round.  Inside an audit every record is also a
    public value on the tape (the module docstring).
    """

    def __init__(self) -> None:
        self._messages = dict.fromkeys(DIRECTIONS, 0)
        self._bytes = dict.fromkeys(DIRECTIONS, 0)
        self._by_party: dict[str, list[int]] = {}
        self._rounds: set[int] = set()
        self.publication = Publication("communication")  # the metadata, public
        self._names: list[str] = []  # party names by code, for the public events

    def record(
        self, direction: str, messages: int = 1, nbytes: int = 0, round: int | None = None,
        sender: str | None = None, receiver: str | None = None,
    ) -> None:
        """Add `messages` messages totalling `nbytes` bytes in `direction` at `round`, from
        `sender` to `receiver` (party names, None when not told)."""
        if direction not in self._messages:
            raise config_error("direction", direction, f"one of {DIRECTIONS}")
        if not (type(messages) is int and messages >= 0):  # fast path: a plain count
            messages = check_count("messages", messages, minimum=0)
        if not (type(nbytes) is int and nbytes >= 0):
            nbytes = check_count("nbytes", nbytes, minimum=0)
        for name, who in (("sender", sender), ("receiver", receiver)):
            if who is not None and (not isinstance(who, str) or not who):
                raise config_error(name, who, "None or a party's name")
        if round is not None and messages > 0:
            if not (type(round) is int and round >= 0):
                round = check_count("round", round, minimum=0)
            self._rounds.add(round)
        self._messages[direction] += messages
        self._bytes[direction] += nbytes
        if sender is not None:
            counts = self._by_party.setdefault(sender, [0, 0])
            counts[0] += messages
            counts[1] += nbytes
        if active() is not None:
            self.publication.value("messages", np.array(
                [DIRECTIONS.index(direction), messages, nbytes, -1 if round is None else round,
                 self._code(sender), self._code(receiver)], dtype=float), self._describe)

    # -- the metadata as public values (inside an audit) -----------------------------------

    def _code(self, name: str | None) -> int:
        if name is None:
            return -1
        if name not in self._names:
            self._names.append(name)
        return self._names.index(name)

    def _describe(self, event: np.ndarray) -> str:
        """One public communication event in words."""
        codes = [int(v) for v in event]
        if codes[0] == len(DIRECTIONS):
            return f"rounds marked as communicating {codes[1:]}"
        d, m, b, r, s, t = codes
        return (f"{DIRECTIONS[d]} of {m} message(s), {b} bytes"
                + ("" if s < 0 else f", from {self._names[s]}")
                + ("" if t < 0 else f" to {self._names[t]}")
                + ("" if r < 0 else f", at round {r}"))

    def mark_rounds(self, rounds: Any) -> None:
        """Count `rounds` (integers >= 0) as rounds that communicated, for messages
        recorded in bulk (with round=None) by a caller that tallies them per round."""
        r = np.asarray(rounds, dtype=np.int64).ravel()
        if r.size and r.min() < 0:
            raise config_error("rounds", int(r.min()), "round indices >= 0")
        self._rounds.update(r.tolist())
        if active() is not None:
            self.publication.value("messages", np.concatenate(([len(DIRECTIONS)], r)).astype(
                float), self._describe)

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
            raise config_error("direction", direction, f"one of {DIRECTIONS}")
        return self._messages[direction], self._bytes[direction]

    def by_party(self, sender: str) -> tuple[int, int]:
        """(messages, bytes) recorded with `sender` as the sending party."""
        messages, nbytes = self._by_party.get(sender, (0, 0))
        return messages, nbytes

    def summary(self) -> dict[str, Any]:
        """A JSON-serialisable summary: rounds, totals, per-direction and per-sender counts."""
        return {
            "rounds": self.rounds,
            "messages": self.messages,
            "bytes": self.nbytes,
            "messages_by_direction": dict(self._messages),
            "bytes_by_direction": dict(self._bytes),
            "messages_by_party": {k: v[0] for k, v in self._by_party.items()},
            "bytes_by_party": {k: v[1] for k, v in self._by_party.items()},
        }

    def __repr__(self) -> str:
        return f"CommLog(rounds={self.rounds}, messages={self.messages}, bytes={self.nbytes})"
