"""Distributed discrete Gaussian noise: each party's share, the sum's variance, wrap-around.

Every party adds an independent share N_Z(0, sigma**2) per entry (grid steps)
to its encoded vector; the aggregator only ever sees the sum of the shares of
the parties that took part.  Any `min_survivors` shares, less those a
coalition knows, must carry the whole noise, so the shares are calibrated at
that count (`accounting.calibrate_secure_sum_sigma`) and more survivors only
add noise (a sum of more shares is the smaller sum plus independent noise:
post-processing).

Why the distributed discrete Gaussian and not Skellam.  Both are integer noises
whose sums a secure aggregation can carry.  A sum of Skellam shares is
exactly Skellam (Agarwal, Kairouz & Liu 2021), which makes its accounting
exact, but its RDP bound carries a higher-order term and it needs exact
Poisson draws, which this project does not have.  The discrete Gaussian has
an exact, vectorized, reproducible sampler here already
(`samplers.discrete_gaussian_integers`), one share is exactly the discrete
Gaussian of Canonne, Kamath & Steinke (2020), and a sum of n shares is as
private as a Gaussian of the summed variance up to Kairouz, Liu & Steinke's
(2021) tau term, which vanishes (below 1e-300) once sigma >= 9 grid steps,
as on the fine grids used here.

Wrap-around.  Sums are taken modulo m = 2**bits and decoded from the centred
representative in [-m/2, m/2).  The decoded value is wrong exactly when the
integer sum S leaves that range.  Each entry of S is a signal of magnitude at
most A plus a sum of n discrete Gaussians, which is sub-Gaussian with variance
proxy n sigma**2 (Canonne, Kamath & Steinke 2020, Corollary 9), so
P(wrap) <= entries * 2 exp(-(m/2 - A)**2 / (2 n sigma**2)) (`wrap_probability`).
The reduction is a function of S: it never weakens privacy, only accuracy.
"""
from __future__ import annotations

import math

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_positive

from .samplers import _discrete_gaussian_integers, discrete_gaussian_integers

MAX_BITS = 64
MAX_PARTIES = 2**20
MAX_SHARE_SIGMA = 2.0**51  # with the margin of at most MAX_PARTIES shares: the sampler's 2**52


def check_share_sigma(sigma: float, parties: int) -> float:
    """A share std the sampler draws for up to MAX_PARTIES parties, or an error naming it."""
    sigma = check_positive("share_sigma", sigma)
    if check_count("parties", parties) > MAX_PARTIES:
        raise invalid("parties", parties, f"an integer in [1, {MAX_PARTIES}]")
    if sigma > MAX_SHARE_SIGMA:
        raise invalid("share_sigma", sigma, "at most 2**51 grid steps (use a coarser scale)")
    return sigma


def draw_shares(sigma: float, parties: int, entries: int, rng: np.random.Generator) -> np.ndarray:
    """(parties, entries) int64 shares N_Z(0, sigma**2), drawn to be summed over the parties."""
    parties = check_count("parties", parties)
    return discrete_gaussian_integers(sigma, (parties, check_count("entries", entries, 0)), rng,
                                      summed=parties)


def _draw_shares(sigma: float, parties: int, entries: int, rng) -> np.ndarray:
    """`draw_shares` of validated arguments (the protocol validates once, at construction)."""
    return _discrete_gaussian_integers(sigma, (parties, entries), rng, parties)


def share_variance(sigma: float, parties: int) -> float:
    """The exact variance of one share as `draw_shares` draws it (its margin included)."""
    return discrete_gaussian_variance(
        check_positive("sigma", sigma) * (1.0 + check_count("parties", parties) * 2.0**-20))


def discrete_gaussian_variance(sigma: float) -> float:
    """The exact variance of N_Z(0, sigma**2): below sigma**2, equal to it in floats from
    sigma = 9 (the difference falls like exp(-2 pi**2 sigma**2))."""
    sigma = check_positive("sigma", sigma)
    if sigma >= 9.0:
        return sigma * sigma
    k = np.arange(-math.ceil(40 * sigma) - 10, math.ceil(40 * sigma) + 11, dtype=float)
    w = np.exp(-k * k / (2 * sigma * sigma))
    return float(np.dot(w, k * k) / w.sum())


def wrap_probability(signal_bound: float, sigma: float, parties: int, entries: int,
                     bits: int) -> float:
    """Bound on P(some entry of the sum leaves [-2**(bits-1), 2**(bits-1))) (module docstring).

    signal_bound: the largest magnitude of an entry of the noiseless encoded sum (steps).
    """
    half = math.ldexp(1.0, check_count("bits", bits) - 1)
    gap = half - check_positive("signal_bound", signal_bound)
    if gap <= 0:
        return 1.0
    spread = 2 * check_count("parties", parties) * check_positive("sigma", sigma) ** 2
    log_p = math.log(2 * check_count("entries", entries)) - gap * gap / spread
    return math.exp(min(0.0, log_p))


def bits_needed(signal_bound: float, sigma: float, parties: int, entries: int,
                probability: float) -> int:
    """The fewest modulus bits whose `wrap_probability` is at most `probability`."""
    check_positive("probability", probability)
    for bits in range(2, 4 * MAX_BITS):
        if wrap_probability(signal_bound, sigma, parties, entries, bits) <= probability:
            return bits
    return 4 * MAX_BITS
