"""Masks from key agreement and secret sharing: the deployable scheme ('crypto' extra).

The mask algebra and the dropout rule are `pairwise_masks`'s (module docstring
there); this module supplies them with cryptography (Bonawitz et al. 2017,
double masking):

- pairwise seed: s_ij = HKDF-SHA256(X25519(sk_i, pk_j), salt = session,
  info = b"privbandit/secure-sum/v1" || the lower public key || the higher);
  both parties derive the same 32 bytes from their own private key
  (`pair_seed`), nobody else can;
- per release t: s_ij^t = HMAC-SHA256(s_ij, b"pair" || t), so revealing one
  release's seed reveals nothing of another's; r_ij = SHAKE-256(s_ij^t) read
  as little-endian uint64 words;
- self mask: a fresh 32-byte seed b_i^t from the OS CSPRNG per release,
  p_i = SHAKE-256(b"self" || b_i^t), the seed split among all parties by
  Shamir's scheme with threshold `threshold` (`secret_sharing`).

At unmasking the survivors reveal s_ij^t for each dropped j and their shares
of b_k^t for each survivor k; the aggregator rebuilds b_k^t from `threshold`
shares and subtracts.  One process plays every party here (the object holds
every pairwise seed); in a deployment each party keeps its own row and the
seeds' shares travel sealed (`sealing`).  Masks come from the OS CSPRNG and
the key agreement, never from the numpy generator: the released sums, which
do not depend on masks, still replay bit for bit from a seed; the masked
shares do not.
"""
from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Sequence

import numpy as np

from privbandit.accounting.errors import invalid, require_extra
from privbandit.accounting.validation import check_count

from . import secret_sharing
from .pairwise_masks import MaskRound, Revealed

require_extra("cryptography", "crypto", "key-agreement masks (privbandit.mechanisms.agreed_masks)")
from cryptography.hazmat.primitives import hashes  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey  # noqa: E402
from cryptography.hazmat.primitives.kdf.hkdf import HKDF  # noqa: E402

from .sealing import SESSION_BYTES, PartyKeys  # noqa: E402

_INFO = b"privbandit/secure-sum/v1"
SEED_BYTES = 32


def pair_seed(own: PartyKeys, other_public: bytes, session: bytes) -> bytes:
    """The pairwise seed of `own` and the party with public key `other_public` (symmetric)."""
    if not isinstance(own, PartyKeys):
        raise invalid("own", own, "a PartyKeys")
    if not isinstance(other_public, (bytes, bytearray)) or len(other_public) != 32:
        raise invalid("other_public", other_public, "a raw X25519 public key of 32 bytes")
    if not isinstance(session, (bytes, bytearray)) or len(session) != SESSION_BYTES:
        raise invalid("session", session, f"{SESSION_BYTES} bytes (sealing.new_session())")
    shared = own.private.exchange(X25519PublicKey.from_public_bytes(bytes(other_public)))
    low, high = sorted((own.public, bytes(other_public)))
    return HKDF(algorithm=hashes.SHA256(), length=SEED_BYTES, salt=bytes(session),
                info=_INFO + low + high).derive(shared)


def expand(seed: bytes, entries: int, domain: bytes) -> np.ndarray:
    """(entries,) uniform uint64 words: SHAKE-256(domain || seed), little-endian."""
    data = hashlib.shake_256(domain + seed).digest(8 * entries)
    return np.frombuffer(data, dtype="<u8").astype(np.uint64)


def release_seed(seed: bytes, release: int) -> bytes:
    """s^t = HMAC-SHA256(seed, b"pair" || t): the seed of one release."""
    return hmac.new(seed, b"pair" + release.to_bytes(8, "big"), hashlib.sha256).digest()


class _AgreedRound(MaskRound):
    def __init__(self, pair_seeds: dict, held: list, entries: int, threshold: int,
                 own_masks: np.ndarray) -> None:
        n = own_masks.shape[0]
        masks = own_masks.copy()
        for (i, j), seed in pair_seeds.items():
            r = expand(seed, entries, b"pair")
            masks[i] += r
            masks[j] -= r
        super().__init__(masks, threshold)
        self._pair_seeds, self._held, self._entries, self._n = pair_seeds, held, entries, n

    def revealed(self, survivors: np.ndarray) -> Revealed:
        alive = self.check_survivors(survivors)
        pairs = {key: expand(seed, self._entries, b"pair")
                 for key, seed in self._pair_seeds.items() if alive[key[0]] != alive[key[1]]}
        holders = np.flatnonzero(alive)
        own = {}
        for k in holders:  # survivors' shares of survivor k's seed; never a dropped party's
            seed = secret_sharing.combine({int(i) + 1: self._held[i][k] for i in holders},
                                          self.threshold)
            own[int(k)] = expand(seed, self._entries, b"self")
        return Revealed(pairs, own)

    def unmask(self, survivors: np.ndarray) -> np.ndarray:
        alive = self.check_survivors(survivors)
        known = self.revealed(alive)
        total = np.zeros(self._entries, dtype=np.uint64)
        for p in known.self_masks.values():
            total += p
        for (i, _), r in known.pair_masks.items():
            if alive[i]:
                total += r
            else:
                total -= r
        return total


class AgreedMasks:
    """Pairwise seeds from X25519 + HKDF, Shamir-shared self masks (module docstring).

    Build with `AgreedMasks.from_keys(keys, session)`: keys, one `sealing.PartyKeys`
    per party in party order; session: 16 bytes (`sealing.new_session()`).
    Picklable (it keeps the derived seeds, never the private keys).
    """

    simulated = False
    description = ("key-agreement masks: pairwise seeds by X25519 + HKDF-SHA256, self masks "
                   "Shamir-shared (Bonawitz et al. 2017 double masking)")

    def __init__(self, pair_seeds: dict) -> None:
        self._seeds = {(int(i), int(j)): bytes(s) for (i, j), s in pair_seeds.items()}
        n = 1 + max((j for _, j in self._seeds), default=0)
        want = {(i, j) for i in range(n) for j in range(i + 1, n)}
        if set(self._seeds) != want or any(len(s) != SEED_BYTES for s in self._seeds.values()):
            raise invalid("pair_seeds", sorted(self._seeds),
                          f"one {SEED_BYTES}-byte seed per pair (i, j), i < j < parties")
        self._parties = n

    @classmethod
    def from_keys(cls, keys: Sequence[PartyKeys], session: bytes) -> AgreedMasks:
        keys = list(keys)
        if len(keys) < 2 or not all(isinstance(k, PartyKeys) for k in keys):
            raise invalid("keys", keys, "a sequence of at least 2 PartyKeys, one per party")
        return cls({(i, j): pair_seed(keys[i], keys[j].public, session)
                    for i in range(len(keys)) for j in range(i + 1, len(keys))})

    @property
    def parties(self) -> int:
        return self._parties

    def round(self, release: int, parties: int, entries: int, threshold: int,
              rng: np.random.Generator) -> MaskRound:
        release = check_count("release", release, 0)
        if check_count("parties", parties) != self._parties:
            raise invalid("parties", parties, f"{self._parties} (the keys agreed)")
        entries = check_count("entries", entries, 0)
        threshold = check_count("threshold", threshold)
        seeds = [os.urandom(SEED_BYTES) for _ in range(parties)]
        by_party = [secret_sharing.split(s, parties, threshold) for s in seeds]
        held = [[by_party[k][i] for k in range(parties)] for i in range(parties)]
        own = np.stack([expand(s, entries, b"self") for s in seeds])
        pair = {key: release_seed(s, release) for key, s in self._seeds.items()}
        return _AgreedRound(pair, held, entries, threshold, own)

    def __repr__(self) -> str:
        return f"AgreedMasks(parties={self._parties})"
