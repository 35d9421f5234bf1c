"""The secure vector sum: exact modulo m, uniform shares, the stated noise, dropouts, the
late share of a dropped party, bad input, copies.

Statistical tests run on fixed seeds (deterministic); each is a chi-square test at
false-alarm rate ALPHA = 1e-4, so a correct implementation fails one with probability
at most 1e-4 per seed tried (and, being seeded, never flickers).
"""
from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from privbandit.accounting import ZCDPAccountant, calibrate_gaussian_sigma
from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms import IntegerGrid, SecureSum, SimulatedMasks
from privbandit.mechanisms import secret_sharing as shamir
from privbandit.mechanisms.agreed_masks import AgreedMasks, pair_seed
from privbandit.mechanisms.distributed_noise import draw_shares, share_variance
from privbandit.mechanisms.errors import OutOfBoundsError, ShapeError, TooFewSurvivorsError
from privbandit.mechanisms.sealing import PartyKeys, new_session
from privbandit.mechanisms.secure_sum import SecureAggregation
from privbandit.mechanisms.tape import Tape, pair_loss, recording

ALPHA = 1e-4
DELTA = 1e-5


def agreed(parties: int) -> AgreedMasks:
    return AgreedMasks.from_keys([PartyKeys.generate() for _ in range(parties)], new_session())


def centred(x: np.ndarray, bits: int) -> np.ndarray:
    m = 1 << bits
    r = np.mod(x.astype(object), m)
    return np.array([int(v) - m if v >= m // 2 else int(v) for v in r], dtype=np.int64)


# -- the sum is exact modulo m --------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(parties=st.integers(1, 7), entries=st.integers(1, 5), bits=st.integers(3, 64),
       seed=st.integers(0, 2**32), data=st.data())
def test_the_sum_is_exact_modulo_m(parties, entries, bits, seed, data):
    n_min = data.draw(st.integers(1, parties))
    gone = data.draw(st.sets(st.integers(0, parties - 1), max_size=parties - n_min))
    alive = np.array([i not in gone for i in range(parties)])
    encoded = np.asarray(data.draw(st.lists(st.integers(-2**40, 2**40), min_size=parties * entries,
                                            max_size=parties * entries)),
                         dtype=np.int64).reshape(parties, entries)
    protocol = SecureAggregation(parties, min_survivors=n_min, share_sigma=3.5, modulus_bits=bits,
                                 masks=SimulatedMasks())
    rng = np.random.default_rng(seed)
    replay = copy.deepcopy(rng)
    out = protocol.run(encoded, rng, alive)
    noise = draw_shares(3.5, parties, entries, replay)
    want = centred((encoded + noise)[alive].astype(object).sum(axis=0), bits)
    assert np.array_equal(out.total, want)
    assert out.shares.shape == (alive.sum(), entries) and out.shares.dtype == np.uint64
    assert np.all(out.shares < np.uint64(1 << bits) if bits < 64 else True)


@pytest.mark.parametrize("bits", [9, 64])
def test_the_sum_is_exact_with_key_agreement_masks(bits):
    parties, entries = 5, 7
    protocol = SecureAggregation(parties, min_survivors=3, share_sigma=2.0, modulus_bits=bits,
                                 masks=agreed(parties))
    encoded = np.random.default_rng(1).integers(-300, 300, (parties, entries))
    for gone in ([], [1], [0, 4]):
        alive = np.isin(np.arange(parties), gone, invert=True)
        rng = np.random.default_rng(len(gone))
        noise = draw_shares(2.0, parties, entries, copy.deepcopy(rng))
        out = protocol.run(encoded, rng, alive)
        assert np.array_equal(out.total, centred((encoded + noise)[alive].sum(axis=0), bits))
    assert protocol.releases == 3


# -- one party's masked share is uniform, whatever its input --------------------------------
def top_byte(shares: np.ndarray, bits: int) -> np.ndarray:
    return (shares >> np.uint64(bits - 8)).astype(np.int64)


def assert_uniform_and_input_free(low: np.ndarray, high: np.ndarray) -> None:
    for sample in (low, high):
        counts = np.bincount(sample, minlength=256)
        assert stats.chisquare(counts).pvalue > ALPHA
    table = np.stack([np.bincount(low, minlength=256), np.bincount(high, minlength=256)])
    assert stats.chi2_contingency(table).pvalue > ALPHA


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("bits", [8, 40, 64])
def test_a_masked_share_is_uniform_to_the_aggregator(seed, bits):
    runs = 20_000  # one entry per run: entries are encoded, noised and masked independently
    mech = SecureSum(3, (runs,), sigma=1e-3, scale=2.0**-20, l2_sensitivity=1e3, min_survivors=2,
                     modulus_bits=bits, max_wrap_probability=1.0)  # 8 bits: the sum wraps
    seen = []
    for level in (0.0, 1e-2):  # party 0 sends 0 or a value far above the noise, every run
        values = np.zeros((3, runs))
        values[0] = level
        out = mech.release(values, np.random.default_rng(seed), dropped=[2])
        seen.append(top_byte(out.shares[0], bits))
    assert_uniform_and_input_free(*seen)


def test_a_masked_share_is_uniform_with_key_agreement_masks():
    runs, bits = 20_000, 64
    mech = SecureSum(4, (runs,), sigma=1e-3, scale=2.0**-20, l2_sensitivity=1e3,
                     modulus_bits=bits, masks=agreed(4))
    seen = []
    for level in (0.0, 1e-2):
        values = np.zeros((4, runs))
        values[0] = level
        seen.append(top_byte(mech.release(values, np.random.default_rng(5)).shares[0], bits))
    assert_uniform_and_input_free(*seen)


# -- the noise of the sum has the stated distribution ---------------------------------------
def summed_pmf(sigma: float, shares: int) -> tuple[np.ndarray, np.ndarray]:
    half = int(math.ceil(12 * sigma)) + 2
    k = np.arange(-half, half + 1)
    one = np.exp(-k * k / (2 * sigma * sigma))
    one /= one.sum()
    pmf = one
    for _ in range(shares - 1):
        pmf = np.convolve(pmf, one)
    return np.arange(-half * shares, half * shares + 1), pmf


@pytest.mark.parametrize("share,parties,gone", [(0.8, 3, ()), (1.3, 4, (1,)), (2.0, 2, ())])
def test_the_summed_noise_has_the_stated_pmf_and_moments(share, parties, gone):
    runs = 60_000
    alive = parties - len(gone)
    # scale 1: the decoded sum of zero vectors is the summed integer noise itself
    mech = SecureSum(parties, (runs,), sigma=share * math.sqrt(alive), scale=1.0,
                     min_survivors=alive, l2_sensitivity=1e6)
    assert mech.share_sigma == pytest.approx(share, rel=1e-12)
    out = mech.release(np.zeros((parties, runs)), np.random.default_rng(7), dropped=list(gone))
    z = out.value.astype(np.int64)
    drawn = share * (1 + parties * 2.0**-20)  # the margin `draw_shares` uses
    support, pmf = summed_pmf(drawn, alive)
    expected = pmf * runs
    keep = expected >= 5
    observed = np.array([np.count_nonzero(z == k) for k in support[keep]])
    rest_obs, rest_exp = runs - observed.sum(), runs - expected[keep].sum()
    chi = stats.chisquare(np.append(observed, rest_obs), np.append(expected[keep], rest_exp))
    assert chi.pvalue > ALPHA
    variance = alive * share_variance(share, parties)
    assert out.noise_variance == pytest.approx(variance, rel=1e-12)
    assert variance == pytest.approx(float(np.dot(support**2, pmf)), rel=1e-9)
    assert abs(z.mean()) < 5 * math.sqrt(variance / runs)
    assert abs(z.var() - variance) < 5 * variance * math.sqrt(2 / runs)


# -- dropouts --------------------------------------------------------------------------------
def test_survivors_are_summed_exactly_and_dropped_rows_ignored():
    mech = SecureSum(6, (3,), min_survivors=3, sigma=1e-9, scale=2.0**-50)
    values = np.random.default_rng(0).uniform(-0.5, 0.5, (6, 3)) / 2
    for gone in ([], [2], [0, 5, 3]):
        out = mech.release(values, np.random.default_rng(1), dropped=gone)
        keep = np.isin(np.arange(6), gone, invert=True)
        assert np.allclose(out.value, values[keep].sum(axis=0), atol=1e-7)
        assert out.survivors.tolist() == keep.tolist() and len(out.shares) == keep.sum()


@pytest.mark.parametrize("masks", [None, "agreed"])
def test_too_few_survivors_release_nothing_and_change_nothing(masks):
    mech = SecureSum(5, (2,), min_survivors=4, epsilon=1.0, delta=DELTA,
                     masks=agreed(5) if masks else None)
    rng = np.random.default_rng(3)
    state = copy.deepcopy(rng.bit_generator.state)
    with pytest.raises(TooFewSurvivorsError, match="3 of 5 parties survived, fewer than "
                       "min_survivors = 4: nothing is released"):
        mech.release(np.zeros((5, 2)), rng, dropped=[1, 3])
    assert rng.bit_generator.state == state and mech.releases == 0
    mech.release(np.zeros((5, 2)), rng, dropped=[1])
    assert mech.releases == 1


def late_share_view(masks, parties: int, gone: int, entries: int, value: int, seed: int):
    """What the aggregator can make of a dropped party's share arriving late: the share
    minus every mask of it the unmasking revealed."""
    rng = np.random.default_rng(seed)
    mask_round = masks.round(0, parties, entries, parties - 1, rng)
    alive = np.arange(parties) != gone
    known = mask_round.revealed(alive)
    assert gone not in known.self_masks and set(known.self_masks) == set(np.flatnonzero(alive))
    assert set(known.pair_masks) == {tuple(sorted((i, gone))) for i in np.flatnonzero(alive)}
    late = np.full(entries, value, dtype=np.int64).view(np.uint64) + mask_round.party_masks[gone]
    for (i, _), r in known.pair_masks.items():  # the late party's pairwise total, all of it
        late = late - r if i == gone else late + r
    return late


def unmask_from(known, alive: np.ndarray, entries: int) -> np.ndarray:
    """What the aggregator subtracts, rebuilt from the revealed masks alone."""
    total = np.zeros(entries, dtype=np.uint64)
    for p in known.self_masks.values():
        total += p
    for (i, _), r in known.pair_masks.items():
        total = total + r if alive[i] else total - r
    return total


@settings(max_examples=30, deadline=None)
@given(parties=st.integers(1, 7), seed=st.integers(0, 2**32), data=st.data())
def test_the_revealed_masks_unmask_exactly_what_the_survivors_sent(parties, seed, data):
    gone = data.draw(st.sets(st.integers(0, parties - 1), max_size=parties - 1))
    alive = np.isin(np.arange(parties), sorted(gone), invert=True)
    mask_round = SimulatedMasks().round(0, parties, 3, 1, np.random.default_rng(seed))
    own = mask_round.revealed(np.ones(parties, dtype=bool)).self_masks
    assert np.array_equal(mask_round.party_masks.sum(axis=0, dtype=np.uint64),
                          sum(own.values(), np.zeros(3, dtype=np.uint64)))  # pairwise cancel
    known = mask_round.revealed(alive)
    assert np.array_equal(unmask_from(known, alive, 3), mask_round.unmask(alive))


@pytest.mark.parametrize("scheme", ["simulated", "agreed"])
def test_a_late_share_of_a_dropped_party_stays_uniform(scheme):
    parties, entries = 4, 20_000
    masks = SimulatedMasks() if scheme == "simulated" else agreed(parties)
    seen = [top_byte(late_share_view(masks, parties, 2, entries, v, seed=9), 64)
            for v in (0, 2**62)]
    assert_uniform_and_input_free(*seen)


def test_without_its_self_mask_the_late_share_would_be_open():
    # the control for the test above: adding back the self mask the survivors never reveal
    # exposes the value, so the self mask is what keeps it hidden
    masks, parties, entries = SimulatedMasks(), 4, 8
    rng = np.random.default_rng(4)
    mask_round = masks.round(0, parties, entries, parties - 1, rng)
    alive = np.arange(parties) != 1
    late = np.full(entries, 12345, dtype=np.int64).view(np.uint64) + mask_round.party_masks[1]
    for (i, _), r in mask_round.revealed(alive).pair_masks.items():
        late = late - r if i == 1 else late + r
    own = mask_round._own[1]  # what no survivor holds
    assert np.all((late - own).view(np.int64) == 12345)


def test_self_mask_seeds_need_threshold_shares():
    secret = bytes(range(32))
    shares = shamir.split(secret, 6, 4)
    for subset in ((0, 1, 2, 3), (5, 2, 4, 0), (1, 2, 3, 4, 5)):
        assert shamir.combine({i + 1: shares[i] for i in subset}, 4) == secret
    with pytest.raises(InvalidParameterError, match="at least threshold = 4"):
        shamir.combine({1: shares[0], 2: shares[1], 3: shares[2]}, 4)


def test_pairwise_seeds_agree_between_the_pair_only():
    a, b, c = (PartyKeys.generate() for _ in range(3))
    session = new_session()
    assert pair_seed(a, b.public, session) == pair_seed(b, a.public, session)
    assert pair_seed(a, b.public, session) != pair_seed(a, c.public, session)
    assert pair_seed(a, b.public, session) != pair_seed(a, b.public, new_session())


# -- event, calibration, sensitivity --------------------------------------------------------
def test_the_event_states_shares_rounding_and_wrap():
    mech = SecureSum(8, (4,), min_survivors=6, collusion=2, epsilon=2.0, delta=DELTA,
                     modulus_bits=21)  # the fewest bits below the default 2**-40 wrap bound
    e = mech.event
    assert e.shares == 4 and e.dimension == 4 and e.rounding_slack == 2.0
    assert e.l2_sensitivity == pytest.approx(1.0 / mech.scale + 2.0, rel=1e-12)
    assert 0.0 < e.wrap_probability == mech.wrap_probability < 2.0**-40
    assert ZCDPAccountant().compose(e).epsilon(DELTA) <= 2.0
    # the central zCDP calibration's noise, carried by n_min - collusion shares
    central = calibrate_gaussian_sigma(2.0, DELTA, 1.0, accountant="zcdp")
    assert mech.sigma == pytest.approx(central, rel=1e-3)


def test_a_forced_replay_costs_at_most_the_event():
    mech = SecureSum(4, (2,), epsilon=1.0, delta=DELTA)
    zero = np.zeros((4, 2))
    canary = zero.copy()
    canary[0] = [0.6, 0.8]
    first, second = Tape(), None
    with recording(first):
        recorded = mech.release(zero, np.random.default_rng(2)).value
    second = Tape(forced=first)
    with recording(second):
        forced = mech.release(canary, np.random.default_rng(2)).value
    assert np.array_equal(forced, recorded)
    loss = pair_loss(first, second)
    assert loss.differing == 1
    assert 0.9 * mech.event.mu < loss.mu <= mech.event.mu


def test_the_grid_rounds_stochastically_within_one_step():
    grid = IntegerGrid(-3)
    x = np.array([0.0, 0.0625, -0.3, 1.125])
    draws = np.stack([grid.encode(x, np.random.default_rng(s)) for s in range(4000)])
    assert np.all(np.abs(draws - x * 8) < 1) and draws[:, 3].tolist() == [9] * 4000
    assert np.allclose(draws.mean(axis=0), x * 8, atol=0.03)
    assert grid.sensitivity(1.0, 4) == 8.0 + 2.0


# -- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,error,match", [
    ({"parties": 0}, InvalidParameterError, "parties must be an integer >= 1"),
    ({"min_survivors": 6}, InvalidParameterError, "min_survivors must be an integer in"),
    ({"collusion": 5}, InvalidParameterError, "collusion must be an integer in"),
    ({"sigma": 1.0, "epsilon": 1.0, "delta": DELTA}, InvalidParameterError, "not both"),
    ({"epsilon": None}, InvalidParameterError, "either sigma, or both epsilon and delta"),
    ({"scale": 0.3}, InvalidParameterError, "scale must be a power of two <= 1"),
    ({"scale": 4.0}, InvalidParameterError, "scale must be a power of two <= 1"),
    ({"modulus_bits": 65}, InvalidParameterError, "modulus_bits must be an integer in"),
    ({"modulus_bits": 20}, InvalidParameterError, r"modulus_bits must be >= 22 for this grid"),
    ({"clip_norm": 2.0}, InvalidParameterError, "clip_norm must be <= l2_sensitivity"),
    ({"sigma": 1e-9, "epsilon": None, "delta": None}, InvalidParameterError,
     "half a grid step per share"),
    ({"accountant": "pld"}, InvalidParameterError, "accountant must be one of 'zcdp', 'rdp'"),
    ({"masks": "crypto"}, InvalidParameterError, "masks must be SimulatedMasks"),
])
def test_bad_construction_is_refused_naming_the_value(kwargs, error, match):
    base = {"parties": 5, "shape": (3,), "epsilon": 1.0, "delta": DELTA}
    with pytest.raises(error, match=match):
        SecureSum(**{**base, **kwargs})


@pytest.mark.parametrize("values,dropped,error,match", [
    (np.zeros((4, 3)), (), ShapeError, "values must have shape"),
    (np.full((5, 3), np.nan), (), InvalidParameterError, "finite entries"),
    (np.zeros((5, 3)), (7,), InvalidParameterError, "dropped must be distinct party indices"),
    (np.zeros((5, 3)), (1, 1), InvalidParameterError, "dropped must be distinct"),
    (np.zeros((5, 3)), (True,), InvalidParameterError, "dropped must be distinct"),
    (np.zeros((5, 3)), "1", InvalidParameterError, "dropped must be distinct"),
    (np.full((5, 3), 1.0), (), OutOfBoundsError, "L2 norm <= clip_norm = 1 per party"),
])
def test_bad_release_input_is_refused_and_changes_nothing(values, dropped, error, match):
    mech = SecureSum(5, (3,), min_survivors=3, epsilon=1.0, delta=DELTA, on_excess="reject")
    with pytest.raises(error, match=match):
        mech.release(values, np.random.default_rng(0), dropped=dropped)
    assert mech.releases == 0
    with pytest.raises(InvalidParameterError, match="rng must be a numpy.random.Generator"):
        mech.release(np.zeros((5, 3)), 0)


# -- copies ------------------------------------------------------------------------------------
@pytest.mark.parametrize("masks", [None, "agreed"])
def test_copies_release_what_the_original_releases(masks):
    mech = SecureSum(3, (4,), epsilon=1.0, delta=DELTA, masks=agreed(3) if masks else None)
    values = np.full((3, 4), 0.1)
    for twin in (pickle.loads(pickle.dumps(mech)), copy.deepcopy(mech)):
        a = mech.release(values, np.random.default_rng(8))
        b = twin.release(values, np.random.default_rng(8))
        assert np.array_equal(a.value, b.value)
    for obj in (IntegerGrid(-7), SimulatedMasks(), agreed(2)):
        assert type(pickle.loads(pickle.dumps(obj))) is type(obj)
        assert repr(copy.deepcopy(obj)) == repr(obj)


def test_the_replay_reads_every_masked_share_and_catches_an_unmasked_one():
    """The tape holds the aggregator's whole view (the sum, each survivor's masked share);
    masked shares cost nothing beyond the sum, one party's unmasked share costs its own
    noise share: n_min - t = 4 times the honest mu**2."""
    from privbandit.audits.broken import UnmaskedShare

    losses = {}
    for name, masks in (("masked", None), ("unmasked", UnmaskedShare(0))):
        mech = SecureSum(4, (2,), epsilon=1.0, delta=DELTA, masks=masks)
        canary = np.zeros((4, 2))
        canary[0] = [0.6, 0.8]
        first, second = Tape(), Tape()
        with recording(first):
            mech.release(np.zeros((4, 2)), np.random.default_rng(2))
        second.forced = first
        with recording(second):
            mech.release(canary, np.random.default_rng(2))
        view = first.entries[0].view
        assert view.shares.shape == (4, 2) and view.shares.dtype == np.uint64
        assert view.hidden.tolist() == [name == "masked", True, True, True]
        losses[name] = pair_loss(first, second).mu
    assert losses["masked"] <= mech.event.mu
    assert losses["unmasked"] > 1.9 * losses["masked"]
