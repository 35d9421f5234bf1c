"""The per-round byte format: round trips, and every malformed message refused by name."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from privbandit.errors import ShapeError
from privbandit.vertical import wire
from privbandit.vertical.errors import ProtocolError

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


@given(
    st.integers(0, 2**40), st.integers(1, 50),
    st.tuples(st.integers(1, 6), st.integers(1, 6)).flatmap(
        lambda shape: arrays(np.float64, shape, elements=finite)
    ),
)
def test_masked_batch_round_trips_bit_for_bit(round, sender, batch):
    message = wire.encode_masked(round, sender, batch)
    assert len(message) == wire.HEADER_BYTES + 8 * batch.size
    back = wire.decode_masked(message, round=round, sender=sender, n_items=batch.shape[0],
                              dim=batch.shape[1])
    np.testing.assert_array_equal(back, batch)


@given(st.integers(0, 2**40), st.integers(1, 10**6))
def test_request_round_trips(round, n_items):
    message = wire.encode_request(round, 0, n_items)
    assert len(message) == wire.HEADER_BYTES
    assert wire.decode_request(message, round=round, sender=0) == n_items


def _masked(round=3, sender=2, shape=(4, 5)):
    return wire.encode_masked(round, sender, np.ones(shape))


def _patched(message: bytes, offset: int, fmt: str, value) -> bytes:
    out = bytearray(message)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


@pytest.mark.parametrize(
    "message, match",
    [
        ("not bytes", "message must be bytes; got str"),
        (b"PBVF", "message must hold a 24-byte header; got 4 bytes"),
        (b"XXXX" + _masked()[4:], r"message must start with b'PBVF'; got b'XXXX'"),
        (_patched(_masked(), 4, ">B", 9), "message version must be 1; got 9"),
        (_patched(_masked(), 5, ">B", 7), r"message kind must be one of \[1, 2\]; got 7"),
        (wire.encode_request(3, 0, 4), "expected a masked batch; got a request from party 0"),
        (_masked(round=2), "is for round 2; expected round 3"),
        (_masked(sender=1), "channel of party 2 names sender 1"),
        (_masked()[:-8], "must be 184 bytes; got 176"),
        (_masked() + b"\0" * 8, "must be 184 bytes; got 192"),
        (wire.encode_masked(3, 2, np.full((4, 5), np.nan)), "must be finite"),
    ],
)
def test_malformed_masked_batches_are_refused(message, match):
    with pytest.raises(ProtocolError, match=match):
        wire.decode_masked(message, round=3, sender=2, n_items=4, dim=5)


@pytest.mark.parametrize("shape", [(3, 5), (4, 6), (5, 4)])
def test_a_batch_of_the_wrong_shape_is_a_shape_error_naming_party_and_round(shape):
    with pytest.raises(ShapeError, match=rf"party 2 in round 3 must have shape \(4, 5\); "
                                         rf"got \({shape[0]}, {shape[1]}\)"):
        wire.decode_masked(_masked(shape=shape), round=3, sender=2, n_items=4, dim=5)


@pytest.mark.parametrize(
    "message, match",
    [
        (_masked(), "expected a request; got a masked batch"),
        (wire.encode_request(2, 0, 4), "is for round 2; expected round 3"),
        (wire.encode_request(3, 0, 4) + b"\0", "a request must be exactly 24 bytes; got 25"),
    ],
)
def test_malformed_requests_are_refused(message, match):
    with pytest.raises(ProtocolError, match=match):
        wire.decode_request(message, round=3, sender=0)
