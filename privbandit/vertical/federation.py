"""`VerticalFederation`: the roles of one VFUCB/VFTS deployment and the messages between them.

Setup (seed 003, Algorithm 1 step 2): every party makes an X25519 key pair;
the mask generator draws Q and sends each party its block, sealed for it.
Round t (steps 4-10), as `decide` then `commit`:

1. the active party sends each passive party a request (`wire`);
2. passive party j replies with Q^j x^j_t (K, d), serialized and, when
   `seal_traffic` is on, sealed for the active party;
3. the active party checks every reply, sums the parts into Q x_t and lets
   its policy choose an item (no state has changed so far);
4. the caller plays the item in the environment; `commit(pending, reward)`
   updates the policy and only then records the round's traffic.

Every message passes through `transport(sender, recipient, message) ->
message` (identity by default), so tests and audits can tamper with,
misroute or record the traffic.  A failed round raises and leaves the
policy, the round counter and the communication log as they were.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.mechanisms.masks import MASK_EVENT
from privbandit.mechanisms.sealing import PartyKeys

from ..comm import CommLog
from ..envs.vertical import FeatureSplit, VerticalRound
from ..errors import config_error
from ..policies.base import Policy
from .errors import ProtocolError
from .roles import ACTIVE, GENERATOR, ActiveParty, MaskGenerator, PassiveParty, party_name

# The three kinds of traffic, as communication-log directions.
DIRECTIONS = ("mask", "request", "reply")

Transport = Callable[[str, str, bytes], bytes]


def _deliver(sender: str, recipient: str, message: bytes) -> bytes:
    return message


@dataclass(frozen=True)
class PendingRound:
    """A decided but uncommitted round: masked contexts (K, d), the action, its traffic.

    traffic holds (direction, sender, bytes) for every message of the round;
    parts[j - 1] is passive party j's masked batch (K, d) as the active
    party received it (kept only when the federation records a transcript).
    """

    t: int
    user: int
    masked: np.ndarray
    action: int
    traffic: tuple
    parts: tuple = ()


class VerticalFederation:
    """One active party (features 0), M - 1 passive parties and a mask generator.

    widths: the parties' feature widths (a `FeatureSplit` or a sequence);
    policy: the active party's linear policy on masked contexts, of dimension
    d = sum(widths) (LinUCB for VFUCB, LinTS for VFTS); rng: draws the mask Q.

    Privacy guarantee
    -----------------
    Not differential privacy.  Threat model: semi-honest parties, and a mask
    generator that does not collude with the active party (seed 003, Section
    3.3).  Passive party j's features reach the active party only as
    Q^j x^j with Q Haar-random and unknown to it (Section 4.2, Theorem 4.2):
    coordinates are hidden up to a rotation, but every norm and inner
    product of the party's contexts is revealed exactly, and d_j known
    (plaintext, masked) pairs give Q^j away (`privbandit.audits.attacks.masks`).  The
    event is `privbandit.mechanisms.masks.MASK_EVENT` (`NotDifferentiallyPrivate`).
    Rewards never leave the active party.  Decisions are lossless: LinUCB on
    Q x equals LinUCB on x (Theorem 4.1); LinTS's sampled scores have the
    same law (Theorem A.1).
    """

    def __init__(
        self,
        widths: FeatureSplit | tuple | list,
        policy: Policy,
        *,
        rng: np.random.Generator,
        seal_traffic: bool = True,
        transport: Transport | None = None,
        record: bool = False,
    ) -> None:
        self.split = widths if isinstance(widths, FeatureSplit) else FeatureSplit(widths)
        if self.split.parties < 2:
            raise config_error("widths", self.split.widths, "at least two parties' widths")
        for name, flag in (("seal_traffic", seal_traffic), ("record", record)):
            if not isinstance(flag, bool):
                raise config_error(name, flag, "True or False")
        if not isinstance(rng, np.random.Generator):
            raise config_error("rng", rng, "a numpy.random.Generator")
        self.seal_traffic = seal_traffic
        self.record = record
        self._transport = _deliver if transport is None else transport
        d, widths = self.split.dim, self.split.widths
        self.generator = MaskGenerator()
        active_keys = PartyKeys.generate()
        self.passive = tuple(
            PassiveParty(j, w, d, active_public=active_keys.public if seal_traffic else None)
            for j, w in enumerate(widths[1:], start=1)
        )
        publics = {p.name: p.public for p in self.passive} if seal_traffic else None
        self.active = ActiveParty(
            widths[0], d, policy, publics, keys=active_keys, n_passive=len(self.passive)
        )
        self.comm = CommLog(DIRECTIONS)
        self.sent: dict[str, list[int]] = {
            name: [0, 0] for name in (GENERATOR, *(party_name(j) for j in range(len(widths))))
        }
        self.timings = {"setup": 0.0, "passive": 0.0, "active": 0.0}
        self.transcript: list[tuple] = []
        self._distribute(rng)

    @property
    def parties(self) -> tuple:
        """All data-holding parties, index j at position j."""
        return (self.active, *self.passive)

    @property
    def round(self) -> int:
        """The next round to play (= rounds committed so far)."""
        return self.active.round

    @property
    def policy(self) -> Policy:
        return self.active.policy

    def _distribute(self, rng: np.random.Generator) -> None:
        started = time.perf_counter()
        parties = self.parties
        sealed = self.generator.distribute(self.split.widths, [p.public for p in parties], rng)
        for party, message in zip(parties, sealed, strict=True):
            delivered = self._transport(GENERATOR, party.name, message)
            party.receive_mask(delivered, self.generator.public)
            self._count("mask", GENERATOR, len(message), None)
        self.timings["setup"] = time.perf_counter() - started

    def _count(self, direction: str, sender: str, nbytes: int, round: int | None) -> None:
        self.comm.record(direction, 1, nbytes, round)
        self.sent[sender][0] += 1
        self.sent[sender][1] += nbytes

    def decide(self, rnd: VerticalRound, rng: np.random.Generator) -> PendingRound:
        """Steps 1-3 of a round: collect, check and sum the masked batches; choose an item.

        rnd.parts[j] is party j's (K, d_j) block; `rng` is the policy's stream.
        Raises without changing the federation on any bad message.
        """
        t = self.active.round
        if rnd.t != t:
            raise ProtocolError(f"the federation plays round {t} next; got round {rnd.t}")
        if len(rnd.parts) != self.split.parties:
            raise ProtocolError(
                f"round {t} needs {self.split.parties} feature blocks; got {len(rnd.parts)}"
            )
        own = rnd.parts[0]
        n_items = np.shape(own)[0]
        traffic: list[tuple[str, str, int]] = []
        started = time.perf_counter()
        request = self.active.request(n_items)
        replies = []
        for party in self.passive:
            delivered = self._transport(ACTIVE, party.name, request)
            traffic.append(("request", ACTIVE, len(request)))
            reply = party.answer(delivered, t, rnd.parts[party.index])
            traffic.append(("reply", party.name, len(reply)))
            replies.append(self._transport(party.name, ACTIVE, reply))
        middle = time.perf_counter()
        masked, parts = self.active.combine(own, replies, keep_parts=self.record)
        action = self.active.choose(masked, rnd.user, rng)
        self.timings["passive"] += middle - started
        self.timings["active"] += time.perf_counter() - middle
        return PendingRound(t, rnd.user, masked, action, tuple(traffic), parts)

    def commit(self, pending: PendingRound, reward: float) -> None:
        """Step 4: learn from the reward of the decided action; record the round's traffic."""
        if not isinstance(pending, PendingRound) or pending.t != self.active.round:
            raise ProtocolError(
                f"commit needs the pending round {self.active.round} from decide; "
                f"got {getattr(pending, 't', pending)!r}"
            )
        started = time.perf_counter()
        self.active.learn(pending.masked, pending.user, pending.action, reward)
        self.timings["active"] += time.perf_counter() - started
        # one log record per direction per round (the log validates every record)
        totals = dict.fromkeys(DIRECTIONS[1:], (0, 0))
        for direction, sender, nbytes in pending.traffic:
            count, size = totals[direction]
            totals[direction] = (count + 1, size + nbytes)
            self.sent[sender][0] += 1
            self.sent[sender][1] += nbytes
        for direction, (count, size) in totals.items():
            self.comm.record(direction, count, size, pending.t)
        if self.record:
            self.transcript.append(pending.parts)

    def comm_summary(self) -> dict[str, Any]:
        """The communication log's summary plus messages and bytes sent by each role."""
        return {
            **self.comm.summary(),
            "messages_by_party": {k: v[0] for k, v in self.sent.items()},
            "bytes_by_party": {k: v[1] for k, v in self.sent.items()},
        }

    def privacy(self) -> PrivacyStatement:
        """The stated guarantee, for `RunResult.privacy`: masking, not DP."""
        return PrivacyStatement(
            Relation.MASKING, unit="each passive party's features (contexts)",
            summary="none in the DP sense: orthogonal masks (O3M, seed 003 Section 4.2) hide "
                    "coordinates from semi-honest parties, but reveal norms and inner products",
            details={
                "event": MASK_EVENT.reason,
                "threat_model": "semi-honest parties; the mask generator does not collude "
                                "with the active party",
                "reveals": "norms and inner products of each party's contexts; d_j known "
                           "plaintext/masked pairs recover that party's mask block",
                "sealed_traffic": self.seal_traffic,
            })
