"""Calibration: the smallest noise a chosen accountant certifies for a target.

A release structure is `releases` adaptive releases, each of which may be a
tree whose record touches `nodes_per_record` nodes (ceil(log2 n) + 1 for a
horizon of n steps); one protected record then meets releases * nodes_per_record
Gaussian (or Laplace) draws of the calibrated scale.
"""
from __future__ import annotations

import math

from scipy.optimize import brentq

from .accountants import make_accountant
from .accountants.gaussian import gaussian_epsilon
from .errors import invalid
from .events import GaussianEvent, LaplaceEvent, RepeatedEvent
from .validation import check_count, check_delta, check_positive


def tree_nodes_per_record(horizon: int) -> int:
    """Nodes of a binary counting tree one record touches over `horizon` steps."""
    horizon = check_count("horizon", horizon)
    return math.ceil(math.log2(horizon)) + 1 if horizon > 1 else 1


def _mu_for(epsilon: float, delta: float) -> float:
    """Largest GDP mu whose exact epsilon at delta is <= epsilon."""
    lo, hi = 1e-8, 1.0
    while gaussian_epsilon(hi, delta) < epsilon:
        hi *= 2.0
    mu = brentq(lambda m: gaussian_epsilon(m, delta) - epsilon, lo, hi, xtol=1e-14, rtol=1e-13)
    while gaussian_epsilon(mu, delta) > epsilon:
        mu *= 1 - 1e-13
    return mu


def calibrate_gaussian_sigma(
    epsilon: float,
    delta: float,
    l2_sensitivity: float,
    releases: int = 1,
    nodes_per_record: int = 1,
    accountant: str = "exact-gaussian",
) -> float:
    """Smallest sigma (standard deviation) the accountant certifies as (epsilon, delta)-DP.

    With the default exact accountant this is the analytic Gaussian mechanism
    (Balle & Wang 2018) applied to the k = releases * nodes_per_record fold
    composition: sigma = l2_sensitivity * sqrt(k) / mu*(epsilon, delta).  Any
    other registered accountant is calibrated by bisection on sigma.
    """
    epsilon = check_positive("epsilon", epsilon)
    delta = check_delta("delta", delta)
    if delta == 0:
        raise invalid("delta", delta, "a number in (0, 1) for a Gaussian release")
    sens = check_positive("l2_sensitivity", l2_sensitivity)
    k = check_count("releases", releases) * check_count("nodes_per_record", nodes_per_record)
    if accountant == "exact-gaussian":
        return sens * math.sqrt(k) / _mu_for(epsilon, delta)
    return _bisect_scale(
        lambda s: RepeatedEvent(GaussianEvent(s, sens), k), epsilon, delta, accountant, sens
    )


def calibrate_laplace_scale(
    epsilon: float, l1_sensitivity: float, releases: int = 1, nodes_per_record: int = 1,
    delta: float = 0.0, accountant: str = "pure-dp",
) -> float:
    """Smallest Laplace scale the accountant certifies (basic composition by default)."""
    epsilon = check_positive("epsilon", epsilon)
    sens = check_positive("l1_sensitivity", l1_sensitivity)
    k = check_count("releases", releases) * check_count("nodes_per_record", nodes_per_record)
    if accountant == "pure-dp":
        return k * sens / epsilon
    return _bisect_scale(
        lambda b: RepeatedEvent(LaplaceEvent(b, sens), k), epsilon, check_delta("delta", delta),
        accountant, sens,
    )


def _bisect_scale(make_event, epsilon, delta, accountant, sens) -> float:
    def spent(scale: float) -> float:
        return make_accountant(accountant).compose(make_event(scale)).epsilon(delta)

    lo, hi = sens * 1e-6, sens
    while spent(hi) > epsilon:
        lo, hi = hi, hi * 2.0
    while spent(lo) <= epsilon:
        lo /= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if spent(mid) > epsilon:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi
