"""Epsilon lower bounds from the guesses of a one-run (canary) audit.

    snj_p_value(canaries, guesses, correct, epsilon, delta) -> p
    snj_epsilon(canaries, guesses, correct, delta, confidence) -> epsilon lower bound
    gdp_mu(canaries, guesses, correct, confidence) -> mu lower bound
    gdp_epsilon(canaries, guesses, correct, delta, confidence) -> epsilon lower bound
    gdp_along(canaries, guesses, correct, delta, confidence) -> gdp_mu as epsilon, alone

Setting (Steinke, Nasr & Jagielski, "Privacy Auditing with One (1) Training
Run", NeurIPS 2023, Section 3): m canaries, each included by an independent
fair coin; one run of an (epsilon, delta)-DP pipeline; the auditor guesses
r of the coins from the output (abstaining on the others) and W of its
guesses are right.  Their theorem: for every v,

    P[W >= v] <= P[Bin(r, q) >= v] + 2 m delta max_{i=1..v} P[v - i <= Bin(r, q) < v] / i,

q = e^eps / (1 + e^eps) (the accuracy of eps-DP randomized response).  So
the right-hand side at the observed count is a p-value for the claim
"(eps, delta)-DP", growing with eps; `snj_epsilon` is the largest eps whose
p-value is <= 1 - confidence (bisection, as in their reference procedure),
0 when even eps = 0 is not rejected.  No assumption on the pipeline.

GDP variant (`gdp_mu`): a mu-GDP pipeline (Dong, Roth & Su 2019) is
(eps', delta_mu(eps'))-DP for *every* eps' (the exact Gaussian curve,
`accounting.accountants.gaussian.gaussian_delta`), so the theorem above
bounds the same event P[W >= v] for each eps' at once, and the smallest of
those bounds is a p-value for "mu-GDP" (one event, no multiple testing).
`gdp_mu` is the largest mu whose p-value is <= 1 - confidence, and
`gdp_epsilon` converts it to epsilon at `delta` through the same curve (or
gives `snj_epsilon` at that delta, when larger: it holds without the
assumption).  It assumes the pipeline's trade-off curve is Gaussian
(Gaussian noise), as the many-run `GaussianDPTester` does.  This is the GDP variant of the
Steinke-Nasr-Jagielski bound; the f-DP analysis of Mahloujifar, Melis &
Chaudhuri (ICML 2025), tighter for Gaussian pipelines, is
`privbandit.audits.one_run_fdp`.

The count bound is never tighter than all guesses right (`correct ==
guesses`): that is each method's *ideal* bound for the m and r used.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import expit, log_ndtr
from scipy.stats import binom

from privbandit.accounting.accountants.gaussian import gaussian_epsilon
from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_delta

# eps' at which a GDP claim is read: fine where guesses are accurate, then coarser
_EPS_GRID = np.concatenate([np.linspace(0.0, 4.0, 161), np.linspace(4.05, 16.0, 120)])
_BISECTION_STEPS = 60


def _check_counts(canaries: int, guesses: int, correct: int) -> tuple[int, int, int]:
    m = check_count("canaries", canaries)
    r = check_count("guesses", guesses, minimum=0)
    v = check_count("correct", correct, minimum=0)
    if not v <= r <= m:
        raise invalid("correct", (correct, guesses, canaries),
                      "counts with correct <= guesses <= canaries")
    return m, r, v


def _p_values(m: int, r: int, v: int, eps: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """The theorem's bound on P[W >= v] at each (eps, delta) pair (arrays of one shape)."""
    q = expit(eps)
    tail = binom.sf(v - 1, r, q)  # P[Bin(r, q) >= v]
    if v == 0:
        return np.ones_like(q)
    i = np.arange(1, v + 1)
    below = binom.cdf(v - 1, r, q[..., None]) - binom.cdf(v - 1 - i, r, q[..., None])
    spread = np.max(below / i, axis=-1)  # max_i P[v - i <= Bin < v] / i
    return np.minimum(tail + 2.0 * m * delta * spread, 1.0)


def snj_p_value(canaries: int, guesses: int, correct: int, epsilon: float,
                delta: float) -> float:
    """Upper bound on P[W >= correct] for an (epsilon, delta)-DP pipeline (the theorem)."""
    m, r, v = _check_counts(canaries, guesses, correct)
    return float(_p_values(m, r, v, np.array([float(epsilon)]), np.array([delta]))[0])


def _largest(rejected, hi: float = 1.0) -> float:
    """Largest x >= 0 with rejected(x) true, for a predicate true on [0, x*) (bisection)."""
    if not rejected(0.0):
        return 0.0
    while rejected(hi):
        hi *= 2.0
        if hi > 1e3:
            return math.inf
    lo = 0.0
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if rejected(mid) else (lo, mid)
    return lo


def snj_epsilon(canaries: int, guesses: int, correct: int, delta: float,
                confidence: float) -> float:
    """Largest epsilon that the guesses refute at `confidence` (see the module docstring)."""
    m, r, v = _check_counts(canaries, guesses, correct)
    delta, alpha = check_delta("delta", delta), 1.0 - _confidence(confidence)
    return _largest(lambda e: _p_values(m, r, v, np.array([e]), np.array([delta]))[0] <= alpha)


def _gdp_p_value(m: int, r: int, v: int, mu: float) -> float:
    if mu <= 0.0:  # perfect privacy: guesses are fair coins
        return float(_p_values(m, r, v, np.zeros(1), np.zeros(1))[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        a = log_ndtr(-_EPS_GRID / mu + mu / 2)
        b = _EPS_GRID + log_ndtr(-_EPS_GRID / mu - mu / 2)
        delta = np.exp(a) * -np.expm1(np.minimum(b - a, 0.0))
    return float(np.min(_p_values(m, r, v, _EPS_GRID, delta)))


def gdp_mu(canaries: int, guesses: int, correct: int, confidence: float) -> float:
    """Largest mu that the guesses refute at `confidence`, for Gaussian trade-off curves."""
    m, r, v = _check_counts(canaries, guesses, correct)
    alpha = 1.0 - _confidence(confidence)
    return _largest(lambda mu: _gdp_p_value(m, r, v, mu) <= alpha, 0.5)


def gdp_epsilon(canaries: int, guesses: int, correct: int, delta: float,
                confidence: float) -> float:
    """`gdp_mu` as an epsilon at `delta` (> 0) through the exact Gaussian curve."""
    # the (eps, delta) bound holds without the assumption: never report less
    return max(gdp_along(canaries, guesses, correct, delta, confidence),
               snj_epsilon(canaries, guesses, correct, delta, confidence))


def gdp_along(canaries: int, guesses: int, correct: int, delta: float,
              confidence: float) -> float:
    """`gdp_mu` read at `delta` (> 0) along the exact Gaussian curve, alone."""
    return along_gaussian(gdp_mu(canaries, guesses, correct, confidence), delta, "GDP")


def along_gaussian(mu: float, delta: float, what: str) -> float:
    """A refuted mu as the epsilon at `delta` (> 0) of the exact Gaussian curve."""
    delta = check_delta("delta", delta)
    if delta <= 0.0:
        raise invalid("delta", delta, f"a number in (0, 1) for the {what} bound")
    return 0.0 if mu <= 0.0 else gaussian_epsilon(mu, delta)


def _confidence(confidence: object) -> float:
    c = check_delta("confidence", confidence)
    if c <= 0.0:
        raise invalid("confidence", confidence, "a number in (0, 1)")
    return c
