"""Privacy loss distributions (PLD): tight composition by FFT convolution.

A mechanism with dominating pair (P, Q) has privacy loss L = ln(P(o) / Q(o)),
o ~ P, and is (epsilon, delta)-DP exactly for

    delta(epsilon) = E_P[(1 - e^(epsilon - L))_+] + P(L = +inf)

(Sommer, Meiser & Mohammadi 2019, "Privacy loss classes", Lemma 5).  The
adaptive composition of mechanisms is dominated by the product of their
dominating pairs (Zhu, Dong & Wang 2022, Theorem 10), whose loss is the sum of
independent losses: its distribution is the convolution of theirs.  Pairs
used here, both tight and symmetric in add/remove:

- Laplace, pure epsilon0 = sensitivity / scale: P = Lap(0, 1), Q = Lap(epsilon0, 1);
  L has atoms +epsilon0 (mass 1/2) and -epsilon0 (mass e^-epsilon0 / 2) and
  CDF exp(-(epsilon0 - l) / 2) / 2 in between.
- Gaussian, mu = sensitivity / sigma: L ~ N(mu^2 / 2, mu^2).  Gaussian leaves
  are merged exactly first (mu^2 adds: Dong, Roth & Su 2019, Cor. 3.3), so
  they cost one discretization and no convolution.

Pessimistic discretization (Meiser & Mohammadi 2018, "privacy buckets"; the
`pessimistic_estimate` of dp-accounting): the mass of L in ((i-1) h, i h] is put
at i h, mass below the lowest bucket joins it, mass above the highest becomes
+inf.  Every move raises the loss, and delta(epsilon) is non-decreasing in the
loss, so by coupling the discretized composition's delta bounds the true one
from above.  Compositions are FFT convolutions (Koskela, Jalko & Honkela 2020),
k-fold ones by repeated squaring; after each, tails of mass <= 1e-18 are moved
the same pessimistic way.  Float rounding is counted rather than ignored: each
FFT convolution adds to an L1 error bound on the probabilities
24 log2(N) u (|a|_2 |b|_1 + |a|_1 |b|_2) sqrt(n) (N the transform size, n the
output length; Higham 2002, Theorem 24.2, for the three transforms and the
product), which is added to every delta, and sums of non-negative terms are
inflated by a relative 1e-9.  So `delta(epsilon)` is never below the true
value and `epsilon(delta)` never below the true epsilon; the price is a
numerical floor of about 1e-13 on delta for long compositions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.fft
from scipy.special import ndtr

from ..errors import invalid
from ..events import GaussianEvent, LaplaceEvent
from ..validation import check_count, check_positive
from .base import Accountant
from .gaussian import gaussian_delta, gaussian_epsilon

_TAIL = 1e-18  # mass moved (pessimistically) per truncation
_Z = 9.0  # Gaussian standard deviations kept on each side (tail mass ~1e-19)
_MIN_POINTS = 2**16  # buckets a small loss range gets at least (a finer step than h)
_SAFETY = 1e-9  # relative inflation of computed sums of non-negative terms
_FFT_CONSTANT = 24.0
_UNIT_ROUNDOFF = 2.0**-53


@dataclass(frozen=True)
class LossDistribution:
    """A discretized PLD: mass `probs[i]` at loss (offset + i) * step, `inf_mass` at +inf.

    `error` bounds the L1 distance between `probs` and the exact pessimistic
    discretization (float rounding of the FFT convolutions).
    """

    offset: int
    probs: np.ndarray
    step: float
    inf_mass: float
    error: float = 0.0

    @property
    def losses(self) -> np.ndarray:
        return (self.offset + np.arange(self.probs.size)) * self.step

    def compose(self, other: "LossDistribution") -> "LossDistribution":
        """The PLD of the composition (sum of the two independent losses)."""
        a, b = self.probs, other.probs
        n = a.size + b.size - 1
        size = scipy.fft.next_fast_len(n, real=True)
        out = scipy.fft.irfft(scipy.fft.rfft(a, size) * scipy.fft.rfft(b, size), size)[:n]
        np.maximum(out, 0.0, out=out)
        fft_error = (_FFT_CONSTANT * math.log2(size) * _UNIT_ROUNDOFF * math.sqrt(n)
                     * (_norm2(a) * float(b.sum()) + float(a.sum()) * _norm2(b)))
        error = self.error + other.error + self.error * other.error + fft_error
        inf_mass = self.inf_mass + other.inf_mass - self.inf_mass * other.inf_mass
        return _truncate(self.offset + other.offset, out, self.step, inf_mass, error)

    def self_compose(self, count: int) -> "LossDistribution":
        """`count`-fold composition by repeated squaring."""
        result, base = None, self
        while True:
            if count & 1:
                result = base if result is None else result.compose(base)
            count >>= 1
            if not count:
                return result
            base = base.compose(base)

    def delta(self, epsilon: float) -> float:
        """Hockey-stick divergence at `epsilon`, rounded up (see the module docstring)."""
        losses = self.losses
        above = losses > epsilon
        terms = self.probs[above] * -np.expm1(epsilon - losses[above])
        return min(1.0, float(terms.sum()) * (1 + _SAFETY) + self.inf_mass + self.error)

    def epsilon(self, delta: float) -> float:
        """Smallest epsilon >= 0 with self.delta(epsilon) <= delta (inf if none)."""
        budget = (delta - self.inf_mass - self.error) / (1 + _SAFETY)
        if budget <= 0:
            return math.inf
        if self.delta(0.0) <= delta:
            return 0.0
        losses = self.losses
        ell, p = losses[losses > 0], self.probs[losses > 0]
        # bisect over the grid: delta(ell[lo]) > delta >= delta(ell[hi]) (lo = -1: epsilon 0)
        lo, hi = -1, ell.size - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if self.delta(float(ell[mid])) > delta else (lo, mid)
        # on [base, ell[hi]] the buckets above epsilon are hi..: delta = A - e^(eps-base) B
        base = float(ell[lo]) if lo >= 0 else 0.0
        tail_p = float(p[hi:].sum())
        tail_w = float((p[hi:] * np.exp(base - ell[hi:])).sum())
        ratio = (tail_p - budget) / tail_w if tail_w > 0 else 1.0
        eps = min(base + math.log(ratio), float(ell[hi])) if ratio > 1 else base
        # certify with the direct sum, stepping up if rounding left it short
        step = 1e-12 * max(eps, 1.0)
        while self.delta(eps) > delta:
            eps += step
            step *= 2.0
        return eps


def _norm2(x: np.ndarray) -> float:
    return float(np.sqrt(np.dot(x, x)))


def _truncate(offset: int, probs: np.ndarray, step: float, inf_mass: float,
              error: float) -> LossDistribution:
    """Drop tails of mass <= _TAIL: the low one joins the lowest kept bucket, the high one +inf."""
    low = np.cumsum(probs)
    first = int(np.searchsorted(low, _TAIL, side="right"))
    high = np.cumsum(probs[::-1])
    drop = int(np.searchsorted(high, _TAIL, side="right"))
    last = probs.size - drop
    if first >= last:  # everything in one bucket: keep the highest one
        first = last - 1
    kept = probs[first:last].copy()
    kept[0] += low[first - 1] if first else 0.0
    if drop:
        inf_mass = inf_mass + float(high[drop - 1])
    return LossDistribution(offset + first, kept, step, inf_mass, error)


def laplace_pld(epsilon0: float, step: float) -> LossDistribution:
    """Pessimistic PLD of a Laplace release with pure epsilon0 (see the module docstring)."""
    lo, hi = math.ceil(-epsilon0 / step), math.ceil(epsilon0 / step)
    while hi * step < epsilon0:  # the top bucket must not sit below the atom at epsilon0
        hi += 1
    edges = np.arange(lo, hi + 1) * step
    cdf = np.where(edges < -epsilon0, 0.0, 0.5 * np.exp(-(epsilon0 - edges) / 2))
    cdf[-1] = 1.0
    probs = np.diff(cdf, prepend=0.0)
    np.maximum(probs, 0.0, out=probs)
    return LossDistribution(lo, probs, step, 0.0)


def gaussian_pld(mu: float, step: float) -> LossDistribution:
    """Pessimistic PLD of a mu-GDP Gaussian release: L ~ N(mu^2/2, mu^2), tails cut at 9 sd."""
    mean = mu * mu / 2
    lo = math.floor((mean - _Z * mu) / step)
    hi = max(math.ceil((mean + _Z * mu) / step), lo + 1)
    z = (np.arange(lo, hi + 1) * step - mean) / mu
    below, above = ndtr(z), ndtr(-z)  # P(L <= edge), P(L > edge)
    # bucket (edge[i-1], edge[i]]: differences of whichever side is accurate there
    upper = z[1:] > 0
    probs = np.where(upper, above[:-1] - above[1:], below[1:] - below[:-1])
    probs = np.concatenate(([below[0]], np.maximum(probs, 0.0)))
    return LossDistribution(lo, probs, step, float(above[-1]))


class PLDAccountant(Accountant):
    """Privacy loss distribution accounting: the tightest (epsilon, delta) here.

    Leaves: Laplace and Gaussian releases (trees, factorizations, repetitions
    and compositions of them included; see the module docstring for the
    method and its sources).  Exact pieces are carried exactly, so an exact
    calibration is never refused for a discretization step: Gaussian
    releases alone have an exactly known PLD (L ~ N(mu^2 / 2, mu^2)), answered
    by the analytic Gaussian (as `ExactGaussianAccountant`); Laplace
    releases alone never spend more than the sum of their epsilons (basic
    composition, exact at delta = 0).  Mixtures are discretized:
    `value_discretization_interval` is the largest loss grid step h (default
    1e-4, dp-accounting's); each release's loss is rounded up by less than a
    step, so epsilon is at most about (number of non-Gaussian releases + 1)
    steps above the exact value.  The step is refined so that the composed
    loss spans at least 2**16 buckets (a small epsilon keeps its relative
    accuracy: two Laplace releases of epsilon 0.01 are 2e-4 wide, not two
    steps of 1e-4), and coarsened so that it spans at most `max_points`.  With
    delta = 0 only pure-DP (Laplace) compositions have a finite answer, the
    sum of their epsilons (exact for delta = 0).  Cost: one discretization
    per distinct leaf and O(log count) FFT convolutions, computed once per
    composed state and cached.
    """

    name = "pld"
    needs_delta = True
    leaf_costs = {
        GaussianEvent: lambda e, k: ("gaussian", e.mu * e.mu * k),
        LaplaceEvent: lambda e, k: ("laplace", (e.pure_epsilon, k)),
    }

    def __init__(self, value_discretization_interval: float = 1e-4,
                 max_points: int = 2**18) -> None:
        self.value_discretization_interval = _check_interval(value_discretization_interval)
        self.max_points = check_count("max_points", max_points, minimum=1024)
        self._cache: tuple | None = None
        super().__init__()

    def _initial_state(self) -> tuple[float, tuple]:
        return (0.0, ())  # (total Gaussian mu^2, sorted ((epsilon0, count), ...))

    def _add(self, state: tuple[float, tuple], cost) -> tuple[float, tuple]:
        kind, value = cost
        mu2, laplace = state
        if kind == "gaussian":
            return (mu2 + value, laplace)
        counts = dict(laplace)
        eps0, k = value
        counts[eps0] = counts.get(eps0, 0) + k
        return (mu2, tuple(sorted(counts.items())))

    def _step(self) -> float:
        """The loss grid step for the composed state.

        The requested interval, refined so the composed loss spans at least
        `_MIN_POINTS` buckets, coarsened so it spans at most `max_points`, and
        shrunk to divide epsilon0 when all Laplace releases are alike and epsilon0 is at
        least a step (their atoms then sit on the grid, unrounded).
        """
        mu2, laplace = self._state
        span = 2 * _Z * math.sqrt(mu2) + sum(
            min(2 * k * e, 2 * _Z * math.sqrt(k) * e + 2 * e) for e, k in laplace)
        step = max(min(self.value_discretization_interval, span / _MIN_POINTS),
                   span / self.max_points)
        if len(laplace) == 1 and laplace[0][0] >= step:
            # put the Laplace atoms on the grid (no rounding for them); the step shrinks by
            # less than half, so the grid keeps within 2 max_points
            step = laplace[0][0] / math.ceil(laplace[0][0] / step)
        return step

    def loss_distribution(self) -> LossDistribution:
        """The composed, discretized PLD of everything composed so far (cached)."""
        if self._cache is not None and self._cache[0] is self._state:
            return self._cache[1]
        mu2, laplace = self._state
        step = self._step()
        parts = [laplace_pld(e, step).self_compose(k) for e, k in laplace]
        if mu2 > 0:
            parts.append(gaussian_pld(math.sqrt(mu2), step))
        pld = parts[0]
        for part in parts[1:]:
            pld = pld.compose(part)
        self._cache = (self._state, pld)
        return pld

    def _epsilon(self, delta: float) -> float:
        mu2, laplace = self._state
        if not laplace:  # Gaussian releases alone: their PLD is known exactly
            return gaussian_epsilon(math.sqrt(mu2), delta)
        pure = math.inf if mu2 > 0 else sum(e * k for e, k in laplace)
        if delta == 0.0:
            return pure
        return min(pure, self.loss_distribution().epsilon(delta))

    def _delta(self, epsilon: float) -> float:
        mu2, laplace = self._state
        if not laplace:
            return gaussian_delta(math.sqrt(mu2), epsilon)
        if mu2 == 0 and epsilon >= sum(e * k for e, k in laplace):
            return 0.0  # pure DP: no loss exceeds the sum of the epsilons
        return self.loss_distribution().delta(epsilon)

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["_cache"] = None
        return state

    def __repr__(self) -> str:
        return (f"PLDAccountant(value_discretization_interval="
                f"{self.value_discretization_interval:g}, releases={self.releases})")


def _check_interval(value: object) -> float:
    step = check_positive("value_discretization_interval", value)
    if step > 1.0:
        raise invalid("value_discretization_interval", value, "a number in (0, 1]")
    return step
