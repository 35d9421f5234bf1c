"""Calibration: tight noise per accountant, and the seed papers' own tree formulas."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting import (
    ExactGaussianAccountant,
    GaussianEvent,
    LaplaceEvent,
    Ledger,
    TreeAggregationEvent,
    ZCDPAccountant,
    calibrate_gaussian_sigma,
    calibrate_laplace_scale,
    make_accountant,
    paper_tree_sigma,
    tree_nodes_per_record,
)

GAUSSIAN_ACCOUNTANTS = ["exact-gaussian", "zcdp", "rdp", "approx-dp"]
LAPLACE_ACCOUNTANTS = ["pure-dp", "approx-dp", "zcdp", "rdp"]
EPS, DELTA = 1.0, 1e-5


@pytest.mark.parametrize(("horizon", "nodes"), [(1, 1), (2, 2), (3, 3), (512, 10), (513, 11)])
def test_tree_nodes_per_record(horizon, nodes):
    assert tree_nodes_per_record(horizon) == nodes


def test_tree_at_512_steps_exact_vs_papers():
    nu = tree_nodes_per_record(512)
    exact = calibrate_gaussian_sigma(EPS, DELTA, 1.0, nodes_per_record=nu)
    assert exact == pytest.approx(11.80, abs=0.01)
    # Variances 64 nu ln(2/delta), 16 nu ln(4/delta)^2, 64 nu ln(2/delta)^2 at nu = 10.
    assert paper_tree_sigma(EPS, DELTA, 1.0, horizon=512, formula="seed000") == pytest.approx(
        math.sqrt(640 * math.log(2e5)))
    assert paper_tree_sigma(EPS, DELTA, 1.0, horizon=512) == pytest.approx(88.38, abs=0.01)
    for formula, expected in (("shariff-sheffet", 163.16), ("seed000-text", 308.79)):
        assert paper_tree_sigma(EPS, DELTA, 1.0, horizon=512, formula=formula) == pytest.approx(
            expected, abs=0.01)


@pytest.mark.parametrize("name", GAUSSIAN_ACCOUNTANTS)
def test_gaussian_calibration_is_certified_and_minimal(name):
    nu = tree_nodes_per_record(512)
    sigma = calibrate_gaussian_sigma(EPS, DELTA, 2.0, releases=2, nodes_per_record=nu,
                                     accountant=name)
    tree = TreeAggregationEvent(GaussianEvent(sigma, 2.0), nu)
    acc = make_accountant(name).compose(tree, 2)
    assert acc.delta(EPS) <= DELTA
    assert acc.epsilon(DELTA) <= EPS * (1 + 1e-9)
    tighter = make_accountant(name).compose(
        TreeAggregationEvent(GaussianEvent(sigma * (1 - 1e-6), 2.0), nu), 2)
    assert tighter.delta(EPS) > DELTA
    # Nothing certifies less noise than the exact accountant.
    exact = calibrate_gaussian_sigma(EPS, DELTA, 2.0, releases=2, nodes_per_record=nu)
    assert sigma >= exact * (1 - 1e-12)


@pytest.mark.parametrize("name", GAUSSIAN_ACCOUNTANTS)
def test_a_ledger_accepts_exactly_the_calibrated_tree(name):
    sigma = calibrate_gaussian_sigma(0.5, DELTA, 1.0, nodes_per_record=6, accountant=name)
    ledger = Ledger("cluster", 0.5, DELTA, accountant=name)
    assert not ledger.can_charge(TreeAggregationEvent(GaussianEvent(sigma * 0.999, 1.0), 6))
    ledger.charge(TreeAggregationEvent(GaussianEvent(sigma, 1.0), 6))
    assert ledger.remaining() <= 1e-6


def test_accountant_instances_are_accepted_and_left_untouched():
    acc = ZCDPAccountant()
    assert calibrate_gaussian_sigma(EPS, DELTA, 1.0, accountant=acc) == pytest.approx(
        calibrate_gaussian_sigma(EPS, DELTA, 1.0, accountant="zcdp"))
    assert acc.releases == 0
    exact = calibrate_gaussian_sigma(EPS, DELTA, 1.0, accountant=ExactGaussianAccountant())
    assert exact == calibrate_gaussian_sigma(EPS, DELTA, 1.0)


@pytest.mark.parametrize("name", LAPLACE_ACCOUNTANTS)
def test_laplace_calibration_is_certified_and_minimal(name):
    scale = calibrate_laplace_scale(EPS, DELTA, 1.0, releases=50, accountant=name)
    acc = make_accountant(name).compose(LaplaceEvent(scale, 1.0), 50)
    assert acc.epsilon(DELTA) <= EPS * (1 + 1e-9)
    less = make_accountant(name).compose(LaplaceEvent(scale * (1 - 1e-6), 1.0), 50)
    assert less.delta(EPS) > DELTA or less.epsilon(DELTA) > EPS


def test_approx_dp_laplace_never_needs_more_noise_than_basic_composition():
    # Basic composition is one of approx-dp's bounds; KOV wins at 50 releases.
    for releases in (1, 5, 50):
        basic = calibrate_laplace_scale(EPS, 0.0, 1.0, releases=releases)
        approx = calibrate_laplace_scale(EPS, DELTA, 1.0, releases=releases,
                                         accountant="approx-dp")
        assert approx <= basic * (1 + 1e-9)
    assert approx < 0.8 * basic


def test_pure_dp_laplace_scale_is_basic_composition():
    assert calibrate_laplace_scale(0.5, 0.0, 2.0, releases=3, nodes_per_record=4) == 48.0


@settings(max_examples=40)
@given(
    eps=st.floats(0.05, 10.0),
    log_delta=st.floats(-12.0, -1.0),
    horizon=st.integers(1, 2**20),
    formula=st.sampled_from(["seed000", "seed000-text", "shariff-sheffet"]),
)
def test_paper_formulas_are_certified_by_the_exact_accountant(eps, log_delta, horizon, formula):
    delta = 10.0**log_delta
    sigma = paper_tree_sigma(eps, delta, 1.0, horizon=horizon, formula=formula)
    tree = TreeAggregationEvent(GaussianEvent(sigma, 1.0), tree_nodes_per_record(horizon))
    assert ExactGaussianAccountant().compose(tree).epsilon(delta) <= eps
    assert sigma >= calibrate_gaussian_sigma(eps, delta, 1.0,
                                             nodes_per_record=tree_nodes_per_record(horizon))


def test_paper_formulas_scale_with_sensitivity_and_order():
    base = {f: paper_tree_sigma(EPS, DELTA, 1.0, horizon=512, formula=f)
            for f in ("seed000", "seed000-text", "shariff-sheffet")}
    for f, s in base.items():
        assert paper_tree_sigma(EPS, DELTA, 3.0, horizon=512, formula=f) == pytest.approx(3 * s)
    assert base["seed000"] < base["shariff-sheffet"] < base["seed000-text"]
