"""`VerticalFederation`: the roles of one VFUCB/VFTS deployment and the messages between them.

Setup (seed 003, Algorithm 1 step 2): every party makes an X25519 key pair;
the mask generator draws Q and sends each party its block, sealed for it.
With `seal_traffic`, each passive party also opens one sealed session channel
to the active party (`privbandit.mechanisms.sealing.ChannelSender`: one key
agreement per party pair and session, AES-256-GCM with a unique nonce per
message, replays refused by the message counter).
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

The federation is itself a `Policy` on a `VerticalSplit`: the run loop's
`select(parts, user, t, rng)` is `decide`, and `update` is `commit`.  In the
federation's vocabulary (`privbandit.comm`) the generator's mask blocks and
the active party's requests are downloads, the passive parties' masked
batches uploads; every message is logged with its sender.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.ledger import Ledger
from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.mechanisms.masks import MASK_EVENT
from privbandit.mechanisms.sealing import PartyKeys

from ..comm import DOWNLOAD, UPLOAD, CommLog
from ..envs.base import Round
from ..envs.vertical import FeatureSplit
from ..errors import config_error
from ..policies.base import Policy
from .errors import ProtocolError
from .roles import ACTIVE, GENERATOR, ActiveParty, MaskGenerator, PassiveParty

Transport = Callable[[str, str, bytes], bytes]

# The paper's names for the federated versions of the core policies.
VERTICAL_NAMES = {"linucb": "vfucb", "lints": "vfts"}


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


class VerticalFederation(Policy):
    """One active party (features 0), M - 1 passive parties and a mask generator.

    widths: the parties' feature widths (a `FeatureSplit` or a sequence);
    policy: the active party's linear policy on masked contexts, of dimension
    d = sum(widths) (LinUCB for VFUCB, LinTS for VFTS); rng: draws the mask Q;
    ledger: if given, notes the mask's `NotDifferentiallyPrivate` event
    (masks are never charged as DP) and is reported by `ledgers()`.

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
        ledger: Ledger | None = None,
    ) -> None:
        self.split = widths if isinstance(widths, FeatureSplit) else FeatureSplit(widths)
        if self.split.parties < 2:
            raise config_error("widths", self.split.widths, "at least two parties' widths")
        for name, flag in (("seal_traffic", seal_traffic), ("record", record)):
            if not isinstance(flag, bool):
                raise config_error(name, flag, "True or False")
        if not isinstance(rng, np.random.Generator):
            raise config_error("rng", rng, "a numpy.random.Generator")
        if ledger is not None and not isinstance(ledger, Ledger):
            raise config_error("ledger", ledger, "None or a Ledger")
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
        self.name = VERTICAL_NAMES.get(policy.name, f"vertical-{policy.name}")
        self._log = CommLog()
        # per-round traffic, tallied in commit and written to the log in bulk (`comm`)
        self._tally: dict[tuple[str, str], list[int]] = {}
        self._tally_rounds: list[int] = []
        self._timings = {"setup": 0.0, "passive": 0.0, "active": 0.0}
        self.transcript: list[tuple] = []
        self._pending: PendingRound | None = None
        self._ledgers = [] if ledger is None else [ledger]
        if ledger is not None:
            ledger.note(MASK_EVENT)
        self._distribute(rng)
        self._open_channels()

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
            self._log.record(DOWNLOAD, 1, len(message), sender=GENERATOR)
        self._timings["setup"] = time.perf_counter() - started

    def _open_channels(self) -> None:
        """Each passive party's hello opens its sealed channel to the active party."""
        if not self.seal_traffic:
            return
        for party in self.passive:
            hello = self._transport(party.name, ACTIVE, party.hello)
            self.active.accept_channel(party.index, hello)
            self._log.record(UPLOAD, 1, len(hello), sender=party.name)

    def decide(self, rnd: Round, rng: np.random.Generator) -> PendingRound:
        """Steps 1-3 of a round: collect, check and sum the masked batches; choose an item.

        rnd.items[j] is party j's (K, d_j) block; `rng` is the policy's stream.
        Raises without changing the federation on any bad message.
        """
        t = self.active.round
        if rnd.t != t:
            raise ProtocolError(f"the federation plays round {t} next; got round {rnd.t}")
        if len(rnd.items) != self.split.parties:
            raise ProtocolError(
                f"round {t} needs {self.split.parties} feature blocks; got {len(rnd.items)}"
            )
        own = rnd.items[0]
        n_items = np.shape(own)[0]
        traffic: list[tuple[str, str, int]] = []
        started = time.perf_counter()
        request = self.active.request(n_items)
        replies = []
        for party in self.passive:
            delivered = self._transport(ACTIVE, party.name, request)
            traffic.append((DOWNLOAD, ACTIVE, len(request)))
            reply = party.answer(delivered, t, rnd.items[party.index])
            traffic.append((UPLOAD, party.name, len(reply)))
            replies.append(self._transport(party.name, ACTIVE, reply))
        middle = time.perf_counter()
        masked, parts = self.active.combine(own, replies, keep_parts=self.record)
        action = self.active.choose(masked, rnd.user, rng)
        self._timings["passive"] += middle - started
        self._timings["active"] += time.perf_counter() - middle
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
        self._timings["active"] += time.perf_counter() - started
        # tallied here, logged in bulk when the log is read (the log validates each record)
        tally = self._tally
        for direction, sender, nbytes in pending.traffic:
            counts = tally.get((direction, sender))
            if counts is None:
                counts = tally[(direction, sender)] = [0, 0]
            counts[0] += 1
            counts[1] += nbytes
        if pending.traffic:
            self._tally_rounds.append(pending.t)
        if self.record:
            self.transcript.append(pending.parts)

    # -- the federation as a policy of the run loop ------------------------------
    def select(self, items: tuple, user: int, t: int, rng: np.random.Generator) -> int:
        """`decide` on round t's parts (`VerticalSplit.observe(t).items`)."""
        self._pending = self.decide(Round(t, user, items), rng)
        return self._pending.action

    def update(self, items: tuple, user: int, action: Any, feedback: Any, t: int) -> None:
        """`commit` the round `select` decided."""
        pending, self._pending = self._pending, None
        if pending is None or pending.t != t or pending.action != action:
            raise ProtocolError(f"update of round {t} needs the round select decided; "
                                f"got {getattr(pending, 't', pending)!r}")
        self.commit(pending, feedback)

    @property
    def comm(self) -> CommLog:
        """The communication log, with every committed round's traffic."""
        for (direction, sender), (count, size) in self._tally.items():
            self._log.record(direction, count, size, sender=sender)
        self._log.mark_rounds(self._tally_rounds)
        self._tally, self._tally_rounds = {}, []
        return self._log

    def comm_summary(self) -> dict[str, Any]:
        """The communication log's summary (messages and bytes by direction and party)."""
        return self.comm.summary()

    def ledgers(self) -> list[Ledger]:
        return list(self._ledgers)

    def timings(self) -> dict[str, float]:
        return dict(self._timings)

    def params(self) -> dict[str, Any]:
        return {**self.policy.params(), "widths": list(self.split.widths),
                "seal_traffic": self.seal_traffic}

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
