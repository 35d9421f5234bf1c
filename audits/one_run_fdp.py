"""The f-DP one-run bound for Gaussian trade-off curves (mu-GDP).

    fdp_tail_bound(canaries, guesses, correct, mu) -> the largest P[W >= correct] under G_mu
    fdp_refutes(canaries, guesses, correct, mu, level) -> bool
    fdp_mu(canaries, guesses, correct, confidence) -> mu lower bound
    fdp_epsilon(canaries, guesses, correct, delta, confidence) -> epsilon lower bound

Source: Mahloujifar, Melis & Chaudhuri, "Auditing f-Differential Privacy in
One Run" (ICML 2025, PMLR 267:42615-42641; arXiv 2410.22235): their
analysis of the guessing game with abstentions and its numerical procedure
(the recursion over the number of right guesses).  Same setting as
`one_run_bounds`: m canaries in or out by independent fair coins, one run,
r guesses, W of them right.  The claim tested is that the pipeline is
G_mu-DP with respect to each canary, G_mu(x) = Phi(Phi^-1(1 - x) - mu) the
Gaussian trade-off curve (Dong, Roth & Su 2019).

Derivation.  Write g(x) = Phi(Phi^-1(x) - mu): an event of probability x
when a canary is in has probability >= g(x) when it is out, and the other
way round (G_mu is symmetric); g is convex and increasing.  Fix canary j
and t, and take the event A = "j is guessed and at least t of the other
guesses are right": it depends on the output and on the other coins only,
so flipping coin j (the others fixed) moves its probability as G_mu allows.
Averaging over j's fair coin and over the m canaries (convexity of g, twice):

    H_t >= g(R_{t+1}),   R_t = E[W 1{W >= t}] / m,   H_t = E[(r - W) 1{W >= t}] / m,

since summing "j right and A" over j counts W 1{W >= t + 1} and "j wrong and A"
counts (r - W) 1{W >= t}.  Besides, R_t - R_{t+1} = t p_t / m and
H_t - H_{t+1} = (r - t) p_t / m (p_t = P[W = t]), and R_0 + H_0 = r / m.

Suppose P[W >= v] = tau.  The least guess mass these constraints allow
puts tau at W = v (R_v = tau v / m, H_v = tau (r - v) / m) and spends no
more below it than forced, down to t = 0:

    H_t = max(H_{t+1}, g(R_{t+1})),   R_t = R_{t+1} + t / (r - t) (H_t - H_{t+1}).

If R_0 + H_0 > r / m, no distribution of W is consistent with G_mu and
P[W >= v] >= tau: `fdp_refutes` is that check at tau = 1 - confidence.
`fdp_tail_bound` is the largest consistent tau (bisection; the total
grows with tau), the f-DP counterpart of `snj_p_value`.  A convex
program over (p_0 .. p_r) with the same constraints gives the same value
(tests/audits/test_one_run_fdp.py).  `fdp_mu` is the largest mu refuted
(0 when mu = 0, the fair-coin case, is not), `fdp_epsilon` converts it to
epsilon at `delta` along the exact Gaussian curve.

How it compares.  The Steinke-Nasr-Jagielski bound read along the Gaussian
curve (`one_run_bounds.gdp_mu`) only uses that G_mu lies above each
(eps', delta'(eps')) curve; the recursion uses G_mu itself, and refutes
more wherever the guesses carry signal (the tests check it on a grid of
(m, r, v)).  Near chance (refuted mu below about 0.05) the binomial tail of
Steinke et al. can be the smaller, which is why the one-run audit's "fdp"
method reports the largest of the three bounds: each refutes exactly when
W reaches a threshold, so for a mu-GDP pipeline the largest still exceeds
the truth with probability <= 1 - confidence (the union of nested events
is the largest of them).  Like `gdp_mu` it assumes a Gaussian trade-off
curve (additive Gaussian noise) and needs delta > 0 for a finite epsilon.
"""
from __future__ import annotations

from scipy.special import ndtr, ndtri

from .one_run_bounds import _check_counts, _confidence, _largest, along_gaussian

_TAU_STEPS = 50


def _budget(m: int, r: int) -> float:
    """The guesses' mass r / m, with room for rounding (a tie is never a refutation)."""
    return r / m * (1.0 + 1e-12)


def _least_mass(m: int, r: int, v: int, mu: float, tau: float) -> float:
    """R_0 + H_0 of the recursion, or any value above the budget once it exceeds it."""
    budget = _budget(m, r)
    right, wrong = tau * v / m, tau * (r - v) / m
    for t in range(v - 1, -1, -1):
        step = max(0.0, float(ndtr(ndtri(min(right, 1.0)) - mu)) - wrong)
        right, wrong = right + t / (r - t) * step, wrong + step
        if right + wrong > budget:  # the total only grows as t falls
            break
    return right + wrong


def fdp_refutes(canaries: int, guesses: int, correct: int, mu: float, level: float) -> bool:
    """True when no G_mu-DP pipeline has P[W >= correct] >= level (see the module docstring)."""
    m, r, v = _check_counts(canaries, guesses, correct)
    if v == 0:
        return False
    return _least_mass(m, r, v, max(float(mu), 0.0), float(level)) > _budget(m, r)


def fdp_tail_bound(canaries: int, guesses: int, correct: int, mu: float) -> float:
    """Largest P[W >= correct] a G_mu-DP pipeline allows (bisection on the recursion)."""
    m, r, v = _check_counts(canaries, guesses, correct)
    if not fdp_refutes(m, r, v, mu, 1.0):
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(_TAU_STEPS):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if fdp_refutes(m, r, v, mu, mid) else (mid, hi)
    return hi


def fdp_mu(canaries: int, guesses: int, correct: int, confidence: float) -> float:
    """Largest mu that the guesses refute at `confidence` (Gaussian trade-off curves)."""
    m, r, v = _check_counts(canaries, guesses, correct)
    level = 1.0 - _confidence(confidence)
    return _largest(lambda mu: fdp_refutes(m, r, v, mu, level), 0.5)


def fdp_epsilon(canaries: int, guesses: int, correct: int, delta: float,
                confidence: float) -> float:
    """`fdp_mu` as an epsilon at `delta` (> 0) through the exact Gaussian curve, alone."""
    return along_gaussian(fdp_mu(canaries, guesses, correct, confidence), delta, "f-DP")
