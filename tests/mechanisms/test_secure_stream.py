"""Continual release over secure sums: the prefix, its noise (against the dense references of
the central streams), the events, dropouts, forced replays, bad input, copies."""
from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting import (
    FactorizationEvent,
    SecureSumEvent,
    TreeAggregationEvent,
    ZCDPAccountant,
    calibrate_gaussian_sigma,
    tree_nodes_per_record,
)
from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms import SecureFactorization, SecureTree, secure_continual_release
from privbandit.mechanisms.agreed_masks import AgreedMasks
from privbandit.mechanisms.errors import HorizonExceededError, ShapeError, TooFewSurvivorsError
from privbandit.mechanisms.factorization import column_sensitivity
from privbandit.mechanisms.sealing import PartyKeys, new_session
from privbandit.mechanisms.tape import Tape, pair_loss, recording
from privbandit.mechanisms.tree import float_sensitivity_factor

from .continual_reference import (
    assert_covariance,
    blt_coefficients,
    mf_noise_map,
    toeplitz,
    tree_noise_map,
)

KINDS = ("tree", "mf")
DELTA = 1e-5


def exact(kind: str, parties: int, dim: int, horizon: int, **kw):
    """A stream whose noise is far below the tolerance (1e-9 of the values, 2**-50 grid)."""
    return secure_continual_release(kind, parties, (dim,), horizon, sigma=1e-9, scale=2.0**-50,
                                    **kw)


def noise_map(stream) -> np.ndarray:
    if stream.kind == "tree":
        return tree_noise_map(stream.horizon)
    return mf_noise_map(stream.factor.theta, stream.factor.omega, stream.horizon)


@settings(max_examples=15, deadline=None)
@given(kind=st.sampled_from(KINDS), parties=st.integers(1, 6), dim=st.integers(1, 4),
       horizon=st.integers(1, 24), seed=st.integers(0, 2**32 - 1))
def test_the_prefix_is_the_sum_over_parties_and_steps(kind, parties, dim, horizon, seed):
    rng = np.random.default_rng(seed)
    stream = exact(kind, parties, dim, horizon)
    x = rng.uniform(-1, 1, (horizon, parties, dim)) / (2 * math.sqrt(dim))
    for t in range(horizon):
        out = stream.add(x[t], rng)
        assert np.allclose(out.value, x[: t + 1].sum(axis=(0, 1)), atol=1e-7)
        assert out.shares.shape == (parties, dim) and out.survivors.all()
    assert stream.steps == horizon and stream.clipped == 0


@pytest.mark.parametrize("kind", KINDS)
def test_prefix_noise_has_the_central_streams_covariance(kind):
    horizon, runs = 12, 6000  # runs: independent entries of one stream
    stream = secure_continual_release(kind, 4, (runs,), horizon, sigma=2.0, scale=2.0**-12,
                                      l2_sensitivity=1e3)
    rng = np.random.default_rng(11)
    outs = np.array([stream.add(np.zeros((4, runs)), rng).value for _ in range(horizon)])
    g = noise_map(stream)
    unit = stream.prefix_variance(1) / (g[0] @ g[0])  # one release's summed noise, all parties
    assert unit == pytest.approx(stream.sigma**2, rel=1e-4)  # every party survives: n_min = n
    expected = unit * g @ g.T
    np.testing.assert_allclose(np.diag(expected),
                               [stream.prefix_variance(t) for t in range(1, horizon + 1)],
                               rtol=1e-9)
    assert_covariance(outs, expected)


@pytest.mark.parametrize("kind", KINDS)
def test_one_stream_of_noise_the_central_calibration_split_over_survivors(kind):
    stream = secure_continual_release(kind, 6, (5,), 256, min_survivors=5, epsilon=1.0,
                                      delta=DELTA)
    assert ZCDPAccountant().compose(stream.event).epsilon(DELTA) <= 1.0 * (1 + 1e-9)
    if kind == "tree":
        sens = float_sensitivity_factor(256, 5)
        central = calibrate_gaussian_sigma(1.0, DELTA, sens, nodes_per_record=9,
                                           accountant="zcdp")
        assert isinstance(stream.event, TreeAggregationEvent)
        assert stream.event.nodes_per_record == tree_nodes_per_record(256) == 9
        assert stream.event.node_event.dimension == 5
    else:
        sens = (1 + 2**-53 * 9 / (1 - 2**-53 * 9)) * column_sensitivity(stream.factor, 256, 1)
        central = calibrate_gaussian_sigma(1.0, DELTA, sens, accountant="zcdp")
        assert isinstance(stream.event, FactorizationEvent)
        assert stream.event.release_event.dimension == 256 * 5
    release = stream.release_event
    assert isinstance(release, SecureSumEvent) and release.shares == 5
    assert release.rounding_slack == pytest.approx(math.sqrt(release.dimension))
    # the rounding costs at most 1e-4 of the sensitivity on the default grid
    assert central <= stream.sigma <= central * (1 + 1.1e-4)


@pytest.mark.parametrize("kind", KINDS)
def test_user_level_event_scales_the_value_sensitivity_not_the_rounding(kind):
    stream = secure_continual_release(kind, 3, (4,), 16, epsilon=1.0, delta=DELTA)
    one = stream.release_event
    k3 = stream.user_level_event(3)
    three = k3.node_event if kind == "tree" else k3.release_event
    slack = one.rounding_slack
    assert three.l2_sensitivity - slack == pytest.approx(3 * (one.l2_sensitivity - slack))


# -- dropouts --------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_too_few_survivors_refuse_the_step_and_change_nothing(kind):
    stream = secure_continual_release(kind, 4, (2,), 8, min_survivors=3, epsilon=1.0,
                                      delta=DELTA)
    rng = np.random.default_rng(0)
    stream.add(np.full((4, 2), 0.1), rng)
    before = [a.copy() for a in stream._state_arrays()]
    state = copy.deepcopy(rng.bit_generator.state)
    with pytest.raises(TooFewSurvivorsError, match="2 of 4 parties survived"):
        stream.add(np.full((4, 2), 0.1), rng, dropped=[0, 2])
    assert stream.steps == 1 and rng.bit_generator.state == state
    assert all(np.array_equal(a, b) for a, b in zip(before, stream._state_arrays(), strict=True))
    assert stream.add(np.full((4, 2), 0.1), rng, dropped=[2]).survivors.tolist() == [
        True, True, False, True]


def test_a_tree_node_missed_by_a_dropout_is_covered_by_the_next_higher_node():
    rng = np.random.default_rng(1)
    stream = exact("tree", 3, 2, 8, min_survivors=2)
    x = rng.uniform(-0.3, 0.3, (8, 3, 2))
    first = stream.add(x[0], rng, dropped=[1]).value
    assert np.allclose(first, x[0, [0, 2]].sum(axis=0), atol=1e-7)  # the node (0, 1] lacks it
    second = stream.add(x[1], rng).value  # the node (0, 2] holds party 1's step 1 again
    assert np.allclose(second, x[:2].sum(axis=(0, 1)), atol=1e-7)


def test_a_missed_mf_release_enters_later_prefixes_through_b():
    rng = np.random.default_rng(2)
    horizon, gone_at = 10, 3
    stream = exact("mf", 3, 2, horizon, min_survivors=2)
    x = rng.uniform(-0.3, 0.3, (horizon, 3, 2))
    outs = [stream.add(x[t], rng, dropped=[1] if t == gone_at else ()).value
            for t in range(horizon)]
    f = stream.factor
    c = toeplitz(blt_coefficients(f.theta, f.omega, horizon))
    missed = (c @ x[:, 1])[gone_at]  # party 1's (C x_1)_t at the step it dropped
    b = mf_noise_map(f.theta, f.omega, horizon)[:, 0]  # b_0, b_1, ...
    for t in range(horizon):
        want = x[: t + 1].sum(axis=(0, 1)) - (b[t - gone_at] * missed if t >= gone_at else 0)
        assert np.allclose(outs[t], want, atol=1e-6)


def test_key_agreement_masks_run_the_stream():
    keys = [PartyKeys.generate() for _ in range(4)]
    stream = exact("tree", 4, 3, 4, min_survivors=3,
                   masks=AgreedMasks.from_keys(keys, new_session()))
    rng = np.random.default_rng(3)
    x = rng.uniform(-0.2, 0.2, (4, 4, 3))
    for t in range(4):
        out = stream.add(x[t], rng, dropped=[t % 4] if t == 3 else ())
    # step 4 releases the node (0, 4] without party 3: its whole interval is missing
    assert np.allclose(out.value, x.sum(axis=(0, 1)) - x[:, 3].sum(axis=0), atol=1e-7)


# -- forced replay ------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_a_forced_replay_costs_at_most_the_stream_event(kind):
    horizon = 8
    first, second = Tape(), None
    streams = []
    for forced, canary in ((None, 0.0), ("first", 1.0)):
        stream = secure_continual_release(kind, 3, (2,), horizon, epsilon=2.0, delta=DELTA)
        streams.append(stream)
        tape = Tape(forced=first) if forced else first
        x = np.zeros((horizon, 3, 2))
        x[0, 0] = [0.6 * canary, 0.8 * canary]  # party 0's first increment: every node above
        with recording(tape):
            for t in range(horizon):
                stream.add(x[t], np.random.default_rng(t))
        second = tape
    loss = pair_loss(first, second)
    event = streams[0].release_event
    nodes = streams[0].nodes_per_record
    assert loss.differing >= 1
    assert loss.mu <= event.mu * math.sqrt(nodes) * (1 + 1e-9)
    assert loss.epsilon(DELTA) <= ZCDPAccountant().compose(streams[0].event).epsilon(DELTA)


# -- bad input, records, copies ----------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_bad_steps_are_refused_and_change_nothing(kind):
    stream = secure_continual_release(kind, 3, (2,), 2, epsilon=1.0, delta=DELTA)
    rng = np.random.default_rng(0)
    with pytest.raises(ShapeError, match="increments must have shape"):
        stream.add(np.zeros((2, 2)), rng)
    with pytest.raises(InvalidParameterError, match="dropped must be distinct party indices"):
        stream.add(np.zeros((3, 2)), rng, dropped=[3])
    with pytest.raises(InvalidParameterError, match="records must be between 1 and"):
        stream.add_records(np.zeros((3, 2, 2)), rng)
    assert stream.steps == 0
    stream.add(np.zeros((3, 2)), rng)
    stream.add_records(np.zeros((3, 1, 2)), rng)
    with pytest.raises(HorizonExceededError, match="horizon is 2 releases"):
        stream.add(np.zeros((3, 2)), rng)


def test_the_factory_refuses_unknown_names_and_options():
    with pytest.raises(InvalidParameterError, match="mechanism must be one of 'tree', 'mf'"):
        secure_continual_release("honaker", 3, (2,), 4, epsilon=1.0, delta=DELTA)
    with pytest.raises(InvalidParameterError, match="options must be an option of 'tree'"):
        secure_continual_release("tree", 3, (2,), 4, epsilon=1.0, delta=DELTA, buffers=4)
    assert isinstance(secure_continual_release("mf", 3, (2,), 4, epsilon=1.0, delta=DELTA,
                                               buffers=4), SecureFactorization)


@pytest.mark.parametrize("kind", KINDS)
def test_records_are_clipped_one_by_one_and_summed_per_party(kind):
    a = exact(kind, 2, 2, 3, records_per_step=3)
    b = exact(kind, 2, 2, 3, records_per_step=3)
    records = np.array([[[3.0, 4.0], [0.1, 0.0], [0.0, 0.2]], [[0.0, 0.5]] * 3])
    out = a.add_records(records, np.random.default_rng(0)).value
    assert np.allclose(out, [0.6 + 0.1, 0.8 + 0.2 + 1.5], atol=1e-7) and a.clipped == 1
    # the same per-party sums given to `add` are one record each, of norm > 1: clipped
    same = b.add(np.array([[0.7, 1.0], [0.0, 1.5]]), np.random.default_rng(0))
    assert b.clipped == 2 and not np.allclose(same.value, out)


@pytest.mark.parametrize("kind", KINDS)
def test_copies_continue_the_stream_identically(kind):
    stream = secure_continual_release(kind, 3, (2,), 6, epsilon=1.0, delta=DELTA)
    rng = np.random.default_rng(4)
    stream.add(np.full((3, 2), 0.2), rng)
    for clone in (lambda s: pickle.loads(pickle.dumps(s)), copy.deepcopy):
        twin = clone(stream)
        a = stream.add(np.full((3, 2), 0.1), np.random.default_rng(5)).value
        b = twin.add(np.full((3, 2), 0.1), np.random.default_rng(5)).value
        assert np.array_equal(a, b) and twin.steps == stream.steps
    assert isinstance(SecureTree(2, (1,), 2, epsilon=1.0, delta=DELTA).event,
                      TreeAggregationEvent)
