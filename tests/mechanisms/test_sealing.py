"""Sealing of mask blocks and messages: exact round trip, and every refusal named."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms.errors import SealError, ShapeError
from privbandit.mechanisms.masks import OrthogonalMask
from privbandit.mechanisms.sealing import (
    MAGIC,
    VERSION,
    Opener,
    PartyKeys,
    ReplayGuard,
    Sealer,
    new_session,
    open_block,
    open_message,
    seal_block,
    seal_message,
)

GEN, ALICE, BOB = PartyKeys.generate(), PartyKeys.generate(), PartyKeys.generate()
PEERS = {"gen": GEN.public}
SESSION = bytes(range(16))


def _seal(block, counter=0, recipient="alice", recipient_public=None, **kw):
    args = dict(sender="gen", sender_keys=GEN, recipient=recipient,
                recipient_public=ALICE.public if recipient_public is None else recipient_public,
                session=SESSION, counter=counter)
    args.update(kw)
    return seal_block(block, **args)


def _open(message, guard=None, recipient="alice", keys=ALICE, peers=PEERS):
    return open_block(message, recipient=recipient, recipient_keys=keys, peers=peers,
                      guard=ReplayGuard() if guard is None else guard)


blocks = hnp.arrays(
    dtype=st.sampled_from([np.float64, np.float32, np.int64]),
    shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5),
)


@given(blocks, st.integers(0, 2**64 - 1))
def test_seal_then_open_returns_the_exact_block(block, counter):
    out = _open(_seal(block, counter=counter))
    assert out.dtype == block.dtype and out.shape == block.shape
    assert out.tobytes() == np.ascontiguousarray(block).tobytes()  # NaN-safe, bit exact


@given(st.binary(max_size=64), st.data())
def test_any_single_bit_change_is_refused(payload, data):
    message = seal_message(payload, sender="gen", sender_keys=GEN, recipient="alice",
                           recipient_public=ALICE.public, session=SESSION, counter=3)
    bit = data.draw(st.integers(0, 8 * len(message) - 1))
    flipped = bytearray(message)
    flipped[bit // 8] ^= 1 << (bit % 8)
    guard = ReplayGuard()
    with pytest.raises(SealError, match=r"check failed"):
        open_message(bytes(flipped), recipient="alice", recipient_keys=ALICE, peers=PEERS,
                     guard=guard)
    assert len(guard) == 0
    assert open_message(message, recipient="alice", recipient_keys=ALICE, peers=PEERS,
                        guard=guard) == payload


def test_every_single_bit_of_a_block_message_matters():
    message = _seal(np.arange(6.0).reshape(2, 3))
    guard = ReplayGuard()
    for bit in range(8 * len(message)):
        flipped = bytearray(message)
        flipped[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(SealError):
            _open(bytes(flipped), guard=guard)
    np.testing.assert_array_equal(_open(message, guard=guard), np.arange(6.0).reshape(2, 3))


def test_mask_blocks_reach_each_party_and_mask_identically():
    rng = np.random.default_rng(0)
    mask = OrthogonalMask.generate((3, 2, 4), rng)
    parties = [PartyKeys.generate() for _ in mask.widths]
    sealer = Sealer("generator", GEN)
    wire = [sealer.seal_block(mask.block(j), f"party-{j}", k.public)
            for j, k in enumerate(parties)]
    assert sealer.counter == 3
    x = rng.standard_normal((5, 3))
    for j, (keys, msg) in enumerate(zip(parties, wire, strict=True)):
        block = Opener(f"party-{j}", keys, {"generator": GEN.public}).open_block(msg)
        np.testing.assert_array_equal(block, mask.block(j))
    block0 = Opener("party-0", parties[0], {"generator": GEN.public}).open_block(wire[0])
    np.testing.assert_array_equal(x @ block0.T, mask.mask(0, x))


def test_wire_header_layout_is_as_documented():
    block = np.zeros((100, 20))
    m = _seal(block, counter=258)
    assert m[:4] == MAGIC and m[4] == VERSION and m[5] == 1
    assert m[6] == 3 and m[7:10] == b"gen" and m[10] == 5 and m[11:16] == b"alice"
    assert m[16:32] == SESSION and struct.unpack(">Q", m[32:40])[0] == 258
    assert m[40:72] == ALICE.public
    assert m[104:106] == bytes([1, 2]) and struct.unpack(">2I", m[106:114]) == (100, 20)
    assert struct.unpack(">I", m[114:118])[0] == 100 * 20 * 8 + 16 == len(m) - 118


def test_replayed_message_is_refused_and_fresh_ones_pass():
    opener = Opener("alice", ALICE, PEERS)
    m0, m1 = _seal(np.ones(2), counter=0), _seal(np.ones(2), counter=1)
    opener.open_block(m1)
    opener.open_block(m0)  # out of order is fine, only repeats are replays
    with pytest.raises(SealError, match=r"replay check failed: counter 1 from 'gen'"):
        opener.open_block(m1)
    other = _seal(np.ones(2), counter=1, session=new_session())
    opener.open_block(other)  # same counter, another session
    assert len(opener.guard) == 3


def test_replay_memory_is_per_opener_and_kind_is_checked():
    msg = Sealer("gen", GEN, SESSION).seal_message(b"ctx", "alice", ALICE.public)
    assert Opener("alice", ALICE, PEERS).open_message(msg) == b"ctx"
    assert Opener("alice", ALICE, PEERS).open_message(msg) == b"ctx"
    with pytest.raises(SealError, match=r"kind check failed: the message holds raw bytes, "
                                        r"expected a numeric array block"):
        _open(msg)


def _truncated():
    return _seal(np.ones((3, 3)))[:-1]


@pytest.mark.parametrize(
    "make, kwargs, match",
    [
        (lambda: _seal(np.ones(3), recipient="bob", recipient_public=BOB.public), {},
         r"recipient check failed: misaddressed message for 'bob'.*opened by 'alice'"),
        (lambda: _seal(np.ones(3), recipient_public=BOB.public), {},
         r"recipient check failed: misaddressed"),
        (lambda: _seal(np.ones(3)), {"recipient": "bob", "keys": BOB},
         r"recipient check failed: misaddressed message for 'alice'.*opened by 'bob'"),
        (lambda: _seal(np.ones(3), sender="mallory"), {},
         r"sender check failed: 'mallory' is not a registered peer"),
        (lambda: _seal(np.ones(3), sender_keys=BOB), {},
         r"authentication check failed: the message was tampered with or sealed with other"),
        (lambda: _seal(np.ones(3)), {"peers": {"gen": BOB.public}},
         r"authentication check failed"),
        (_truncated, {}, r"length check failed: message truncated inside the ciphertext"),
        (lambda: _seal(np.ones(3))[:50], {}, r"length check failed: message truncated inside "
                                            r"the recipient key"),
        (lambda: b"", {}, r"length check failed: message truncated inside the magic"),
        (lambda: _seal(np.ones(3)) + b"\x00", {}, r"length check failed: 1 unexpected bytes"),
        (lambda: b"XXXX" + _seal(np.ones(3))[4:], {}, r"format check failed: .*bad magic"),
        (lambda: MAGIC + b"\x02" + _seal(np.ones(3))[5:], {},
         r"version check failed: got version 2, this opener reads 1"),
        (lambda: MAGIC + b"\x01\x09" + _seal(np.ones(3))[6:], {},
         r"format check failed: unknown kind 9"),
        (lambda: MAGIC + b"\x01\x01\x00" + _seal(np.ones(3))[7:], {},
         r"format check failed: the sender id is empty"),
        (lambda: MAGIC + b"\x01\x01\x03\xff\xfe\xfd" + _seal(np.ones(3))[10:], {},
         r"format check failed: the sender id is not valid UTF-8"),
    ],
)
def test_refusals_name_the_failed_check_and_record_nothing(make, kwargs, match):
    guard = ReplayGuard()
    with pytest.raises(SealError, match=match):
        _open(make(), guard=guard, **kwargs)
    assert len(guard) == 0


def test_header_fields_are_authenticated():
    # Rewriting any header field in a well-formed way is still refused by the AEAD tag.
    m = bytearray(_seal(np.ones((2, 2)), counter=5))
    m[32:40] = struct.pack(">Q", 6)  # a new counter would dodge the replay memory
    with pytest.raises(SealError, match=r"authentication check failed"):
        _open(bytes(m))
    m = bytearray(_seal(np.ones((2, 2))))
    m[104] = 3  # float64 -> int64, same size
    with pytest.raises(SealError, match=r"authentication check failed"):
        _open(bytes(m))
    m = bytearray(_seal(np.ones((2, 2))))
    m[106:114] = struct.pack(">2I", 1, 4)  # reshape (2, 2) -> (1, 4)
    with pytest.raises(SealError, match=r"authentication check failed"):
        _open(bytes(m))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: _seal(np.ones(2), sender=""), InvalidParameterError,
         r"sender must be a non-empty string of at most 255 UTF-8 bytes; got ''"),
        (lambda: _seal(np.ones(2), recipient="x" * 256), InvalidParameterError,
         r"recipient must be a non-empty string"),
        (lambda: _seal(np.ones(2), session=b"short"), InvalidParameterError,
         r"session must be 16 bytes \(see new_session\(\)\); got b'short'"),
        (lambda: _seal(np.ones(2), counter=-1), InvalidParameterError,
         r"counter must be an integer in \[0, 2\*\*64\); got -1"),
        (lambda: _seal(np.ones(2), counter=2**64), InvalidParameterError, r"counter must be"),
        (lambda: _seal(np.ones(2), counter=True), InvalidParameterError, r"got True"),
        (lambda: _seal(np.ones(2), recipient_public=b"\x00" * 31), InvalidParameterError,
         r"recipient_public must be a raw X25519 public key of 32 bytes"),
        (lambda: _seal(np.ones(2), sender_keys="secret"), InvalidParameterError,
         r"sender_keys must be a PartyKeys; got 'secret'"),
        (lambda: _seal(np.ones(2, dtype=np.int32)), ShapeError,
         r"block must have dtype float64, float32 or int64; got int32"),
        (lambda: _seal(np.array(["a"])), ShapeError, r"block must have dtype"),
        (lambda: _seal(np.ones((1,) * 9)), ShapeError, r"at most 8 axes"),
        (lambda: seal_message("text", sender="gen", sender_keys=GEN, recipient="alice",
                              recipient_public=ALICE.public, session=SESSION, counter=0),
         InvalidParameterError, r"payload must be bytes; got 'str'"),
        (lambda: open_block(_seal(np.ones(2)), recipient="alice", recipient_keys=ALICE,
                            peers=PEERS, guard=None), InvalidParameterError,
         r"guard must be a ReplayGuard \(replay detection is not optional\)"),
        (lambda: _open("text"), InvalidParameterError, r"message must be bytes; got 'str'"),
        (lambda: _open(_seal(np.ones(2)), peers={"gen": b"short"}), InvalidParameterError,
         r"peers\['gen'\] must be a raw X25519 public key"),
        (lambda: Opener("alice", ALICE, ["gen"]), InvalidParameterError,
         r"peers must be a mapping of sender id -> 32-byte public key"),
        (lambda: Sealer("gen", GEN, session=b"x"), InvalidParameterError, r"session must be"),
        (lambda: PartyKeys("not a key"), InvalidParameterError,
         r"private must be an X25519PrivateKey; got 'str'"),
    ],
)
def test_bad_arguments_are_refused(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_keys_do_not_print_their_secret():
    text = repr(GEN)
    assert GEN.public.hex()[:16] in text and "private" not in text
    assert len(new_session()) == 16 and new_session() != new_session()


def test_a_failed_seal_does_not_use_up_a_counter():
    sealer = Sealer("gen", GEN, SESSION)
    with pytest.raises(InvalidParameterError, match=r"recipient_public must be"):
        sealer.seal_block(np.ones(2), "alice", b"short")
    with pytest.raises(ShapeError, match=r"block must have dtype"):
        sealer.seal_block(np.ones(2, dtype=bool), "alice", ALICE.public)
    assert sealer.counter == 0
    message = sealer.seal_message(b"x", "alice", ALICE.public)
    assert struct.unpack(">Q", message[32:40])[0] == 0 and sealer.counter == 1
