"""Bad input to the protocol: named errors, and a refused round leaves no trace."""
from __future__ import annotations

import numpy as np
import pytest

from privbandit.envs.base import Round
from privbandit.errors import ConfigError, ShapeError
from privbandit.mechanisms.errors import SealError
from privbandit.mechanisms.sealing import ChannelSender
from privbandit.policies import LinUCB
from privbandit.runtime import seed_streams
from privbandit.vertical import VerticalFederation, wire
from privbandit.vertical.errors import ProtocolError
from privbandit.vertical.roles import ACTIVE, MaskGenerator, PassiveParty
from privbandit.vertical.ties import TieTolerant

from .runs import mask_stream

WIDTHS = (4, 3, 3)
BAD_ROUND = 3


class Faulty:
    """A transport that rewrites one message (sender -> recipient) at one round."""

    def __init__(self, sender, recipient, rewrite, round=BAD_ROUND):
        self.sender, self.recipient, self.rewrite, self.round = sender, recipient, rewrite, round
        self.federation = None
        self.armed = True
        self.seen = {}

    def __call__(self, sender, recipient, message):
        t = None if self.federation is None else self.federation.round
        self.seen[(sender, recipient, t)] = message
        if self.armed and (sender, recipient) == (self.sender, self.recipient) and t == self.round:
            return self.rewrite(self, message)
        return message


def _federation(seal=True, transport=None):
    fed = VerticalFederation(WIDTHS, TieTolerant(LinUCB(10, beta=0.5)), rng=mask_stream(4),
                             seal_traffic=seal, transport=transport)
    if transport is not None:
        transport.federation = fed
    return fed


def _snapshot(fed):
    models = fed.policy.policy.models
    arrays = [a.copy() for a in (models.inv, models.b, models.theta, models.logdet,
                                 models.count)]
    return fed.round, fed.comm_summary(), arrays


def _assert_same(before, after):
    assert before[0] == after[0] and before[1] == after[1]
    for a, b in zip(before[2], after[2], strict=True):
        np.testing.assert_array_equal(a, b)


def _play(fed, split, horizon, streams, upto=None):
    """Play rounds until `upto` (returns its Round undecided) or the horizon."""
    for t in range(horizon):
        rnd = split.observe(t)
        if t == upto:
            return rnd
        pending = fed.decide(rnd, streams["policy"])
        fed.commit(pending, split.act(t, pending.action).feedback)
    return None


def _sealed_by(party, payload, recipient=ACTIVE, recipient_public=None, fed=None):
    if recipient == ACTIVE:  # on the party's own session channel to the active party
        return party._channel.seal(payload)
    return ChannelSender(party.name, party.keys, recipient, recipient_public).seal(payload)


def _flip_last_bit(_, message):
    return message[:-1] + bytes([message[-1] ^ 1])


def _misaddressed(faulty, message):
    fed = faulty.federation
    payload = wire.encode_masked(BAD_ROUND, 2, np.zeros((8, 10)))
    return _sealed_by(fed.passive[1], payload, "passive-1", fed.passive[0].public)


def _from_other_party(faulty, message):
    fed = faulty.federation
    payload = wire.encode_masked(BAD_ROUND, 2, np.zeros((8, 10)))
    return _sealed_by(fed.passive[0], payload, fed=fed)


def _wrong_shape(shape):
    def rewrite(faulty, message):
        fed = faulty.federation
        return _sealed_by(fed.passive[1], wire.encode_masked(BAD_ROUND, 2, np.zeros(shape)),
                          fed=fed)
    return rewrite


def _replayed(faulty, message):
    return faulty.seen[("passive-2", ACTIVE, BAD_ROUND - 1)]


def _unsealed(faulty, message):
    return wire.encode_masked(BAD_ROUND, 2, np.zeros((8, 10)))


CASES = [
    (_flip_last_bit, SealError, "authentication check failed: the message was tampered"),
    (_misaddressed, SealError, "recipient check failed: misaddressed message for 'passive-1'"),
    (_from_other_party, SealError, "sender check failed: 'passive-1' is not a registered peer"),
    (_wrong_shape((7, 10)), ShapeError,
     r"masked batch of party 2 in round 3 must have shape \(8, 10\); got \(7, 10\)"),
    (_wrong_shape((8, 11)), ShapeError, r"must have shape \(8, 10\); got \(8, 11\)"),
    (_replayed, SealError, "replay check failed: counter 2 from 'passive-2'"),
    (_unsealed, SealError, "format check failed: not a privbandit sealed message"),
]


@pytest.mark.parametrize("rewrite, error, match", CASES)
def test_a_bad_reply_is_refused_by_name_and_the_round_is_not_half_applied(
    split_world, rewrite, error, match
):
    faulty = Faulty("passive-2", ACTIVE, rewrite)
    fed = _federation(transport=faulty)
    streams = seed_streams(8)
    split_world.reset(streams["rounds"])
    rnd = _play(fed, split_world, 10, streams, upto=BAD_ROUND)
    before = _snapshot(fed)
    with pytest.raises(error, match=match):
        fed.decide(rnd, streams["policy"])
    _assert_same(before, _snapshot(fed))
    # the passive parties resend; the round then completes as if nothing had happened
    faulty.armed = False
    pending = fed.decide(rnd, streams["policy"])
    fed.commit(pending, split_world.act(BAD_ROUND, pending.action).feedback)
    for t in range(BAD_ROUND + 1, 10):
        pending = fed.decide(split_world.observe(t), streams["policy"])
        fed.commit(pending, split_world.act(t, pending.action).feedback)
    clean = _federation()
    clean_streams = seed_streams(8)
    split_world.reset(clean_streams["rounds"])
    _play(clean, split_world, 10, clean_streams)
    np.testing.assert_array_equal(fed.policy.policy.models.theta, clean.policy.policy.models.theta)
    assert fed.comm_summary()["messages_by_party"] == clean.comm_summary()["messages_by_party"]


@pytest.mark.parametrize(
    "rewrite, error, match",
    [
        (lambda f, m: wire.encode_masked(BAD_ROUND, 2, np.zeros((8, 9))), ShapeError,
         r"party 2 in round 3 must have shape \(8, 10\); got \(8, 9\)"),
        (lambda f, m: b"JUNK" + m[4:], ProtocolError, "must start with b'PBVF'"),
        (lambda f, m: m[:-1], ProtocolError, "must be 664 bytes; got 663"),
        (lambda f, m: wire.encode_masked(BAD_ROUND, 2, np.full((8, 10), np.nan)), ProtocolError,
         "masked batch of party 2 in round 3 must be finite"),
        (lambda f, m: wire.encode_masked(BAD_ROUND, 2, np.where(np.eye(8, 10) > 0, np.inf, 0.0)),
         ProtocolError, "masked batch of party 2 in round 3 must be finite"),
    ],
)
def test_plain_traffic_is_checked_too(split_world, rewrite, error, match):
    fed = _federation(seal=False, transport=Faulty("passive-2", ACTIVE, rewrite))
    streams = seed_streams(8)
    split_world.reset(streams["rounds"])
    rnd = _play(fed, split_world, 10, streams, upto=BAD_ROUND)
    before = _snapshot(fed)
    with pytest.raises(error, match=match):
        fed.decide(rnd, streams["policy"])
    _assert_same(before, _snapshot(fed))


def test_a_mask_block_sealed_for_another_party_is_refused_at_setup():
    swap = {}

    def misroute(sender, recipient, message):
        swap[recipient] = message
        if recipient == "passive-2":
            return swap["passive-1"]
        return message

    with pytest.raises(SealError, match="recipient check failed: misaddressed message for "
                                        "'passive-1'.*opened by 'passive-2'"):
        _federation(transport=misroute)


def test_a_tampered_mask_block_is_refused_at_setup():
    def tamper(sender, recipient, message):
        return _flip_last_bit(None, message) if recipient == "passive-1" else message

    with pytest.raises(SealError, match="authentication check failed"):
        _federation(transport=tamper)


def test_a_party_given_features_of_the_wrong_width_refuses_them(split_world):
    fed = _federation()
    split_world.reset(np.random.default_rng(1))
    rnd = split_world.observe(0)
    bad = Round(0, 0, (rnd.items[0], rnd.items[1][:, :2], rnd.items[2]))
    with pytest.raises(ShapeError, match=r"features of passive-1 must have shape \(8, 3\); "
                                         r"got \(8, 2\)"):
        fed.decide(bad, np.random.default_rng(0))
    # the only uploads are the setup's channel hellos, one per passive party
    assert fed.round == 0 and fed.comm_summary()["messages_by_direction"]["upload"] == 2


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: VerticalFederation((4, 3, 3), LinUCB(9), rng=np.random.default_rng(0)),
         ConfigError, "policy must be a linear Policy of dimension d=10"),
        (lambda: VerticalFederation((10,), LinUCB(10), rng=np.random.default_rng(0)),
         ConfigError, r"widths must be at least two parties' widths; got \(10,\)"),
        (lambda: VerticalFederation((4, 0, 6), LinUCB(10), rng=np.random.default_rng(0)),
         ConfigError, r"widths must be a non-empty sequence of integers >= 1; got \(4, 0, 6\)"),
        (lambda: VerticalFederation((4, 6), LinUCB(10), rng=1), ConfigError,
         "rng must be a numpy.random.Generator; got 1"),
        (lambda: VerticalFederation((4, 6), LinUCB(10), rng=np.random.default_rng(0),
                                    seal_traffic="yes"), ConfigError,
         "seal_traffic must be True or False; got 'yes'"),
        (lambda: MaskGenerator().distribute((4, 6), [b"k" * 32], np.random.default_rng(0)),
         ConfigError, "publics must be 2 public keys, one a party; got 1"),
        (lambda: PassiveParty(0, 3, 10), ConfigError, "index must be an integer >= 1"),
        (lambda: PassiveParty(1, 11, 10), ConfigError,
         "width must be at most the masked dimension d=10; got 11"),
        (lambda: PassiveParty(1, 3, 10, keys="secret"), ConfigError,
         "keys must be None or a PartyKeys; got 'secret'"),
    ],
)
def test_bad_construction_is_refused_by_name(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_a_missing_reply_is_refused(split_world):
    fed = _federation(seal=False)
    split_world.reset(np.random.default_rng(1))
    own = split_world.observe(0).items[0]
    with pytest.raises(ProtocolError, match="round 0 needs one reply from each of the 2 passive "
                                            "parties; got 1"):
        fed.active.combine(own, [b""])


def test_rounds_are_played_in_order_and_committed_once(split_world):
    fed = _federation(seal=False)
    split_world.reset(np.random.default_rng(1))
    rnd0 = split_world.observe(0)
    pending = fed.decide(rnd0, np.random.default_rng(0))
    with pytest.raises(ProtocolError, match="the federation plays round 0 next; got round 1"):
        fed.decide(Round(1, 0, rnd0.items), np.random.default_rng(0))
    fed.commit(pending, 0.5)
    with pytest.raises(ProtocolError, match="commit needs the pending round 1 from decide; got 0"):
        fed.commit(pending, 0.5)
    with pytest.raises(ProtocolError, match="passive-1 already holds its mask block"):
        fed.passive[0].receive_mask(b"", fed.generator.public)
    assert fed.round == 1
