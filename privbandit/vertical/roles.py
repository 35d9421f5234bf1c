"""The three roles of seed 003's protocol: mask generator, passive parties, active party.

- `MaskGenerator` draws a Haar-random orthogonal Q (`privbandit.mechanisms.masks`), seals
  each party's column block Q^j for that party alone (`privbandit.mechanisms.sealing`)
  and keeps nothing: it must not collude with the active party.
- `PassiveParty` j opens its block, and every round answers the active
  party's request with its masked batch Q^j x^j (K, d), serialized
  (`vertical.wire`) and, if the federation seals its traffic, sealed for the
  active party.
- `ActiveParty` holds block 0, serves the user and sees the rewards.  Each
  round it checks every passive party's batch, adds the parts into
  Q x = sum_j Q^j x^j and runs a linear policy (LinUCB, LinTS) on those
  masked contexts; it never sees x^j of another party nor any Q^j but its own.

Semi-honest model: every role follows the protocol and may try to learn
from what it receives.  Masks are NOT differential privacy (see
`privbandit.mechanisms.masks.MASK_EVENT`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from privbandit.mechanisms.masks import OrthogonalMask, PartyMask
from privbandit.mechanisms.sealing import (
    ChannelReceiver,
    ChannelSender,
    Opener,
    PartyKeys,
    Sealer,
)

from ..errors import ShapeError, config_error
from ..policies.base import Policy
from ..validation import check_dim
from . import wire
from .errors import ProtocolError

ACTIVE = "active"
GENERATOR = "generator"


def party_name(j: int) -> str:
    """The wire identity of party j: "active" for 0, "passive-j" otherwise."""
    return ACTIVE if j == 0 else f"passive-{j}"


class MaskGenerator:
    """Draws Q and seals block Q^j for party j; holds no copy of Q afterwards.

    Privacy guarantee
    -----------------
    None in the DP sense: the orthogonal mask is `NotDifferentiallyPrivate`
    (semi-honest, non-colluding parties; seed 003 Section 4.2, Theorem 4.2).
    The generator learns no features; if it colluded with the active party,
    the two together could unmask every passive party, so they must not.
    """

    def __init__(self, keys: PartyKeys | None = None) -> None:
        self.name = GENERATOR
        self.keys = PartyKeys.generate() if keys is None else keys
        if not isinstance(self.keys, PartyKeys):
            raise config_error("keys", keys, "None or a PartyKeys")

    @property
    def public(self) -> bytes:
        return self.keys.public

    def distribute(
        self, widths: Sequence[int], publics: Sequence[bytes], rng: np.random.Generator
    ) -> tuple[bytes, ...]:
        """Q^j sealed for party j, for every j, from a fresh Haar-random Q drawn from `rng`.

        Widths that do not sum to a square Q raise `MaskError` (mechanisms).
        """
        mask = OrthogonalMask.generate(widths, rng)
        if len(publics) != mask.parties:
            raise config_error("publics", len(publics), f"{mask.parties} public keys, one a party")
        sealer = Sealer(self.name, self.keys)
        return tuple(
            sealer.seal_block(mask.block(j), party_name(j), publics[j])
            for j in range(mask.parties)
        )


class _Party:
    """What every data-holding party has: an index, a width, keys and its mask block."""

    def __init__(self, index: int, width: int, dim: int, keys: PartyKeys | None) -> None:
        self.index = index
        self.name = party_name(index)
        self.width = check_dim("width", width)
        self.dim = check_dim("dim", dim)
        if self.width > self.dim:
            raise config_error("width", width, f"at most the masked dimension d={dim}")
        self.keys = PartyKeys.generate() if keys is None else keys
        if not isinstance(self.keys, PartyKeys):
            raise config_error("keys", keys, "None or a PartyKeys")
        self._mask: PartyMask | None = None

    @property
    def public(self) -> bytes:
        return self.keys.public

    @property
    def has_mask(self) -> bool:
        return self._mask is not None

    @property
    def block(self) -> np.ndarray:
        """This party's own mask block Q^j (d, d_j), read-only (what it was sent)."""
        return self._require_mask().block

    def receive_mask(self, sealed: bytes, generator_public: bytes) -> None:
        """Open the sealed block from the generator; check it is (d, d_j) and orthonormal.

        A block sealed for another party or tampered with raises `SealError`;
        a wrong shape `ShapeError`; non-orthonormal columns `MaskError`.  The
        party is unchanged on any failure.
        """
        if self._mask is not None:
            raise ProtocolError(f"{self.name} already holds its mask block; a mask is set once")
        opener = Opener(self.name, self.keys, {GENERATOR: generator_public})
        block = opener.open_block(sealed)
        if block.shape != (self.dim, self.width):
            raise ShapeError(
                f"mask block of {self.name} must have shape ({self.dim}, {self.width}); "
                f"got {block.shape}"
            )
        self._mask = PartyMask(block, party=self.index)

    def _require_mask(self) -> PartyMask:
        if self._mask is None:
            raise ProtocolError(f"{self.name} has no mask block yet; distribute masks first")
        return self._mask

    def mask(self, features: np.ndarray, n_items: int, out: np.ndarray | None = None
             ) -> np.ndarray:
        """Q^j x^j for this party's (K, d_j) features: (K, d), written into `out` if given."""
        x = np.asarray(features)
        if x.shape != (n_items, self.width):
            raise ShapeError(
                f"features of {self.name} must have shape ({n_items}, {self.width}); "
                f"got {x.shape}"
            )
        return self._require_mask().mask(x, out=out)


class PassiveParty(_Party):
    """A feature holder: answers each round's request with its sealed masked batch."""

    def __init__(
        self,
        index: int,
        width: int,
        dim: int,
        *,
        keys: PartyKeys | None = None,
        active_public: bytes | None = None,
    ) -> None:
        if isinstance(index, bool) or not isinstance(index, int) or index < 1:
            raise config_error("index", index, "an integer >= 1 (0 is the active party)")
        super().__init__(index, width, dim, keys)
        # With the active party's key, replies travel on one sealed session channel
        # (one key agreement for the session, a fresh nonce per message); without, in plain.
        self._channel = None if active_public is None else ChannelSender(
            self.name, self.keys, ACTIVE, active_public)

    @property
    def hello(self) -> bytes | None:
        """The channel's opening message for the active party (None without sealing)."""
        return None if self._channel is None else self._channel.hello

    def answer(self, request: bytes, round: int, features: np.ndarray) -> bytes:
        """Round `round`'s reply: the masked batch of `features` ((K, d_j)), serialized."""
        n_items = wire.decode_request(request, round=round, sender=0)
        if self._channel is None:  # header and batch joined: one copy
            return wire.encode_masked(round, self.index, self.mask(features, n_items))
        payload, body = wire.masked_buffer(round, self.index, n_items, self.dim)
        self.mask(features, n_items, out=body)  # masked straight into the plaintext
        return self._channel.seal(payload)


class ActiveParty(_Party):
    """Serves the user: combines the masked batches and runs a linear policy on them.

    The round is split so that nothing changes until the reward is known:
    `combine` (check every batch, add them) and `choose` leave the party as it
    was; only `learn` updates the policy and moves to the next round.  A bad
    message therefore never leaves a round half-applied.
    """

    def __init__(
        self,
        width: int,
        dim: int,
        policy: Policy,
        passive_publics: Mapping[str, bytes] | None,
        *,
        keys: PartyKeys | None = None,
        n_passive: int,
    ) -> None:
        super().__init__(0, width, dim, keys)
        if not isinstance(policy, Policy) or getattr(policy, "dim", None) != dim:
            raise config_error("policy", policy, f"a linear Policy of dimension d={dim}")
        self.policy = policy
        self.n_passive = check_dim("n_passive", n_passive)
        # One channel per passive slot, opened by that party's hello: a reply sealed by
        # any other party is refused.
        self._publics = passive_publics
        self._channels: list[ChannelReceiver | None] = [None] * self.n_passive
        self.round = 0

    @property
    def sealed(self) -> bool:
        return self._publics is not None

    def accept_channel(self, j: int, hello: bytes) -> None:
        """Open the sealed channel of passive slot j from that party's `hello`."""
        if self._publics is None:
            raise ProtocolError("this active party takes plain replies; no channel to open")
        name = party_name(j)
        self._channels[j - 1] = ChannelReceiver(self.name, self.keys, name, self._publics[name],
                                                hello)

    def request(self, n_items: int) -> bytes:
        """The request every passive party receives this round."""
        return wire.encode_request(self.round, 0, n_items)

    def _open(self, j: int, message: bytes) -> bytes:
        if self._publics is None:
            return message
        channel = self._channels[j - 1]
        if channel is None:
            raise ProtocolError(f"no sealed channel from {party_name(j)} yet; its hello opens it")
        return channel.open(message)

    def combine(
        self, features: np.ndarray, replies: Sequence[bytes], *, keep_parts: bool = False
    ) -> tuple[np.ndarray, tuple]:
        """Q x for the round's K items: own part plus one checked batch per passive party.

        replies[j - 1] is passive party j's message.  Returns the (K, d) sum
        and, with `keep_parts`, the passive parties' batches as received.
        Raises (and changes nothing) on a reply sealed for someone else or
        tampered (`SealError`), of the wrong shape (`ShapeError`), for another
        round or malformed (`ProtocolError`).  A replayed sealed reply is refused
        by its channel's counter (and a plain one by the round number inside the
        payload), and a reply sealed by another party than the slot's owner is
        refused (its sender is not that channel's).
        """
        n_items = np.shape(features)[0]
        total = self.mask(features, n_items)
        if len(replies) != self.n_passive:
            raise ProtocolError(
                f"round {self.round} needs one reply from each of the {self.n_passive} passive "
                f"parties; got {len(replies)}"
            )
        parts = []
        for j, message in enumerate(replies, start=1):
            body = self._open(j, message)
            part = wire.decode_masked(
                body, round=self.round, sender=j, n_items=n_items, dim=self.dim, finite=False
            )
            total += part
            parts.append(part)
        # one finiteness pass for all batches: a NaN or inf in any makes the sum non-finite
        if not math.isfinite(total.sum()):
            for j, part in enumerate(parts, start=1):
                wire.check_finite(part, round=self.round, sender=j)
        return total, tuple(parts) if keep_parts else ()

    def choose(self, masked: np.ndarray, user: int, rng: np.random.Generator) -> int:
        """The policy's action on the masked contexts (no state change)."""
        return int(self.policy.select(masked, user, self.round, rng))

    def learn(self, masked: np.ndarray, user: int, action: int, reward: float) -> None:
        """Update the policy with the masked context of `action` and close the round."""
        self.policy.update(masked, user, action, reward, self.round)
        self.round += 1
