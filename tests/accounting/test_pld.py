"""The PLD accountant against dp-accounting's, the exact Gaussian, and the other accountants."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting import (
    ComposedEvent,
    ExactGaussianAccountant,
    FactorizationEvent,
    GaussianEvent,
    InvalidParameterError,
    LaplaceEvent,
    Ledger,
    PLDAccountant,
    RepeatedEvent,
    TreeAggregationEvent,
    calibrate_gaussian_sigma,
    calibrate_laplace_scale,
    make_accountant,
)
from privbandit.accounting.accountants import gaussian_pld, laplace_pld

DELTA = 1e-5


def dp_pld(events, pessimistic: bool, interval: float = 1e-4):
    """dp-accounting's PLD of [(kind, noise multiplier, count)]: the reference."""
    from dp_accounting.pld import privacy_loss_distribution as pl

    total = None
    for kind, noise, count in events:
        build = pl.from_laplace_mechanism if kind == "laplace" else pl.from_gaussian_mechanism
        part = build(noise, pessimistic_estimate=pessimistic,
                     value_discretization_interval=interval,
                     **({} if pessimistic else {"use_connect_dots": False})).self_compose(count)
        total = part if total is None else total.compose(part)
    return total


def test_fifty_laplace_releases_match_dp_accounting_and_stay_above_the_truth():
    import dp_accounting

    ours = PLDAccountant().compose(LaplaceEvent(10.0, 1.0), 50).epsilon(DELTA)
    ref = dp_accounting.pld.PLDAccountant()
    ref.compose(dp_accounting.LaplaceDpEvent(10.0), 50)
    assert ref.get_epsilon(DELTA) == pytest.approx(2.797, abs=5e-4)
    assert ours == pytest.approx(ref.get_epsilon(DELTA), rel=5e-3)
    # an optimistic discretization bounds the true epsilon from below
    lower = dp_pld([("laplace", 10.0, 50)], pessimistic=False, interval=1e-5)
    assert ours >= lower.get_epsilon_for_delta(DELTA)
    # and it beats every other accountant here (approx-dp gives 2.845)
    for name in ("approx-dp", "rdp", "zcdp", "pure-dp"):
        other = make_accountant(name).compose(LaplaceEvent(10.0, 1.0), 50).epsilon(DELTA)
        assert ours < other, name


MIXTURES = [  # (gaussian sigma, gaussian count, laplace scale, laplace count)
    (2.0, 10, 1.0, 3), (5.0, 100, 10.0, 50), (0.7, 4, 0.5, 2), (3.0, 30, 4.0, 1),
]


@pytest.mark.parametrize(("sigma", "k", "b", "kl"), MIXTURES)
def test_mixtures_match_dp_accounting_and_stay_above_the_truth(sigma, k, b, kl):
    acc = PLDAccountant().compose(ComposedEvent((RepeatedEvent(GaussianEvent(sigma, 1.0), k),
                                                 RepeatedEvent(LaplaceEvent(b, 1.0), kl))))
    parts = [("gaussian", sigma, k), ("laplace", b, kl)]
    upper, lower = dp_pld(parts, pessimistic=True), dp_pld(parts, pessimistic=False)
    for delta in (1e-8, DELTA, 1e-2):
        eps = acc.epsilon(delta)
        assert eps == pytest.approx(upper.get_epsilon_for_delta(delta), rel=5e-3, abs=1e-3)
        assert eps >= lower.get_epsilon_for_delta(delta)
    for eps in (0.5, 2.0, 8.0):
        got = acc.delta(eps)
        assert got >= lower.get_delta_for_epsilon(eps)
        assert got <= upper.get_delta_for_epsilon(eps) * 1.05 + 1e-9


@settings(max_examples=30, deadline=None)
@given(sigma=st.floats(0.5, 50.0), k=st.integers(1, 200), log_delta=st.floats(-10, -2))
def test_gaussian_compositions_never_below_the_exact_accountant(sigma, k, log_delta):
    delta = 10.0**log_delta
    exact = ExactGaussianAccountant().compose(GaussianEvent(sigma, 1.0), k).epsilon(delta)
    ours = PLDAccountant().compose(GaussianEvent(sigma, 1.0), k).epsilon(delta)
    assert exact <= ours <= exact + 2e-3 + 1e-3 * exact


def test_trees_and_factorizations_are_their_gaussians():
    node = GaussianEvent(11.8, 1.0)
    tree = PLDAccountant().compose(TreeAggregationEvent(node, 10))
    flat = PLDAccountant().compose(node, 10)
    mf = PLDAccountant().compose(FactorizationEvent(GaussianEvent(1.1, 2.2), 2.2, 1000))
    assert tree.epsilon(DELTA) == flat.epsilon(DELTA)
    assert mf.epsilon(DELTA) == PLDAccountant().compose(GaussianEvent(0.5, 1.0)).epsilon(DELTA)


@pytest.mark.parametrize(("sigma", "k", "b", "kl"), MIXTURES)
def test_tightest_accountant_for_mixtures(sigma, k, b, kl):
    event = ComposedEvent((RepeatedEvent(GaussianEvent(sigma, 1.0), k),
                           RepeatedEvent(LaplaceEvent(b, 1.0), kl)))
    ours = PLDAccountant().compose(event).epsilon(DELTA)
    for name in ("approx-dp", "rdp", "zcdp"):
        assert ours <= make_accountant(name).compose(event).epsilon(DELTA), name


@settings(max_examples=15, deadline=None)
@given(b=st.floats(0.5, 30.0), k1=st.integers(1, 30), k2=st.integers(1, 30),
       log_delta=st.floats(-9, -1))
def test_laplace_epsilon_grows_with_count_and_is_certified(b, k1, k2, log_delta):
    delta = 10.0**log_delta
    k1, k2 = min(k1, k2), max(k1, k2)
    acc1 = PLDAccountant().compose(LaplaceEvent(b, 1.0), k1)
    acc2 = PLDAccountant().compose(LaplaceEvent(b, 1.0), k2)
    e1, e2 = acc1.epsilon(delta), acc2.epsilon(delta)
    assert e1 <= e2 * (1 + 1e-9)
    assert acc2.delta(e2) <= delta
    assert e2 <= k2 / b * (1 + 1e-12)  # never worse than basic composition


def test_pure_laplace_at_delta_zero_is_basic_composition_and_gaussians_are_infinite():
    acc = PLDAccountant().compose(LaplaceEvent(2.0, 1.0), 6)
    assert acc.epsilon(0.0) == pytest.approx(3.0)
    assert acc.delta(3.0) == 0.0 and acc.delta(2.9) > 0
    assert PLDAccountant().compose(GaussianEvent(1.0, 1.0)).epsilon(0.0) == math.inf


def test_discretizations_are_pessimistic_and_keep_all_mass():
    for pld in (laplace_pld(0.37, 1e-3), gaussian_pld(1.3, 1e-3), laplace_pld(1e-6, 1e-3)):
        assert pld.probs.sum() + pld.inf_mass == pytest.approx(1.0, abs=1e-12)
        assert np.all(pld.probs >= 0)
    lap = laplace_pld(0.37, 1e-3)
    assert lap.losses[-1] >= 0.37 and lap.probs[-1] >= 0.5  # the atom at +epsilon0 is kept
    # against the exact Laplace profile (Balle & Wang 2018, Thm 3 form for one release)
    for eps in (0.0, 0.1, 0.3):
        exact = -math.expm1((eps - 0.37) / 2)
        assert exact <= lap.delta(eps) <= exact + 2e-3


def test_numerical_floor_is_counted_not_hidden():
    acc = PLDAccountant().compose(LaplaceEvent(10.0, 1.0), 50)
    pld = acc.loss_distribution()
    assert 0 < pld.error < 1e-9
    assert acc.delta(100.0) == 0.0  # beyond the pure-DP sum: exactly 0
    assert acc.delta(4.9) >= pld.error


def test_ledger_and_calibration_accept_the_pld_accountant():
    sigma = calibrate_gaussian_sigma(1.0, DELTA, 1.0, nodes_per_record=10, accountant="pld")
    exact = calibrate_gaussian_sigma(1.0, DELTA, 1.0, nodes_per_record=10)
    assert exact <= sigma <= exact * 1.001
    scale = calibrate_laplace_scale(1.0, DELTA, 1.0, releases=50, accountant="pld")
    assert scale < calibrate_laplace_scale(1.0, DELTA, 1.0, releases=50, accountant="approx-dp")
    ledger = Ledger("user", 1.0, DELTA, accountant="pld")
    assert not ledger.can_charge(LaplaceEvent(scale * 0.999, 1.0), 50)
    ledger.charge(LaplaceEvent(scale, 1.0), 50)
    assert ledger.remaining() <= 1e-3


@pytest.mark.parametrize(("kwargs", "name", "value", "allowed"), [
    ({"value_discretization_interval": 0.0}, "value_discretization_interval", 0.0,
     "a finite number > 0"),
    ({"value_discretization_interval": 2.0}, "value_discretization_interval", 2.0,
     "a number in (0, 1]"),
    ({"max_points": 100}, "max_points", 100, "an integer >= 1024"),
])
def test_bad_construction(kwargs, name, value, allowed):
    with pytest.raises(InvalidParameterError,
                       match=re.escape(f"{name} must be {allowed}; got {value!r}")):
        PLDAccountant(**kwargs)


def test_factorization_event_is_its_gaussian_and_validates():
    from privbandit.accounting import UnsupportedEventError
    from privbandit.accounting.events import flatten

    gauss = GaussianEvent(2.0, 3.0)
    event = FactorizationEvent(gauss, 3.0, 100)
    assert flatten(event) == [(gauss, 1)]
    assert flatten(RepeatedEvent(event, 4)) == [(gauss, 4)]
    with pytest.raises(UnsupportedEventError, match="release_event must be a GaussianEvent"):
        FactorizationEvent(LaplaceEvent(1.0, 1.0), 1.0, 10)
    with pytest.raises(InvalidParameterError,
                       match=re.escape("column_norm must be a finite number > 0; got 0.0")):
        FactorizationEvent(gauss, 0.0, 10)
    with pytest.raises(InvalidParameterError,
                       match=re.escape("horizon must be an integer >= 1; got 0")):
        FactorizationEvent(gauss, 1.0, 0)
