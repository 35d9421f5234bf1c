"""Tree privatizer: node reuse, prefix variances, calibration round trips, clipping, bad input."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.accounting import (
    BudgetExceededError,
    ExactGaussianAccountant,
    GaussianEvent,
    Ledger,
    TreeAggregationEvent,
    tree_nodes_per_record,
)
from privbandit.accounting import calibration as calib
from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms.errors import HorizonExceededError, OutOfBoundsError, ShapeError
from privbandit.mechanisms.samplers import EXACT, FAST
from privbandit.mechanisms.tree import TreePrivatizer, float_sensitivity_factor, psd_bound

from .continual_reference import RecordingSampler
from .continual_reference import dyadic_nodes as reference_nodes


def dyadic_nodes(t: int) -> set[tuple[int, int]]:
    """The dyadic intervals (start, end] whose union is (0, t] (reference, independent)."""
    return set(reference_nodes(t))


def assert_moments(samples, variance, z=6.0):
    samples = np.asarray(samples, dtype=float).ravel()
    n = samples.size
    assert abs(samples.mean()) <= z * math.sqrt(variance / n)
    assert abs(samples.var() - variance) <= z * variance * math.sqrt(2 / n)


# -- structure: each node's noise drawn once, prefixes are sums of dyadic nodes ---------


@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 70),
    st.sampled_from([(), (3,), (2, 2)]),
    st.floats(0.1, 5.0),
)
def test_prefix_is_true_sum_plus_its_dyadic_node_noises(seed, horizon, shape, scale):
    rng = np.random.default_rng(seed)
    sampler = RecordingSampler()
    tree = TreePrivatizer(shape, horizon, sigma=0.5, l2_sensitivity=100.0, sampler=sampler)
    stream = scale * rng.uniform(-1, 1, size=(horizon, *shape))
    node_noise = {}
    for t in range(1, horizon + 1):
        out = tree.add(stream[t - 1], rng)
        assert len(sampler.log) == t  # exactly one fresh node per step
        low = t & -t
        node_noise[(t - low, t)] = sampler.log[-1]
        expected = stream[:t].sum(axis=0) + sum(node_noise[n] for n in dyadic_nodes(t))
        assert out.shape == shape
        np.testing.assert_allclose(out, expected, rtol=0, atol=1e-9 * (1 + scale * t))
    assert tree.steps == horizon and tree.clipped == 0


@given(st.integers(1, 2**20))
def test_a_record_touches_at_most_nodes_per_record_nodes(horizon):
    tree = TreePrivatizer((), horizon, sigma=1.0, sampler=FAST)
    assert tree.nodes_per_record == tree_nodes_per_record(horizon)
    assert tree.event.nodes_per_record == tree_nodes_per_record(horizon)
    # count, for a few leaves, the dyadic nodes completed by the horizon that contain them
    for leaf in {1, horizon, max(1, horizon // 2 + 1)}:
        covering = sum(
            1 for j in range(horizon.bit_length())
            if ((leaf - 1) >> j << j) + 2**j <= horizon
        )
        assert covering <= tree.nodes_per_record


def test_nodes_in_prefix_is_popcount():
    assert [TreePrivatizer.nodes_in_prefix(t) for t in (1, 2, 3, 7, 8, 12)] == [1, 1, 2, 3, 1, 2]


# -- noise statistics -------------------------------------------------------------------


@given(st.integers(0, 2**32 - 1), st.integers(2, 24), st.floats(0.2, 20.0))
def test_prefix_noise_mean_zero_variance_popcount_sigma2_and_shared_node_covariance(
    seed, horizon, sigma
):
    rng = np.random.default_rng(seed)
    tree = TreePrivatizer((20_000,), horizon, sigma=sigma, sampler=FAST)
    outs = [tree.add(np.zeros(20_000), rng) for _ in range(horizon)]
    for t, out in enumerate(outs, start=1):
        assert_moments(out, TreePrivatizer.nodes_in_prefix(t) * sigma**2)
    # prefixes share noise exactly through their common dyadic nodes
    a, b = horizon - 1, horizon
    shared = len(dyadic_nodes(a) & dyadic_nodes(b))
    cov = float(np.mean(outs[a - 1] * outs[b - 1]))
    n_a, n_b = TreePrivatizer.nodes_in_prefix(a), TreePrivatizer.nodes_in_prefix(b)
    se = sigma**2 * math.sqrt((n_a * n_b + shared**2) / 20_000)
    assert abs(cov - shared * sigma**2) <= 6 * se


@given(st.integers(0, 2**32 - 1), st.integers(1, 12))
def test_symmetric_tree_variances_diag_twice_offdiag(seed, horizon):
    rng = np.random.default_rng(seed)
    dim, sigma = 150, 1.5
    tree = TreePrivatizer((dim, dim), horizon, sigma=sigma, symmetric=True, sampler=FAST)
    rows, cols = np.triu_indices(dim, 1)
    for t in range(1, horizon + 1):
        out = tree.add(np.zeros((dim, dim)), rng)
        assert np.array_equal(out, out.T)
        m = TreePrivatizer.nodes_in_prefix(t)
        assert_moments(out[rows, cols], m * sigma**2)
        assert_moments(np.diagonal(out), 2 * m * sigma**2)


def test_exact_sampler_tree_variance_and_symmetry():
    rng = np.random.default_rng(0)
    tree = TreePrivatizer((3000,), 3, sigma=2.0, sampler=EXACT)
    assert tree.sampler is EXACT
    outs = [tree.add(np.zeros(3000), rng) for _ in range(3)]
    assert_moments(outs[2], 2 * 4.0)  # prefix 3 = two nodes
    assert_moments(outs[2] - outs[1], 4.0)  # prefix 2's node is reused by prefix 3
    sym = TreePrivatizer((21, 21), 4, sigma=1.0, symmetric=True, sampler=EXACT)
    for _ in range(3):
        out = sym.add(np.eye(21) / 21, rng)
        assert np.array_equal(out, out.T)


# -- calibration round trips and the event -----------------------------------------------


@given(
    st.floats(0.05, 10.0),
    st.floats(1e-9, 0.1),
    st.integers(1, 10**6),
    st.floats(1e-3, 1e3),
    st.sampled_from([FAST, EXACT]),
    st.booleans(),
)
def test_tight_calibration_round_trips_through_exact_accountant(
    epsilon, delta, horizon, l2, sampler, symmetric
):
    shape = (5, 5) if symmetric else (7,)
    tree = TreePrivatizer(shape, horizon, epsilon=epsilon, delta=delta, l2_sensitivity=l2,
                          symmetric=symmetric, sampler=sampler)
    spent = ExactGaussianAccountant().compose(tree.event).epsilon(delta)
    assert spent == pytest.approx(epsilon, rel=1e-6)
    assert spent <= epsilon * (1 + 1e-9)
    node = tree.event.node_event
    assert isinstance(tree.event, TreeAggregationEvent) and isinstance(node, GaussianEvent)
    assert node.sigma == tree.sigma
    core = l2 / math.sqrt(2.0) if symmetric else l2  # symmetric noise hides ||D||_F / sqrt 2
    assert core <= node.l2_sensitivity <= core * float_sensitivity_factor(horizon, 25) + \
        sampler.l2_slack(25)


def test_event_sensitivity_includes_float_and_grid_slack():
    fast = TreePrivatizer((21, 21), 1000, sigma=1.0, symmetric=True, sampler=FAST)
    exact = TreePrivatizer((21, 21), 1000, sigma=1.0, symmetric=True, sampler=EXACT)
    factor = float_sensitivity_factor(1000, 441)
    assert 1.0 < factor < 1 + 1e-10
    core = 1.0 / math.sqrt(2.0)  # symmetric: the whitened sensitivity
    assert fast.event.node_event.l2_sensitivity == core * factor
    assert exact.event.node_event.l2_sensitivity == core * factor + EXACT.l2_slack(231)
    assert float_sensitivity_factor(10**6, 441) < 1 + 1e-7


def test_ledger_accepts_the_tree_it_was_calibrated_for_and_nothing_more():
    tree = TreePrivatizer((4,), 500, epsilon=1.0, delta=1e-5, sampler=FAST)
    Ledger("cluster", 1.0, 1e-5, accountant="exact-gaussian").charge(tree.event)
    with pytest.raises(BudgetExceededError):
        Ledger("cluster", 0.999, 1e-5, accountant="exact-gaussian").charge(tree.event)


@pytest.mark.skipif(not hasattr(calib, "paper_tree_sigma"), reason="paper formula not merged")
@pytest.mark.parametrize("formula", ["seed000", "seed000-text", "shariff-sheffet"])
def test_paper_calibration_is_valid_and_looser(formula):
    kwargs = dict(epsilon=1.0, delta=1e-5, symmetric=True, sampler=FAST)
    tight = TreePrivatizer((5, 5), 1000, **kwargs)
    paper = TreePrivatizer((5, 5), 1000, calibration="paper", paper_formula=formula, **kwargs)
    assert paper.sigma >= tight.sigma
    assert ExactGaussianAccountant().compose(paper.event).epsilon(1e-5) <= 1.0


# -- clipping, rejection, PSD shift -----------------------------------------------------------


def test_clip_scales_down_and_counts():
    rng = np.random.default_rng(0)
    tree = TreePrivatizer((3,), 4, sigma=1e-9, l2_sensitivity=1.0, sampler=FAST)
    out = tree.add(np.array([3.0, 4.0, 0.0]), rng)
    np.testing.assert_allclose(out, [0.6, 0.8, 0.0], atol=1e-6)
    assert tree.clipped == 1
    tree.add(np.array([0.1, 0.0, 0.0]), rng)
    assert tree.clipped == 1


def test_clip_handles_huge_finite_entries():
    tree = TreePrivatizer((2, 2), 4, sigma=1e-9, symmetric=True, sampler=FAST)
    out = tree.add(np.full((2, 2), 1e300), np.random.default_rng(0))
    np.testing.assert_allclose(out, np.full((2, 2), 0.5), atol=1e-6)
    assert tree.clipped == 1


def test_clip_norm_below_sensitivity_for_replace_neighbours():
    tree = TreePrivatizer((2,), 4, sigma=1e-9, l2_sensitivity=2.0, clip_norm=1.0, sampler=FAST)
    out = tree.add(np.array([0.0, 5.0]), np.random.default_rng(0))
    np.testing.assert_allclose(out, [0.0, 1.0], atol=1e-6)


@given(st.integers(0, 2**32 - 1))
def test_psd_shift_keeps_noise_eigenvalues_in_upsilon_3upsilon(seed):
    rng = np.random.default_rng(seed)
    dim, horizon = 6, 40
    tree = TreePrivatizer((dim, dim), horizon, sigma=1.0, symmetric=True, psd_shift=True,
                          sampler=FAST)
    upsilon = psd_bound(1.0, dim, horizon, 0.05)
    assert tree.shift == 2 * upsilon
    for _ in range(horizon):
        eig = np.linalg.eigvalsh(tree.add(np.zeros((dim, dim)), rng))
        assert upsilon <= eig.min() and eig.max() <= 3 * upsilon


def test_psd_shift_is_off_by_default():
    tree = TreePrivatizer((3, 3), 4, sigma=1.0, symmetric=True, sampler=FAST)
    assert tree.shift == 0.0


# -- bad input: named errors, and a refused add changes nothing --------------------------------

D = 4
SYM = np.eye(D) / 2


def sym_tree(**kw):
    return TreePrivatizer((D, D), 8, sigma=1.0, symmetric=True, sampler=FAST, **kw)


BAD_ADD = [
    ("shape mismatch", {}, np.eye(D + 1) / 2, ShapeError, r"must have shape \(4, 4\)"),
    ("vector for matrix", {}, np.ones(D), ShapeError, "must have shape"),
    ("NaN", {}, np.where(np.eye(D) > 0, np.nan, 0.0), InvalidParameterError, "NaN/inf"),
    ("inf", {}, np.full((D, D), np.inf), InvalidParameterError, "finite entries"),
    ("bool dtype", {}, np.eye(D, dtype=bool), ShapeError, "dtype bool"),
    ("complex dtype", {}, SYM.astype(complex), ShapeError, "complex128"),
    ("string dtype", {}, np.full((D, D), "x"), ShapeError, "real numbers"),
    ("asymmetric", {}, np.triu(np.ones((D, D))) / 10, InvalidParameterError, "symmetric matrix"),
    ("over bound, reject", {"on_excess": "reject"}, 3 * np.eye(D), OutOfBoundsError,
     r"norm <= clip_norm = 1 \(on_excess='reject'\); got norm 6"),
]


@pytest.mark.parametrize("name, kw, increment, error, message", BAD_ADD,
                         ids=[case[0] for case in BAD_ADD])
def test_bad_add_raises_and_leaves_the_tree_unchanged(name, kw, increment, error, message):
    # twin trees fed identical seeds: the one that refused an input must stay in step
    tree, twin = sym_tree(**kw), sym_tree(**kw)
    rng, twin_rng = np.random.default_rng(1), np.random.default_rng(1)
    np.testing.assert_array_equal(tree.add(SYM, rng), twin.add(SYM, twin_rng))
    with pytest.raises(error, match=message):
        tree.add(increment, rng)
    assert tree.steps == 1 and tree.clipped == 0
    for _ in range(3):
        np.testing.assert_array_equal(tree.add(SYM, rng), twin.add(SYM, twin_rng))


def test_bad_rng_changes_nothing():
    tree = sym_tree()
    with pytest.raises(InvalidParameterError, match="rng must be a numpy.random.Generator"):
        tree.add(3 * np.eye(D), 7)
    assert tree.steps == 0 and tree.clipped == 0


def test_horizon_exceeded():
    rng = np.random.default_rng(0)
    tree = TreePrivatizer((2,), 3, sigma=1.0, sampler=FAST)
    for _ in range(3):
        tree.add(np.zeros(2), rng)
    with pytest.raises(HorizonExceededError, match="horizon is 3 releases"):
        tree.add(np.zeros(2), rng)
    assert tree.steps == 3


BAD_BUILD = [
    (dict(sigma=1.0, epsilon=1.0, delta=1e-5), "sigma must be None when epsilon"),
    (dict(), r"either sigma, or both epsilon and delta"),
    (dict(epsilon=1.0), r"either sigma, or both epsilon and delta"),
    (dict(epsilon=1.0, delta=0.0), "delta must be a number in"),
    (dict(epsilon=-1.0, delta=1e-5), "epsilon must be a finite number > 0"),
    (dict(sigma=0.0), "sigma must be a finite number > 0"),
    (dict(sigma=1.0, calibration="paper"), "calibration must be 'tight'"),
    (dict(sigma=1.0, calibration="loose"), "calibration must be one of 'tight', 'paper'"),
    (dict(sigma=1.0, on_excess="ignore"), "on_excess must be one of 'clip', 'reject'"),
    (dict(sigma=1.0, l2_sensitivity=0), "l2_sensitivity must be a finite number > 0"),
    (dict(sigma=1.0, clip_norm=2.0), "clip_norm must be <= l2_sensitivity"),
    (dict(sigma=1.0, symmetric=True), r"shape must be a square \(D, D\) shape"),
    (dict(sigma=1.0, symmetric=1), "symmetric must be True or False"),
    (dict(sigma=1.0, psd_shift=True), "psd_shift must be False unless symmetric"),
    (dict(sigma=1.0, horizon=0), "horizon must be an integer >= 1"),
    (dict(sigma=1.0, shape=(2, -1)), "shape must be an int or a tuple"),
    (dict(sigma=1.0, sampler="fast"), "sampler must be a Sampler"),
]


@pytest.mark.parametrize("kw, message", BAD_BUILD)
def test_bad_construction(kw, message):
    args = {"shape": (3,), "horizon": 8, **kw}
    with pytest.raises(InvalidParameterError, match=message):
        TreePrivatizer(args.pop("shape"), args.pop("horizon"), **args)


def test_bad_psd_alpha():
    with pytest.raises(InvalidParameterError, match="psd_alpha must be a probability"):
        TreePrivatizer((3, 3), 8, sigma=1.0, symmetric=True, psd_shift=True, psd_alpha=1.5)
