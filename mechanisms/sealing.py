"""Sealed point-to-point messages: how mask blocks (and masked contexts) travel.

Each party holds a static X25519 key pair (`PartyKeys`).  A sender seals a
payload for one recipient with a fresh ephemeral key; the AEAD key comes from
both an ephemeral-static and a static-static agreement (the "auth" mode of
HPKE, RFC 9180 Section 5.1.3), so only the named recipient can open the
message and the recipient knows which registered sender sealed it.  Every
header field is authenticated as associated data; an `Opener` remembers the
(sender, session, counter) triples it accepted and refuses replays.

Wire format, version 1 (integers big-endian; the header is everything before
the ciphertext and is the AEAD associated data):

    offset  size     field
    0       4        magic b"PBSL"
    4       1        version = 1
    5       1        kind: 1 = numeric array block, 2 = raw bytes
    6       1        Ls = length of the sender id (1..255)
    7       Ls       sender id, UTF-8
    .       1        Lr = length of the recipient id (1..255)
    .       Lr       recipient id, UTF-8
    .       16       session id
    .       8        message counter (uint64)
    .       32       recipient's static X25519 public key
    .       32       sender's ephemeral X25519 public key
    kind 1 only:
    .       1        dtype code: 1 = float64, 2 = float32, 3 = int64 (little-endian)
    .       1        ndim (0..8)
    .       4*ndim   shape, uint32 each
    .       4        N = ciphertext length, uint32 (payload + 16-byte tag)
    .       N        AES-256-GCM ciphertext || tag

Key schedule: ikm = X25519(eph, recipient) || X25519(sender, recipient);
HKDF-SHA256(salt = session id, info = b"privbandit/seal/v1" || ephemeral
public || recipient public || sender public) yields 44 bytes: a 32-byte
AES-256-GCM key and a 12-byte nonce.  The key is fresh for every message, so a
derived nonce is never reused under one key.

Key material always comes from the operating system's CSPRNG, never from a
seeded numpy generator: seeded runs reproduce every opened value bit for bit,
but not the ciphertext bytes.
"""
from __future__ import annotations

import hmac
import numbers
import os
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from privbandit.accounting.errors import invalid, require_extra

from .errors import SealError, ShapeError

require_extra("cryptography", "crypto", "sealed channels (privbandit.mechanisms.sealing)")
from cryptography.exceptions import InvalidTag  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.x25519 import (  # noqa: E402
    X25519PrivateKey,
    X25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402
from cryptography.hazmat.primitives.kdf.hkdf import HKDF  # noqa: E402

MAGIC = b"PBSL"
VERSION = 1
KIND_BLOCK = 1
KIND_BYTES = 2
SESSION_BYTES = 16
KEY_BYTES = 32
TAG_BYTES = 16
MAX_NDIM = 8
_INFO = b"privbandit/seal/v1"
_DTYPES = {1: np.dtype("<f8"), 2: np.dtype("<f4"), 3: np.dtype("<i8")}
_DTYPE_CODES = {dt: code for code, dt in _DTYPES.items()}
_KIND_NAMES = {KIND_BLOCK: "a numeric array block", KIND_BYTES: "raw bytes"}


@dataclass(frozen=True)
class PartyKeys:
    """A party's static X25519 key pair; share `public` (32 bytes), keep the rest."""

    private: X25519PrivateKey = field(repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.private, X25519PrivateKey):
            raise invalid("private", type(self.private).__name__, "an X25519PrivateKey")

    @classmethod
    def generate(cls) -> "PartyKeys":
        """A fresh key pair from the OS CSPRNG."""
        return cls(X25519PrivateKey.generate())

    @property
    def public(self) -> bytes:
        return self.private.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    def __repr__(self) -> str:
        return f"PartyKeys(public={self.public.hex()[:16]}...)"

    def __reduce__(self):
        raise _not_copied(self, "an X25519 private key")


def _not_copied(holder: object, what: str) -> TypeError:
    """Secrets and message counters are never pickled or copied: a private key must not
    leave its process (a worker, a cache, a file), and a copied counter or replay memory
    would reuse a nonce or accept a replay."""
    return TypeError(
        f"{type(holder).__name__} holds {what}, which privbandit never pickles or copies: "
        "build it in the process that uses it (keys from PartyKeys.generate(); share only "
        "their `public` bytes)")


def new_session() -> bytes:
    """A fresh random 16-byte session id."""
    return os.urandom(SESSION_BYTES)


# -- validation of caller arguments (programming errors, not wire failures) ----
def _check_id(name: str, value: object) -> bytes:
    raw = value.encode("utf-8") if isinstance(value, str) else b""
    if not 1 <= len(raw) <= 255:
        raise invalid(name, value, "a non-empty string of at most 255 UTF-8 bytes")
    return raw


def _check_public(name: str, value: object) -> bytes:
    if not isinstance(value, (bytes, bytearray)) or len(value) != KEY_BYTES:
        raise invalid(name, value, f"a raw X25519 public key of {KEY_BYTES} bytes")
    return bytes(value)


def _check_session(value: object) -> bytes:
    if not isinstance(value, (bytes, bytearray)) or len(value) != SESSION_BYTES:
        raise invalid("session", value, f"{SESSION_BYTES} bytes (see new_session())")
    return bytes(value)


def _check_counter(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not (
        0 <= value < 2**64
    ):
        raise invalid("counter", value, "an integer in [0, 2**64)")
    return int(value)


def _check_keys(name: str, value: object) -> PartyKeys:
    if not isinstance(value, PartyKeys):
        raise invalid(name, value, "a PartyKeys")
    return value


def _derive(ikm: bytes, session: bytes, eph: bytes, rcpt: bytes, sender: bytes):
    okm = HKDF(
        algorithm=hashes.SHA256(), length=44, salt=session, info=_INFO + eph + rcpt + sender
    ).derive(ikm)
    return AESGCM(okm[:32]), okm[32:]


def _block_header(block: object) -> tuple[bytes, bytes]:
    a = np.asarray(block)
    dt = a.dtype.newbyteorder("<") if a.dtype.kind in "fi" else a.dtype
    if dt not in _DTYPE_CODES:
        raise ShapeError(
            f"block must have dtype float64, float32 or int64; got {a.dtype} "
            f"with shape {a.shape}"
        )
    if a.ndim > MAX_NDIM or any(n >= 2**32 for n in a.shape):
        raise ShapeError(f"block must have at most {MAX_NDIM} axes below 2**32; got {a.shape}")
    meta = struct.pack(f">BB{a.ndim}I", _DTYPE_CODES[dt], a.ndim, *a.shape)
    return meta, np.ascontiguousarray(a, dtype=dt).tobytes()


def _seal(kind, meta, payload, *, sender, sender_keys, recipient, recipient_public,
          session, counter) -> bytes:
    s_id, r_id = _check_id("sender", sender), _check_id("recipient", recipient)
    sender_keys = _check_keys("sender_keys", sender_keys)
    rcpt = _check_public("recipient_public", recipient_public)
    session, counter = _check_session(session), _check_counter(counter)
    eph = X25519PrivateKey.generate()
    eph_pub = PartyKeys(eph).public
    rcpt_key = X25519PublicKey.from_public_bytes(rcpt)
    ikm = eph.exchange(rcpt_key) + sender_keys.private.exchange(rcpt_key)
    aead, nonce = _derive(ikm, session, eph_pub, rcpt, sender_keys.public)
    header = (
        MAGIC + bytes([VERSION, kind, len(s_id)]) + s_id + bytes([len(r_id)]) + r_id
        + session + struct.pack(">Q", counter) + rcpt + eph_pub + meta
        + struct.pack(">I", len(payload) + TAG_BYTES)
    )
    return header + aead.encrypt(nonce, payload, header)


def seal_block(block: object, *, sender: str, sender_keys: PartyKeys, recipient: str,
               recipient_public: bytes, session: bytes, counter: int) -> bytes:
    """Seal a numeric array (e.g. a d x d_j mask block) for one recipient.

    Shape and dtype (float64, float32 or int64) travel in the authenticated
    header, so the opened array equals `block` exactly.  `counter` must not
    repeat within (sender, session): the recipient refuses repeats as replays.
    """
    meta, payload = _block_header(block)
    return _seal(KIND_BLOCK, meta, payload, sender=sender, sender_keys=sender_keys,
                 recipient=recipient, recipient_public=recipient_public, session=session,
                 counter=counter)


def seal_message(payload: bytes, *, sender: str, sender_keys: PartyKeys, recipient: str,
                 recipient_public: bytes, session: bytes, counter: int) -> bytes:
    """Seal arbitrary bytes (e.g. a serialized round message) for one recipient."""
    if not isinstance(payload, (bytes, bytearray)):
        raise invalid("payload", type(payload).__name__, "bytes")
    return _seal(KIND_BYTES, b"", bytes(payload), sender=sender, sender_keys=sender_keys,
                 recipient=recipient, recipient_public=recipient_public, session=session,
                 counter=counter)


# -- opening: every refusal is a SealError naming the check that failed --------
@dataclass(frozen=True)
class _Parsed:
    kind: int
    sender: str
    recipient: str
    session: bytes
    counter: int
    recipient_public: bytes
    ephemeral_public: bytes
    dtype: np.dtype | None
    shape: tuple
    header: bytes
    ciphertext: bytes


class _Reader:
    """Reads fields in order; running out of bytes is a truncation."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int, what: str) -> bytes:
        if self.pos + n > len(self.data):
            raise SealError(
                f"length check failed: message truncated inside {what} "
                f"(needs {self.pos + n} bytes, has {len(self.data)})"
            )
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def byte(self, what: str) -> int:
        return self.take(1, what)[0]


def _read_id(r: _Reader, what: str) -> str:
    n = r.byte(f"the {what} id length")
    if n == 0:
        raise SealError(f"format check failed: the {what} id is empty")
    try:
        return r.take(n, f"the {what} id").decode("utf-8")
    except UnicodeDecodeError:
        raise SealError(f"format check failed: the {what} id is not valid UTF-8") from None


def _parse(message: object) -> _Parsed:
    if not isinstance(message, (bytes, bytearray)):
        raise invalid("message", type(message).__name__, "bytes")
    r = _Reader(bytes(message))
    if r.take(4, "the magic") != MAGIC:
        raise SealError("format check failed: not a privbandit sealed message (bad magic)")
    version = r.byte("the version")
    if version != VERSION:
        raise SealError(f"version check failed: got version {version}, this opener reads {VERSION}")
    kind = r.byte("the kind")
    if kind not in _KIND_NAMES:
        raise SealError(f"format check failed: unknown kind {kind}")
    sender, recipient = _read_id(r, "sender"), _read_id(r, "recipient")
    session = r.take(SESSION_BYTES, "the session id")
    (counter,) = struct.unpack(">Q", r.take(8, "the counter"))
    rcpt_pub = r.take(KEY_BYTES, "the recipient key")
    eph_pub = r.take(KEY_BYTES, "the ephemeral key")
    dtype, shape = None, ()
    if kind == KIND_BLOCK:
        code, ndim = r.byte("the dtype"), r.byte("the ndim")
        if code not in _DTYPES or ndim > MAX_NDIM:
            raise SealError(f"format check failed: dtype code {code} / ndim {ndim} not allowed")
        dtype = _DTYPES[code]
        shape = struct.unpack(f">{ndim}I", r.take(4 * ndim, "the shape"))
    (n,) = struct.unpack(">I", r.take(4, "the ciphertext length"))
    header = r.data[:r.pos]
    ciphertext = r.take(n, "the ciphertext")
    if r.pos != len(r.data):
        raise SealError(
            f"length check failed: {len(r.data) - r.pos} unexpected bytes after the ciphertext"
        )
    return _Parsed(kind, sender, recipient, session, counter, rcpt_pub, eph_pub, dtype,
                   shape, header, ciphertext)


class ReplayGuard:
    """Remembers the (sender, session, counter) triples already accepted."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, bytes], set[int]] = {}

    def seen(self, sender: str, session: bytes, counter: int) -> bool:
        return counter in self._seen.get((sender, session), ())

    def record(self, sender: str, session: bytes, counter: int) -> None:
        self._seen.setdefault((sender, session), set()).add(counter)

    def __len__(self) -> int:
        return sum(len(s) for s in self._seen.values())


def _open(message, kind, *, recipient, recipient_keys, peers, guard) -> tuple[_Parsed, bytes]:
    r_id = _check_id("recipient", recipient).decode("utf-8")
    recipient_keys = _check_keys("recipient_keys", recipient_keys)
    if not isinstance(guard, ReplayGuard):
        raise invalid("guard", guard, "a ReplayGuard (replay detection is not optional)")
    p = _parse(message)
    if p.kind != kind:
        raise SealError(
            f"kind check failed: the message holds {_KIND_NAMES[p.kind]}, "
            f"expected {_KIND_NAMES[kind]}"
        )
    if p.recipient != r_id or not hmac.compare_digest(p.recipient_public, recipient_keys.public):
        raise SealError(
            f"recipient check failed: misaddressed message for {p.recipient!r} "
            f"(key {p.recipient_public.hex()[:16]}...), opened by {r_id!r}"
        )
    if not isinstance(peers, Mapping):
        raise invalid("peers", peers, "a mapping of sender id -> 32-byte public key")
    if p.sender not in peers:
        raise SealError(f"sender check failed: {p.sender!r} is not a registered peer")
    sender_public = _check_public(f"peers[{p.sender!r}]", peers[p.sender])
    if guard.seen(p.sender, p.session, p.counter):
        raise SealError(
            f"replay check failed: counter {p.counter} from {p.sender!r} in session "
            f"{p.session.hex()[:16]}... was already accepted"
        )
    try:
        eph = X25519PublicKey.from_public_bytes(p.ephemeral_public)
        ikm = recipient_keys.private.exchange(eph) + recipient_keys.private.exchange(
            X25519PublicKey.from_public_bytes(sender_public)
        )
        aead, nonce = _derive(ikm, p.session, p.ephemeral_public, p.recipient_public,
                              sender_public)
        payload = aead.decrypt(nonce, p.ciphertext, p.header)
    except (InvalidTag, ValueError):
        # ValueError: a low-order ephemeral key gives an all-zero shared secret.
        raise SealError(
            "authentication check failed: the message was tampered with or sealed "
            "with other keys"
        ) from None
    return p, payload


def open_block(message: bytes, *, recipient: str, recipient_keys: PartyKeys,
               peers: Mapping[str, bytes], guard: ReplayGuard) -> np.ndarray:
    """Open a sealed array addressed to `recipient`; record it in `guard`.

    `peers` maps registered sender ids to their static public keys.  Raises
    `SealError` naming the failed check (format, version, length, kind,
    recipient, sender, replay, authentication, payload); nothing is recorded
    on failure.
    """
    p, payload = _open(message, KIND_BLOCK, recipient=recipient, recipient_keys=recipient_keys,
                       peers=peers, guard=guard)
    expected = int(np.prod(p.shape, dtype=np.int64)) * p.dtype.itemsize
    if len(payload) != expected:
        raise SealError(
            f"payload check failed: {len(payload)} bytes do not fill shape {p.shape} "
            f"of {p.dtype}"
        )
    block = np.frombuffer(payload, dtype=p.dtype).reshape(p.shape).astype(
        p.dtype.newbyteorder("="), copy=True
    )
    guard.record(p.sender, p.session, p.counter)
    return block


def open_message(message: bytes, *, recipient: str, recipient_keys: PartyKeys,
                 peers: Mapping[str, bytes], guard: ReplayGuard) -> bytes:
    """Open sealed raw bytes addressed to `recipient`; record it in `guard`."""
    p, payload = _open(message, KIND_BYTES, recipient=recipient, recipient_keys=recipient_keys,
                       peers=peers, guard=guard)
    guard.record(p.sender, p.session, p.counter)
    return payload


class Sealer:
    """One sender in one session: numbers its messages 0, 1, 2, ... itself."""

    def __reduce__(self):
        raise _not_copied(self, "a private key and a message counter")

    def __init__(self, sender: str, keys: PartyKeys, session: bytes | None = None) -> None:
        _check_id("sender", sender)
        self.sender = sender
        self.keys = _check_keys("keys", keys)
        self.session = new_session() if session is None else _check_session(session)
        self._counter = 0

    @property
    def counter(self) -> int:
        """The counter the next message will carry."""
        return self._counter

    def seal_block(self, block: object, recipient: str, recipient_public: bytes) -> bytes:
        out = seal_block(block, sender=self.sender, sender_keys=self.keys, recipient=recipient,
                         recipient_public=recipient_public, session=self.session,
                         counter=self._counter)
        self._counter += 1
        return out

    def seal_message(self, payload: bytes, recipient: str, recipient_public: bytes) -> bytes:
        out = seal_message(payload, sender=self.sender, sender_keys=self.keys,
                           recipient=recipient, recipient_public=recipient_public,
                           session=self.session, counter=self._counter)
        self._counter += 1
        return out


class Opener:
    """One recipient: its keys, its registered peers, and its replay memory."""

    def __reduce__(self):
        raise _not_copied(self, "a private key and a replay memory")

    def __init__(self, recipient: str, keys: PartyKeys, peers: Mapping[str, bytes]) -> None:
        _check_id("recipient", recipient)
        if not isinstance(peers, Mapping):
            raise invalid("peers", peers, "a mapping of sender id -> 32-byte public key")
        self.recipient = recipient
        self.keys = _check_keys("keys", keys)
        self.peers = {_check_id("peers key", k).decode("utf-8"): _check_public(f"peers[{k!r}]", v)
                      for k, v in peers.items()}
        self.guard = ReplayGuard()

    def open_block(self, message: bytes) -> np.ndarray:
        return open_block(message, recipient=self.recipient, recipient_keys=self.keys,
                          peers=self.peers, guard=self.guard)

    def open_message(self, message: bytes) -> bytes:
        return open_message(message, recipient=self.recipient, recipient_keys=self.keys,
                            peers=self.peers, guard=self.guard)


# -- session channels: one key agreement per (sender, recipient, session) ----------
KIND_HELLO = 3
KIND_CHANNEL = 4
_CHANNEL_INFO = b"privbandit/channel/v1"
_NONCE_PREFIX_BYTES = 4


def _ids(sender: bytes, recipient: bytes) -> bytes:
    return bytes([len(sender)]) + sender + bytes([len(recipient)]) + recipient


def _channel_key(ikm: bytes, session: bytes, eph: bytes, rcpt: bytes, sender: bytes):
    okm = HKDF(algorithm=hashes.SHA256(), length=32 + _NONCE_PREFIX_BYTES, salt=session,
               info=_CHANNEL_INFO + eph + rcpt + sender).derive(ikm)
    return AESGCM(okm[:32]), okm[32:]


class ChannelSender:
    """Sealed messages from one sender to one recipient for one session (the standard
    session design: one key agreement, then an AEAD key and a unique nonce per message).

    At construction a fresh ephemeral X25519 key is agreed with the recipient's
    static key, and the sender's static key with it too (HPKE's auth mode, RFC
    9180 Section 5.1.3, once per session); HKDF-SHA256 (salt = the session id)
    gives an AES-256-GCM key and a 4-byte nonce prefix.  `hello` (ids, session id,
    ephemeral public key) goes to the recipient once, in the clear: a forged hello
    only yields a key that opens nothing, since the key also needs the sender's
    static secret.  Message i carries counter i; its nonce is prefix || i (8
    bytes, big-endian), unique under the session key; the header (ids, session,
    counter, length) is the associated data.  Payloads are encrypted straight
    into the message buffer (`AESGCM.encrypt_into`).

    Threat model kept: a network adversary can neither read a message, nor alter,
    misaddress, forge or replay one unnoticed, and the recipient knows which
    registered sender sealed it.  Given up against one ephemeral key per message:
    whoever reads one session key from a party's memory opens that session's
    messages (not other sessions'), so erase a channel when its session ends.
    """

    def __reduce__(self):
        raise _not_copied(self, "a session key and a nonce counter")

    def __init__(self, sender: str, keys: PartyKeys, recipient: str, recipient_public: bytes,
                 session: bytes | None = None) -> None:
        s_id, r_id = _check_id("sender", sender), _check_id("recipient", recipient)
        keys = _check_keys("keys", keys)
        rcpt = _check_public("recipient_public", recipient_public)
        session = new_session() if session is None else _check_session(session)
        eph = X25519PrivateKey.generate()
        eph_pub = PartyKeys(eph).public
        rcpt_key = X25519PublicKey.from_public_bytes(rcpt)
        ikm = eph.exchange(rcpt_key) + keys.private.exchange(rcpt_key)
        self._aead, self._prefix = _channel_key(ikm, session, eph_pub, rcpt, keys.public)
        self.sender, self.recipient, self.session = sender, recipient, session
        self.hello = (MAGIC + bytes([VERSION, KIND_HELLO]) + _ids(s_id, r_id) + session
                      + eph_pub)
        self._head = MAGIC + bytes([VERSION, KIND_CHANNEL]) + _ids(s_id, r_id) + session
        self._counter = 0

    @property
    def counter(self) -> int:
        """The counter the next message will carry."""
        return self._counter

    def seal(self, payload: bytes | bytearray | memoryview) -> bytes:
        """Seal `payload` as the channel's next message."""
        n = len(payload)
        header = self._head + struct.pack(">QI", self._counter, n + TAG_BYTES)
        out = bytearray(len(header) + n + TAG_BYTES)
        out[:len(header)] = header
        nonce = self._prefix + struct.pack(">Q", self._counter)
        self._aead.encrypt_into(nonce, payload, header, memoryview(out)[len(header):])
        self._counter += 1
        return bytes(out)


class ChannelReceiver:
    """The recipient's end of a `ChannelSender`, built from its `hello`.

    Opens the channel's messages in order: a counter at or below one already
    accepted is a replay and refused; every refusal is a `SealError` naming the
    check (format, recipient, sender, replay, length, authentication) and changes
    nothing.
    """

    def __reduce__(self):
        raise _not_copied(self, "a session key and a replay counter")

    def __init__(self, recipient: str, keys: PartyKeys, sender: str, sender_public: bytes,
                 hello: object) -> None:
        r_id, s_id = _check_id("recipient", recipient), _check_id("sender", sender)
        keys = _check_keys("keys", keys)
        sender_public = _check_public("sender_public", sender_public)
        if not isinstance(hello, (bytes, bytearray)):
            raise invalid("hello", type(hello).__name__, "bytes")
        r = _Reader(bytes(hello))
        if r.take(4, "the magic") != MAGIC or r.byte("the version") != VERSION or r.byte(
                "the kind") != KIND_HELLO:
            raise SealError("format check failed: not a privbandit channel hello")
        got_sender, got_recipient = _read_id(r, "sender"), _read_id(r, "recipient")
        _check_parties(got_sender, got_recipient, sender, recipient)
        session = r.take(SESSION_BYTES, "the session id")
        eph_pub = r.take(KEY_BYTES, "the ephemeral key")
        if r.pos != len(r.data):
            raise SealError("length check failed: unexpected bytes after the hello")
        try:
            ikm = keys.private.exchange(X25519PublicKey.from_public_bytes(eph_pub)) + (
                keys.private.exchange(X25519PublicKey.from_public_bytes(sender_public)))
        except ValueError:  # a low-order ephemeral key gives an all-zero shared secret
            raise SealError("authentication check failed: the hello's key is invalid") from None
        self._aead, self._prefix = _channel_key(ikm, session, eph_pub, keys.public,
                                                sender_public)
        self.sender, self.recipient, self.session = sender, recipient, session
        self._head = MAGIC + bytes([VERSION, KIND_CHANNEL]) + _ids(s_id, r_id) + session
        self._next = 0

    def open(self, message: object) -> bytes:
        """The payload of the channel's next message (counters must increase)."""
        if not isinstance(message, (bytes, bytearray)):
            raise invalid("message", type(message).__name__, "bytes")
        head, n_head = self._head, len(self._head) + 12
        if not message.startswith(head):
            self._explain(message)
        counter, n = struct.unpack_from(">QI", message, len(head))
        if counter < self._next:
            raise SealError(
                f"replay check failed: counter {counter} from {self.sender!r} in session "
                f"{self.session.hex()[:16]}... is at or below one already accepted"
            )
        if len(message) != n_head + n or n < TAG_BYTES:
            raise SealError(f"length check failed: {len(message)} bytes, the header says "
                            f"{n_head + n}")
        out = bytearray(n - TAG_BYTES)
        try:
            self._aead.decrypt_into(self._prefix + struct.pack(">Q", counter),
                                    memoryview(message)[n_head:], memoryview(message)[:n_head],
                                    out)
        except InvalidTag:
            raise SealError(
                "authentication check failed: the message was tampered with or sealed "
                "with other keys"
            ) from None
        self._next = counter + 1
        return bytes(out)

    def _explain(self, message: bytes) -> None:
        """Why a message does not start with this channel's header (always raises)."""
        r = _Reader(bytes(message))
        if r.take(4, "the magic") != MAGIC:
            raise SealError("format check failed: not a privbandit sealed message (bad magic)")
        version, kind = r.byte("the version"), r.byte("the kind")
        if version != VERSION or kind != KIND_CHANNEL:
            raise SealError(f"format check failed: version {version} kind {kind} is not a "
                            f"channel message of version {VERSION}")
        _check_parties(_read_id(r, "sender"), _read_id(r, "recipient"), self.sender,
                       self.recipient)
        raise SealError("session check failed: the message belongs to another session")


def _check_parties(sender: str, recipient: str, expected_sender: str,
                   expected_recipient: str) -> None:
    if recipient != expected_recipient:
        raise SealError(f"recipient check failed: misaddressed message for {recipient!r}, "
                        f"opened by {expected_recipient!r}")
    if sender != expected_sender:
        raise SealError(f"sender check failed: {sender!r} is not a registered peer of this "
                        f"channel (its sender is {expected_sender!r})")
