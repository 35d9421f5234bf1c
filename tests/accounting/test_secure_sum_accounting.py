"""The secure-sum event (distributed discrete Gaussian): validation, who supports it, the
Kairouz-Liu-Steinke bound against an independent computation, calibration."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from privbandit.accounting import (
    ACCOUNTANTS,
    FactorizationEvent,
    GaussianEvent,
    InvalidParameterError,
    Ledger,
    RDPAccountant,
    RepeatedEvent,
    SecureSumEvent,
    TreeAggregationEvent,
    UnsupportedEventError,
    ZCDPAccountant,
    calibrate_gaussian_sigma,
    calibrate_secure_sum_sigma,
    make_accountant,
    secure_sum_event,
)
from privbandit.accounting.accountants.secure_sum import (
    secure_sum_rdp,
    secure_sum_rho,
    secure_sum_tau,
)

DELTA = 1e-5


# -- the event ----------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs,match", [
    ({"sigma": 0.4}, "sigma must be >= 0.5"),
    ({"sigma": float("nan")}, "sigma must be a finite number"),
    ({"shares": 0}, "shares must be an integer >= 1"),
    ({"l2_sensitivity": -1.0}, "l2_sensitivity must be a finite number > 0"),
    ({"dimension": 0}, "dimension must be an integer >= 1"),
    ({"rounding_slack": 9.0}, "rounding_slack must be <= l2_sensitivity"),
    ({"wrap_probability": 1.5}, "wrap_probability must be a probability in"),
])
def test_bad_events_are_refused_naming_the_field(kwargs, match):
    base = {"sigma": 3.0, "shares": 4, "l2_sensitivity": 2.0, "dimension": 5}
    with pytest.raises((InvalidParameterError, UnsupportedEventError), match=match):
        SecureSumEvent(**{**base, **kwargs})


def test_only_zcdp_and_rdp_support_it_and_the_others_name_it():
    event = SecureSumEvent(3.0, 4, 2.0, 5)
    for name, cls in ACCOUNTANTS.items():
        acc = cls()
        if name in ("zcdp", "rdp"):
            assert acc.supports(event) and acc.supports(TreeAggregationEvent(event, 3))
            continue
        assert not acc.supports(event)
        with pytest.raises(UnsupportedEventError, match="does not support SecureSumEvent"):
            acc.compose(FactorizationEvent(event, 2.0, 8))
        assert acc.releases == 0


def test_one_share_is_the_discrete_gaussian():
    # n = 1: tau = 0 and rho = Delta^2 / (2 sigma^2) (Canonne, Kamath & Steinke 2020, Thm 4)
    event = SecureSumEvent(2.5, 1, 3.0, 7)
    assert secure_sum_tau(2.5, 1) == 0.0
    assert secure_sum_rho(event) == pytest.approx(3.0**2 / (2 * 2.5**2), rel=1e-15)


def test_opendp_discrete_gaussian_agrees_for_one_share():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    for sigma, sens in ((1.0, 1), (2.5, 3), (40.0, 7)):
        meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int),
                                  scale=sigma)
        rho = meas.map(sens)  # OpenDP's zCDP map of the integer (discrete) Gaussian
        assert secure_sum_rho(SecureSumEvent(sigma, 1, float(sens), 3)) == pytest.approx(
            rho, rel=1e-12)
        assert ZCDPAccountant().compose(SecureSumEvent(sigma, 1, float(sens), 3)).rho == (
            pytest.approx(rho, rel=1e-12))


def test_one_share_epsilon_is_opendps_for_its_discrete_gaussian():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    for sigma, sens in ((3.0, 1), (40.0, 7)):
        meas = dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(
            dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int), scale=sigma))
        ours = ZCDPAccountant().compose(SecureSumEvent(sigma, 1, float(sens), 3))
        assert ours.epsilon(DELTA) == pytest.approx(meas.map(sens).epsilon(DELTA), rel=1e-3)


def test_large_sigma_is_a_gaussian_of_the_summed_variance():
    event = SecureSumEvent(50.0, 8, 30.0, 100)
    assert secure_sum_tau(50.0, 8) == 0.0  # below the smallest double
    gauss = GaussianEvent(50.0 * math.sqrt(8), 30.0)
    assert ZCDPAccountant().compose(event).epsilon(DELTA) == pytest.approx(
        ZCDPAccountant().compose(gauss).epsilon(DELTA), rel=1e-12)


# -- the bound against the exact Renyi divergence of the summed pmf -----------------------
def summed_logpmf(sigma: float, shares: int, reach: int) -> np.ndarray:
    """The exact log-pmf of a sum of `shares` N_Z(0, sigma^2) on [-reach, reach] per share,
    by convolution in log space (the far tails, where a high order looks, do not underflow)."""
    k = np.arange(-reach, reach + 1)
    one = -k * k / (2 * sigma * sigma)
    one -= logsumexp(one)
    out = one
    for _ in range(shares - 1):
        acc = np.full(out.size + one.size - 1, -np.inf)
        for i, w in enumerate(one):
            acc[i:i + out.size] = np.logaddexp(acc[i:i + out.size], out + w)
        out = acc
    return out


def renyi(logp: np.ndarray, shift: int, alpha: float) -> float:
    """D_alpha(P(. - shift) || P) for a log-pmf on consecutive integers."""
    q = np.concatenate((np.full(shift, -np.inf), logp))
    p = np.concatenate((logp, np.full(shift, -np.inf)))
    keep = np.isfinite(q) & np.isfinite(p)
    return float(logsumexp(alpha * q[keep] + (1 - alpha) * p[keep]) / (alpha - 1))


def reach(sigma: float, shift: int, alpha: float) -> int:
    # the tilted sum peaks near (1 - alpha) shift: cover it with 40 standard deviations
    return int(math.ceil(alpha * shift + 40 * sigma)) + 2


@settings(max_examples=40, deadline=None)
@given(sigma=st.sampled_from([0.5, 0.6, 0.8, 1.0, 1.5, 3.0]), shares=st.integers(1, 5),
       shift=st.integers(1, 3), alpha=st.sampled_from([1.5, 2.0, 4.0, 8.0, 16.0]))
def test_the_bound_holds_for_the_exact_summed_noise(sigma, shares, shift, alpha):
    exact = renyi(summed_logpmf(sigma, shares, reach(sigma, shift, alpha)), shift, alpha)
    event = SecureSumEvent(sigma, shares, float(shift), 1)
    bound = float(secure_sum_rdp(np.array([alpha]), event)[0])
    assert exact <= bound * (1 + 1e-9) + 1e-12
    assert exact <= alpha * secure_sum_rho(event) * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("shares", [2, 5])
def test_the_bound_is_tight_once_sigma_is_a_few_steps(shares):
    # from sigma = 3 steps, tau < 1e-75: the bound is the Gaussian's, within 1e-9 of the truth
    event = SecureSumEvent(3.0, shares, 2.0, 1)
    for alpha in (2.0, 8.0):
        bound = float(secure_sum_rdp(np.array([alpha]), event)[0])
        logp = summed_logpmf(3.0, shares, reach(3.0, 2, alpha))
        assert renyi(logp, 2, alpha) == pytest.approx(bound, rel=1e-6)


# -- composition and calibration ----------------------------------------------------------
def test_tree_and_factorization_events_compose_like_their_gaussian_forms():
    event = SecureSumEvent(1e4, 5, 3e3, 10)
    tree = ZCDPAccountant().compose(TreeAggregationEvent(event, 7))
    assert tree.rho == pytest.approx(7 * secure_sum_rho(event), rel=1e-12)
    assert ZCDPAccountant().compose(RepeatedEvent(event, 7)).rho == tree.rho
    mf = RDPAccountant().compose(FactorizationEvent(event, 2.3, 64))
    assert mf.epsilon(DELTA) == RDPAccountant().compose(event).epsilon(DELTA)


@settings(max_examples=15, deadline=None)
@given(epsilon=st.floats(0.1, 8.0), survivors=st.integers(1, 30), nodes=st.integers(1, 18),
       log_scale=st.integers(-30, -4), dimension=st.integers(1, 50))
def test_calibration_is_certified_and_smallest(epsilon, survivors, nodes, log_scale, dimension):
    scale = 2.0**log_scale
    kw = dict(min_survivors=survivors, scale=scale, dimension=dimension)
    sigma = calibrate_secure_sum_sigma(epsilon, DELTA, 1.0, nodes_per_record=nodes, **kw)

    def eps(s):
        return ZCDPAccountant().compose(secure_sum_event(s, 1.0, **kw), nodes).epsilon(DELTA)

    assert eps(sigma) <= epsilon * (1 + 1e-9)
    if sigma > 0.5:
        assert eps(sigma * (1 - 1e-6)) > epsilon


def test_calibration_carries_the_central_noise_split_over_the_survivors():
    # The shares of n_min parties sum to the central zCDP sigma, up to the rounding slack.
    central = calibrate_gaussian_sigma(1.0, DELTA, 1.0, nodes_per_record=10, accountant="zcdp")
    share = calibrate_secure_sum_sigma(1.0, DELTA, 1.0, min_survivors=6, scale=2.0**-24,
                                       dimension=10, nodes_per_record=10)
    total = share * 2.0**-24 * math.sqrt(6)
    assert total == pytest.approx(central * (1 + math.sqrt(10) * 2.0**-24), rel=1e-6)


def test_collusion_is_paid_with_noise():
    kw = dict(scale=2.0**-20, dimension=4)
    honest = calibrate_secure_sum_sigma(1.0, DELTA, 1.0, min_survivors=8, **kw)
    guarded = calibrate_secure_sum_sigma(1.0, DELTA, 1.0, min_survivors=8, collusion=3, **kw)
    assert guarded == pytest.approx(honest * math.sqrt(8 / 5), rel=1e-6)
    with pytest.raises(InvalidParameterError, match="collusion must be < min_survivors"):
        secure_sum_event(1e4, 1.0, min_survivors=3, scale=2.0**-20, dimension=4, collusion=3)


def test_calibration_refuses_accountants_that_cannot_read_it():
    with pytest.raises(InvalidParameterError, match="supports SecureSumEvent"):
        calibrate_secure_sum_sigma(1.0, DELTA, 1.0, min_survivors=3, scale=2.0**-10,
                                   dimension=2, accountant="exact-gaussian")
    with pytest.raises(InvalidParameterError, match="delta must be a number in \\(0, 1\\)"):
        calibrate_secure_sum_sigma(1.0, 0.0, 1.0, min_survivors=3, scale=2.0**-10, dimension=2)


def test_a_ledger_charges_it_under_zcdp_and_refuses_it_under_the_exact_accountant():
    event = secure_sum_event(3e5, 1.0, min_survivors=4, scale=2.0**-16, dimension=3)
    Ledger("party 0", 1.0, DELTA, accountant="zcdp").charge(event)
    with pytest.raises(UnsupportedEventError, match="SecureSumEvent"):
        Ledger("party 0", 1.0, DELTA, accountant=make_accountant("exact-gaussian")).charge(event)


def test_the_tau_term_is_needed_at_small_sigma():
    # a sum of discrete Gaussians is not a discrete Gaussian: at sigma = 1/2 its divergence
    # exceeds the Gaussian term of the summed variance, and the tau term covers the excess
    event = SecureSumEvent(0.5, 3, 1.0, 1)
    exact = renyi(summed_logpmf(0.5, 3, reach(0.5, 1, 4.0)), 1, 4.0)
    gaussian = 4.0 / (2 * 3 * 0.25)
    assert gaussian * 1.05 < exact <= float(secure_sum_rdp(np.array([4.0]), event)[0])
