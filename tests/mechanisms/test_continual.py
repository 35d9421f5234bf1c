"""The continual-release interface: tree, Honaker and matrix factorization, by name.

Prefix noise against independent dense references (exact structure with a
recording sampler, and empirical covariances within sampling error), the
sensitivity the factor implies, calibration round trips, memory, refusals.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting import (
    ExactGaussianAccountant,
    FactorizationEvent,
    Ledger,
    PLDAccountant,
    TreeAggregationEvent,
)
from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms import (
    CONTINUAL_MECHANISMS,
    HonakerTree,
    MatrixFactorization,
    TreePrivatizer,
    continual_release,
)
from privbandit.mechanisms.errors import HorizonExceededError, OutOfBoundsError, ShapeError
from privbandit.mechanisms.noise_bounds import psd_shift, symmetric_noise_norm_bound
from privbandit.mechanisms.samplers import EXACT, FAST, GRID
from privbandit.mechanisms.tree import psd_bound

from .continual_reference import (
    RecordingSampler,
    assert_covariance,
    blt_coefficients,
    honaker_noise_map,
    mf_noise_map,
    toeplitz,
    tree_noise_map,
)

KINDS = sorted(CONTINUAL_MECHANISMS)


def noise_map(mech) -> np.ndarray:
    """The reference G (prefix noise = G z) for `mech`'s structure and horizon."""
    if isinstance(mech, MatrixFactorization):
        return mf_noise_map(mech.factor.theta, mech.factor.omega, mech.horizon)
    if isinstance(mech, HonakerTree):
        return honaker_noise_map(mech.horizon)
    return tree_noise_map(mech.horizon)


# -- structure: prefix = true prefix + G z, exactly ---------------------------------------
@settings(max_examples=20)
@given(kind=st.sampled_from(KINDS), seed=st.integers(0, 2**32 - 1), horizon=st.integers(1, 40),
       shape=st.sampled_from([(), (3,), (2, 2)]))
def test_prefix_is_true_sum_plus_the_reference_noise_combination(kind, seed, horizon, shape):
    rng = np.random.default_rng(seed)
    sampler = RecordingSampler()
    mech = continual_release(kind, shape, horizon, sigma=0.7, l2_sensitivity=100.0,
                             sampler=sampler)
    g = noise_map(mech)
    stream = rng.uniform(-1, 1, size=(horizon, *shape))
    for t in range(1, horizon + 1):
        out = mech.add(stream[t - 1], rng)
        draws = np.array(sampler.log)
        expected = stream[:t].sum(axis=0) + np.tensordot(g[t - 1, : len(draws)], draws, axes=1)
        assert out.shape == shape and out.dtype == np.float64
        np.testing.assert_allclose(out, expected, rtol=0, atol=1e-9 * t)
    assert len(sampler.log) == g.shape[1]  # every draw the reference expects, no more


@pytest.mark.parametrize("kind", KINDS)
def test_prefix_variance_is_the_reference_row_norm(kind):
    mech = continual_release(kind, (), 45, sigma=1.3, sampler=FAST)
    g = noise_map(mech)
    variances = 1.3**2 * np.sum(g * g, axis=1)
    np.testing.assert_allclose([mech.prefix_variance(t) for t in range(1, 46)], variances,
                               rtol=1e-9)
    assert mech.max_prefix_variance() == pytest.approx(variances.max(), rel=1e-9)


def test_honaker_is_the_best_linear_estimate_and_beats_the_tree():
    honaker = continual_release("honaker", (), 63, sigma=1.0, sampler=FAST)
    tree = continual_release("tree", (), 63, sigma=1.0, sampler=FAST)
    for t in range(1, 64):
        assert honaker.prefix_variance(t) <= tree.prefix_variance(t) + 1e-12
    # v_i = 1, 2/3, 4/7, ... falls to 1/2: the all-ones prefix 63 costs 0.63 of the tree's
    assert honaker.max_prefix_variance() / tree.max_prefix_variance() == pytest.approx(
        (1 + 2 / 3 + 4 / 7 + 8 / 15 + 16 / 31 + 32 / 63) / 6)
    assert honaker.prefix_variance(1) == tree.prefix_variance(1) == 1.0


# -- the covariance of the prefix noise, empirically -----------------------------------
@settings(max_examples=12)
@given(kind=st.sampled_from(KINDS), seed=st.integers(0, 2**32 - 1), horizon=st.integers(2, 20),
       sigma=st.floats(0.2, 5.0), symmetric=st.booleans())
def test_empirical_prefix_covariance_matches_the_computed_one(kind, seed, horizon, sigma,
                                                             symmetric):
    rng = np.random.default_rng(seed)
    shape = (120, 120) if symmetric else (8000,)
    mech = continual_release(kind, shape, horizon, sigma=sigma, symmetric=symmetric,
                             sampler=FAST)
    outs = np.array([mech.add(np.zeros(shape), rng) for _ in range(horizon)])
    g = noise_map(mech)
    expected = sigma**2 * g @ g.T
    np.testing.assert_allclose(np.diag(expected),
                               [mech.prefix_variance(t) for t in range(1, horizon + 1)],
                               rtol=1e-9)
    if symmetric:
        rows, cols = np.triu_indices(120, 1)
        assert_covariance(outs[:, rows, cols], expected)
        assert_covariance(outs[:, np.arange(120), np.arange(120)], 2 * expected)
        assert all(np.array_equal(o, o.T) for o in outs)
    else:
        assert_covariance(outs, expected)


@pytest.mark.parametrize("kind", KINDS)
def test_default_float_safe_sampler_noise_has_the_computed_variance(kind):
    rng = np.random.default_rng(0)
    mech = continual_release(kind, (2000,), 3, sigma=2.0)
    assert mech.sampler is GRID and mech.sampler.float_safe
    outs = [mech.add(np.zeros(2000), rng) for _ in range(3)]
    for t, out in enumerate(outs, start=1):
        variance = mech.prefix_variance(t)
        assert abs(out.var() - variance) <= 6 * variance * math.sqrt(2 / 2000)
    sym = continual_release(kind, (5, 5), 4, sigma=1.0, symmetric=True)
    out = sym.add(np.eye(5) / 5, rng)
    assert np.array_equal(out, out.T)


# -- events, sensitivity and calibration ---------------------------------------------
@settings(max_examples=25)
@given(horizon=st.integers(1, 300), buffers=st.integers(2, 12), l2=st.floats(0.01, 100.0))
def test_mf_sensitivity_is_the_largest_column_norm_of_its_factor(horizon, buffers, l2):
    mech = MatrixFactorization((3,), horizon, buffers=buffers, sigma=1.0, l2_sensitivity=l2,
                               sampler=FAST)
    c = toeplitz(blt_coefficients(mech.factor.theta, mech.factor.omega, horizon))
    largest = float(np.linalg.norm(c, axis=0).max())
    event = mech.event
    assert isinstance(event, FactorizationEvent) and event.horizon == horizon
    assert event.column_norm == pytest.approx(largest, rel=1e-9)
    assert event.column_norm >= largest
    s = event.release_event.l2_sensitivity
    assert l2 * largest <= s <= l2 * largest * (1 + 1e-8)


@pytest.mark.parametrize("sampler", [GRID, EXACT])
def test_grid_samplers_add_their_grid_slack_over_every_release(sampler):
    fast = MatrixFactorization((4, 4), 100, sigma=1.0, symmetric=True, sampler=FAST)
    safe = MatrixFactorization((4, 4), 100, sigma=1.0, symmetric=True, sampler=sampler)
    gap = safe.event.release_event.l2_sensitivity - fast.event.release_event.l2_sensitivity
    assert gap == pytest.approx(sampler.l2_slack(100 * 10), rel=1e-6)


@settings(max_examples=20)
@given(kind=st.sampled_from(KINDS), epsilon=st.floats(0.05, 10.0), delta=st.floats(1e-9, 0.1),
       horizon=st.integers(1, 5000), symmetric=st.booleans())
def test_tight_calibration_round_trips_through_the_exact_accountant(kind, epsilon, delta,
                                                                     horizon, symmetric):
    shape = (4, 4) if symmetric else (5,)
    mech = continual_release(kind, shape, horizon, epsilon=epsilon, delta=delta,
                             symmetric=symmetric, sampler=FAST)
    spent = ExactGaussianAccountant().compose(mech.event).epsilon(delta)
    assert spent == pytest.approx(epsilon, rel=1e-6) and spent <= epsilon * (1 + 1e-9)


def test_honaker_charges_exactly_the_tree_event():
    tree = TreePrivatizer((3,), 1000, epsilon=1.0, delta=1e-5, sampler=FAST)
    honaker = HonakerTree((3,), 1000, epsilon=1.0, delta=1e-5, sampler=FAST)
    assert honaker.event == tree.event and honaker.sigma == tree.sigma
    assert isinstance(honaker.event, TreeAggregationEvent)


def test_ledgers_accept_each_stream_once_and_the_pld_agrees():
    for kind in KINDS:
        mech = continual_release(kind, (4,), 500, epsilon=1.0, delta=1e-5, sampler=FAST)
        ledger = Ledger("record", 1.0, 1e-5, accountant="exact-gaussian")
        ledger.charge(mech.event)
        assert not ledger.can_charge(mech.event)
        pld = PLDAccountant().compose(mech.event).epsilon(1e-5)
        assert 1.0 <= pld <= 1.001


def test_mf_needs_far_less_noise_than_the_tree_for_the_same_guarantee():
    args = dict(epsilon=1.0, delta=1e-5, sampler=FAST)
    tree = continual_release("tree", (), 2**12 - 1, **args)
    mf = continual_release("mf", (), 2**12 - 1, **args)
    ratio = math.sqrt(mf.max_prefix_variance() / tree.max_prefix_variance())
    assert 0.27 < ratio < 0.36  # the exact square root gives 0.31 at this horizon


@settings(max_examples=20)
@given(kind=st.sampled_from(KINDS), k=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_user_level_event_covers_k_increments_anywhere(kind, k, seed):
    rng = np.random.default_rng(seed)
    horizon = 40
    mech = continual_release(kind, (), horizon, sigma=1.0, sampler=FAST)
    user = mech.user_level_event(k)
    s = mech.event.release_event if kind == "mf" else mech.event.node_event
    t = user.release_event if kind == "mf" else user.node_event
    assert t.l2_sensitivity == pytest.approx(k * s.l2_sensitivity)
    # the released values a user's k unit increments move, at random positions
    positions = rng.choice(horizon, size=k, replace=False)
    if kind == "mf":
        c = toeplitz(blt_coefficients(mech.factor.theta, mech.factor.omega, horizon))
        moved = float(np.linalg.norm(c[:, positions].sum(axis=1)))
        assert moved <= k * mech.factor.column_norm(horizon)
    else:
        g = noise_map(mech)  # rows: prefixes; a node's release is the node's own leaves
        nodes = (tree_nodes(horizon) if kind == "tree" else honaker_nodes(horizon))
        moved = float(np.linalg.norm([sum(lo < p + 1 <= hi for p in positions)
                                      for lo, hi in nodes]))
        assert moved <= k * math.sqrt(mech.nodes_per_record)
        assert g.shape[1] == len(nodes)


def tree_nodes(horizon):
    return [(t - (t & -t), t) for t in range(1, horizon + 1)]


def honaker_nodes(horizon):
    from .continual_reference import full_tree_draws

    return full_tree_draws(horizon)


# -- noise bounds and the PSD shift -----------------------------------------------------
@settings(max_examples=10)
@given(kind=st.sampled_from(KINDS), seed=st.integers(0, 2**32 - 1))
def test_psd_shift_keeps_noise_eigenvalues_in_upsilon_3upsilon(kind, seed):
    rng = np.random.default_rng(seed)
    dim, horizon, alpha = 6, 40, 0.05
    mech = continual_release(kind, (dim, dim), horizon, sigma=1.0, symmetric=True,
                             psd_shift=True, psd_alpha=alpha, sampler=FAST)
    upsilon = symmetric_noise_norm_bound(mech.max_prefix_variance(), dim, alpha / horizon)
    assert mech.shift == psd_shift(mech.max_prefix_variance(), dim, alpha / horizon)
    for _ in range(horizon):
        eig = np.linalg.eigvalsh(mech.add(np.zeros((dim, dim)), rng))
        assert upsilon <= eig.min() and eig.max() <= 3 * upsilon


def test_tree_keeps_the_shariff_sheffet_shift_unless_asked():
    args = dict(sigma=1.0, symmetric=True, psd_shift=True, sampler=FAST)
    legacy = TreePrivatizer((6, 6), 1000, **args)
    ours = continual_release("tree", (6, 6), 1000, **args)
    assert legacy.shift == 2 * psd_bound(1.0, 6, 1000, 0.05)
    assert ours.shift_bound == "covariance" and ours.shift < legacy.shift / 2.5
    assert TreePrivatizer((6, 6), 1000, shift_bound="covariance", **args).shift == ours.shift


# -- memory, reproducibility, refusals ----------------------------------------------------
def test_mf_memory_does_not_grow_with_the_horizon():
    sizes = {T: continual_release("mf", (11, 11), T, sigma=1.0, sampler=FAST).state_size
             for T in (10, 10**3, 10**6)}
    assert len(set(sizes.values())) == 1
    assert sizes[10] == (2 * 8 + 1) * 121
    tree = [continual_release("tree", (11, 11), T, sigma=1.0).state_size for T in (10, 10**6)]
    assert tree[0] < tree[1]


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_numbers(kind):
    def run():
        mech = continual_release(kind, (3, 3), 9, sigma=1.0, symmetric=True, sampler=FAST)
        rng = np.random.default_rng(11)
        return [mech.add(np.eye(3) / 3, rng) for _ in range(9)]

    assert all(np.array_equal(a, b) for a, b in zip(run(), run(), strict=True))


SYM = np.eye(4) / 2
BAD_ADD = [
    ("shape mismatch", {}, np.eye(5) / 2, ShapeError, r"must have shape \(4, 4\)"),
    ("NaN", {}, np.where(np.eye(4) > 0, np.nan, 0.0), InvalidParameterError, "NaN/inf"),
    ("asymmetric", {}, np.triu(np.ones((4, 4))) / 10, InvalidParameterError, "symmetric matrix"),
    ("over bound, reject", {"on_excess": "reject"}, 3 * np.eye(4), OutOfBoundsError,
     r"norm <= clip_norm = 1 \(on_excess='reject'\); got norm 6"),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name, kw, increment, error, message", BAD_ADD,
                         ids=[case[0] for case in BAD_ADD])
def test_bad_add_raises_and_leaves_the_stream_unchanged(kind, name, kw, increment, error,
                                                        message):
    def build():
        return continual_release(kind, (4, 4), 8, sigma=1.0, symmetric=True, sampler=FAST, **kw)

    mech, twin = build(), build()
    rng, twin_rng = np.random.default_rng(1), np.random.default_rng(1)
    np.testing.assert_array_equal(mech.add(SYM, rng), twin.add(SYM, twin_rng))
    with pytest.raises(error, match=message):
        mech.add(increment, rng)
    assert mech.steps == 1 and mech.clipped == 0
    assert mech.prefix_variance() == twin.prefix_variance()
    for _ in range(3):
        np.testing.assert_array_equal(mech.add(SYM, rng), twin.add(SYM, twin_rng))


@pytest.mark.parametrize("kind", KINDS)
def test_horizon_counts_releases(kind):
    rng = np.random.default_rng(0)
    mech = continual_release(kind, (2,), 3, sigma=1.0, sampler=FAST)
    for _ in range(3):
        mech.add(np.zeros(2), rng)
    with pytest.raises(HorizonExceededError, match=f"{kind} mechanism's horizon is 3 releases"):
        mech.add(np.zeros(2), rng)
    assert mech.steps == 3


def message(name: str, value: object, allowed: str) -> str:
    return re.escape(f"{name} must be {allowed}; got {value!r}")


BAD_BUILD = [  # (kind, options, parameter, value, allowed)
    ("mf", {"calibration": "paper", "epsilon": 1.0, "delta": 1e-5}, "calibration", "paper",
     "'tight' for the 'mf' mechanism (the papers' formulas are for trees)"),
    ("mf", {"buffers": 1}, "buffers", 1, "an integer >= 2"),
    ("mf", {"buffers": 65}, "buffers", 65, "an integer in [2, 64]"),
    ("mf", {"buffers": 8.0}, "buffers", 8.0, "an integer >= 2"),
    ("tree", {"buffers": 8}, "options", "buffers",
     "an option of 'tree': one of ['sigma', 'epsilon', 'delta', 'l2_sensitivity', "
     "'calibration', 'symmetric', 'on_excess', 'psd_shift', 'psd_alpha', 'clip_norm', "
     "'paper_formula', 'sampler', 'records_per_step', 'accountant', 'shift_bound']"),
    ("honaker", {"shift_bound": "covariance"}, "options", "shift_bound",
     "an option of 'honaker': one of ['sigma', 'epsilon', 'delta', 'l2_sensitivity', "
     "'calibration', 'symmetric', 'on_excess', 'psd_shift', 'psd_alpha', 'clip_norm', "
     "'paper_formula', 'sampler', 'records_per_step', 'accountant']"),
    ("tree", {"shift_bound": "loose"}, "shift_bound", "loose",
     "one of 'shariff-sheffet', 'covariance'"),
    ("honaker", {"psd_shift": True}, "psd_shift", True, "False unless symmetric=True"),
    ("mf", {"sigma": 1.0, "epsilon": 1.0, "delta": 1e-5}, "sigma", 1.0,
     "None when epsilon and delta are given (not both)"),
    ("honaker", {"clip_norm": 2.0}, "clip_norm", 2.0, "<= l2_sensitivity = 1"),
]


@pytest.mark.parametrize(("kind", "options", "name", "value", "allowed"), BAD_BUILD)
def test_bad_construction(kind, options, name, value, allowed):
    options = {"sigma": 1.0, **options} if "epsilon" not in options else options
    with pytest.raises(InvalidParameterError, match=message(name, value, allowed)):
        continual_release(kind, (3,), 8, sampler=FAST, **options)


@pytest.mark.parametrize(("call", "name", "value", "allowed"), [
    (lambda: continual_release("binary", (3,), 8, sigma=1.0), "mechanism", "binary",
     "one of 'tree', 'honaker', 'mf'"),
    (lambda: continual_release("mf", (3,), 8, sigma=1.0).prefix_variance(), "step", None,
     "an integer in [1, horizon] (nothing released yet)"),
    (lambda: continual_release("mf", (3,), 8, sigma=1.0).prefix_variance(9), "step", 9,
     "an integer in [1, horizon = 8]"),
    (lambda: continual_release("tree", (3,), 8, sigma=1.0).user_level_event(0),
     "participations", 0, "an integer >= 1"),
])
def test_bad_queries(call, name, value, allowed):
    with pytest.raises(InvalidParameterError, match=message(name, value, allowed)):
        call()
