"""The per-round messages of VFUCB/VFTS and their byte format.

Two messages travel every round t (seed 003, Algorithm 1 steps 4-5):

- a *request* from the active party to each passive party: "round t, K
  candidates" (the header alone);
- a *masked batch* from passive party j back to the active party: the
  K x d float64 matrix whose rows are Q^j x^j_{t,k}.

When the federation seals its traffic, these bytes are the plaintext of a
`privbandit.mechanisms.sealing.seal_message`, so the header below is authenticated too.

Format, version 1 (integers big-endian, floats little-endian IEEE 754):

    offset  size    field
    0       4       magic b"PBVF"
    4       1       version = 1
    5       1       kind: 1 = request, 2 = masked batch
    6       8       round t (uint64)
    14      2       sender's party index (uint16; 0 is the active party)
    16      4       K, the number of candidate items (uint32)
    20      4       d, the masked width (uint32; 0 in a request)
    24      8*K*d   masked batch only: the rows Q^j x^j, row-major float64
"""
from __future__ import annotations

import math
import struct
from typing import NamedTuple

import numpy as np

from ..errors import ShapeError
from .errors import ProtocolError

MAGIC = b"PBVF"
VERSION = 1
REQUEST = 1
MASKED = 2
_HEADER = struct.Struct(">4sBBQHII")
HEADER_BYTES = _HEADER.size
_KIND_NAMES = {REQUEST: "a request", MASKED: "a masked batch"}
_FLOAT = np.dtype("<f8")


class Header(NamedTuple):
    kind: int
    round: int
    sender: int
    n_items: int
    dim: int


def encode_request(round: int, sender: int, n_items: int) -> bytes:
    """The active party's request for round t's masked batches (24 bytes)."""
    return _HEADER.pack(MAGIC, VERSION, REQUEST, round, sender, n_items, 0)


def encode_masked(round: int, sender: int, masked: np.ndarray) -> bytes:
    """A passive party's masked batch (K, d) for round t."""
    k, d = masked.shape
    body = np.ascontiguousarray(masked, dtype=_FLOAT)
    # one copy: the header's bytes joined to the array's own buffer
    return _HEADER.pack(MAGIC, VERSION, MASKED, round, sender, k, d) + memoryview(body).cast("B")


def masked_buffer(round: int, sender: int, n_items: int, dim: int) -> tuple[bytearray, np.ndarray]:
    """A masked-batch message with its header written, and a (K, d) view of its body to
    fill in place (the message then needs no copy of the batch)."""
    message = bytearray(HEADER_BYTES + 8 * n_items * dim)
    _HEADER.pack_into(message, 0, MAGIC, VERSION, MASKED, round, sender, n_items, dim)
    body = np.frombuffer(message, dtype=_FLOAT, offset=HEADER_BYTES).reshape(n_items, dim)
    return message, body


def read_header(message: object) -> Header:
    """Parse and check the fixed header (magic, version, kind); nothing else."""
    if not isinstance(message, (bytes, bytearray)):
        raise ProtocolError(f"message must be bytes; got {type(message).__name__}")
    if len(message) < HEADER_BYTES:
        raise ProtocolError(
            f"message must hold a {HEADER_BYTES}-byte header; got {len(message)} bytes"
        )
    magic, version, kind, rnd, sender, k, d = _HEADER.unpack_from(message)
    if magic != MAGIC:
        raise ProtocolError(f"message must start with {MAGIC!r}; got {bytes(magic)!r}")
    if version != VERSION:
        raise ProtocolError(f"message version must be {VERSION}; got {version}")
    if kind not in _KIND_NAMES:
        raise ProtocolError(f"message kind must be one of {sorted(_KIND_NAMES)}; got {kind}")
    return Header(kind, rnd, sender, k, d)


def _expect(header: Header, kind: int, round: int, sender: int) -> None:
    if header.kind != kind:
        raise ProtocolError(
            f"expected {_KIND_NAMES[kind]}; got {_KIND_NAMES[header.kind]} "
            f"from party {header.sender}"
        )
    if header.sender != sender:
        raise ProtocolError(
            f"message on the channel of party {sender} names sender {header.sender}"
        )
    if header.round != round:
        raise ProtocolError(
            f"message from party {sender} is for round {header.round}; "
            f"expected round {round} (stale, replayed or early)"
        )


def _fields(message: object) -> tuple | None:
    """The header's fields when `message` is bytes long enough to hold one, else None."""
    if isinstance(message, (bytes, bytearray)) and len(message) >= HEADER_BYTES:
        return _HEADER.unpack_from(message)
    return None


def decode_request(message: object, *, round: int, sender: int) -> int:
    """Check a request for `round` from `sender`; return K."""
    fields = _fields(message)
    if (fields is not None and fields[:5] == (MAGIC, VERSION, REQUEST, round, sender)
            and len(message) == HEADER_BYTES):  # type: ignore[arg-type]
        return fields[5]  # the usual case, checked at once; the checks below explain a failure
    header = read_header(message)
    _expect(header, REQUEST, round, sender)
    if len(message) != HEADER_BYTES:  # type: ignore[arg-type]
        raise ProtocolError(
            f"a request must be exactly {HEADER_BYTES} bytes; got {len(message)}"  # type: ignore[arg-type]
        )
    return header.n_items


def decode_masked(
    message: object, *, round: int, sender: int, n_items: int, dim: int, finite: bool = True
) -> np.ndarray:
    """Check and read a masked batch: round, sender, shape (K, d), length, finiteness.

    `finite=False` leaves the finiteness to the caller, who must check the batch
    (or a sum it enters, where a NaN or inf shows too) and call `check_finite` on
    it when that fails: the active party checks the sum of all batches once.
    """
    fields = _fields(message)
    if (fields is not None and fields == (MAGIC, VERSION, MASKED, round, sender, n_items, dim)
            and len(message) == HEADER_BYTES + 8 * n_items * dim):  # type: ignore[arg-type]
        body = np.frombuffer(message, dtype=_FLOAT, offset=HEADER_BYTES).reshape(n_items, dim)
        if not finite or math.isfinite(body.sum()):  # a NaN or inf makes the sum non-finite
            return body
    header = read_header(message)
    _expect(header, MASKED, round, sender)
    if (header.n_items, header.dim) != (n_items, dim):
        raise ShapeError(
            f"masked batch of party {sender} in round {round} must have shape "
            f"({n_items}, {dim}); got ({header.n_items}, {header.dim})"
        )
    expected = HEADER_BYTES + 8 * n_items * dim
    if len(message) != expected:  # type: ignore[arg-type]
        raise ProtocolError(
            f"masked batch of party {sender} in round {round} must be {expected} bytes; "
            f"got {len(message)}"  # type: ignore[arg-type]
        )
    body = np.frombuffer(message, dtype=_FLOAT, offset=HEADER_BYTES).reshape(n_items, dim)
    check_finite(body, round=round, sender=sender)
    return body


def check_finite(body: np.ndarray, *, round: int, sender: int) -> None:
    """Refuse a masked batch with a NaN or infinite entry (`ProtocolError` naming its sender)."""
    if not np.isfinite(body).all():
        raise ProtocolError(
            f"masked batch of party {sender} in round {round} must be finite; "
            "got NaN or infinite entries"
        )
