"""Laplace-noised per-arm means of bounded rewards (seed 002, CDP-MAB).

An agent that pulled each of K arms n times releases the K empirical means,
each plus Laplace noise of scale (hi - lo) / (n epsilon).  See
`docs/mechanisms.md` and `docs/fedmab.md` ("Constants").
"""
from __future__ import annotations

import math

import numpy as np

from privbandit.accounting.events import LaplaceEvent
from privbandit.accounting.validation import check_count, check_positive

from ._checks import check_choice, check_interval, check_rng, describe, real_array
from ._frozen import Frozen
from .errors import OutOfBoundsError, ShapeError
from .samplers import Sampler, resolve_sampler
from .tape import constructed, laplace_loss, tap

_UNIT_ROUNDOFF = 2.0**-53


def pairwise_mean(values: np.ndarray) -> np.ndarray:
    """Mean over the last axis by balanced pairwise summation (vectorized).

    Every value passes through at most ceil(log2 n) float additions and one
    division, so the result is within gamma_(ceil(log2 n) + 1) * max|value| of
    the exact mean (Higham 2002, Sec. 4.2); `LaplaceMeans` counts that error
    in its sensitivity.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[-1]
    total = values
    while total.shape[-1] > 1:
        if total.shape[-1] % 2:
            total = np.concatenate([total, np.zeros_like(total[..., :1])], axis=-1)
        total = total[..., 0::2] + total[..., 1::2]
    return total[..., 0] / n


def mean_float_slack(lo: float, hi: float, n: int) -> float:
    """How far float rounding can move two neighbours' `pairwise_mean`s apart (beyond (hi-lo)/n)."""
    ops = math.ceil(math.log2(n)) + 1 if n > 1 else 1
    gamma = ops * _UNIT_ROUNDOFF / (1 - ops * _UNIT_ROUNDOFF)
    return 2.0 * gamma * max(abs(lo), abs(hi))


class LaplaceMeans(Frozen):
    """Per-arm means of rewards in [lo, hi] over n samples each, released with Laplace noise.

    `release(rewards, rng)` takes raw rewards of shape (..., K, n) and returns
    noisy means of shape (..., K); `release_means(means, rng)` takes means
    the caller already computed from in-bound rewards, shape (..., K).  Every
    K-vector along the leading axes is one release described by `event`
    (charge a ledger once per vector, or once per disjoint dataset under
    parallel composition).  Rewards (or means) outside [lo, hi] are clipped
    into it (`out_of_bounds="clip"`) or refused with OutOfBoundsError
    (`"reject"`); never passed through.

    Privacy guarantee
    -----------------
    Neighbouring relation: agent-level (seed 002) -- two reward histories
    that differ in one reward of one arm (replace-one).  Sensitivity: that
    arm's mean moves by at most (hi - lo) / n and no other arm's moves, so
    the L1 sensitivity of the K-vector is (hi - lo) / n.  The event adds two
    slacks: float rounding of the pairwise mean (`mean_float_slack`, about
    1e-15 (hi - lo) relative) and the grid samplers' rounding (default or exact) of the one
    differing coordinate (2**k).  Mechanism: Laplace noise of scale
    sensitivity / epsilon per arm (variance 2 scale**2).  Privacy measure:
    pure epsilon-DP (Dwork, McSherry, Nissim & Smith 2006); a grid sampler
    makes it the discrete Laplace on the 2**k grid, exactly epsilon-DP.
    Assumptions: each reward enters one release; for `release_means`, the
    means are averages of n in-bound rewards computed with `pairwise_mean`
    (or more accurately).  Source: seed 002 (Li & Song), CDP-MAB local epoch
    means y = x + Lap(1 / (epsilon n)) for rewards in [0, 1].
    """

    __slots__ = ("_epsilon", "_lo", "_hi", "_n", "_mode", "_sampler", "_event")

    def __init__(
        self,
        epsilon: float,
        lo: float,
        hi: float,
        n: int,
        *,
        out_of_bounds: str = "clip",
        sampler: Sampler | None = None,
    ) -> None:
        eps = check_positive("epsilon", epsilon)
        lo, hi = check_interval(lo, hi)
        n = check_count("n", n)
        mode = check_choice("out_of_bounds", out_of_bounds, ("clip", "reject"))
        sampler = resolve_sampler(sampler)
        sens = (hi - lo) / n + mean_float_slack(lo, hi, n) + sampler.l1_slack(1)
        for name, value in (("_epsilon", eps), ("_lo", lo), ("_hi", hi), ("_n", n),
                            ("_mode", mode), ("_sampler", sampler),
                            ("_event", LaplaceEvent(sens / eps, sens))):
            object.__setattr__(self, name, value)
        constructed(self)

    # -- releases -------------------------------------------------------------------
    def release(self, rewards: object, rng: np.random.Generator) -> np.ndarray:
        """Noisy per-arm means of raw rewards (..., K, n) -> (..., K)."""
        rng = check_rng(rng)
        x = real_array("rewards", rewards)
        if x.ndim < 2 or x.shape[-1] != self._n:
            raise ShapeError(
                f"rewards must have shape (..., K, n) with n = {self._n}; got {describe(x)}")
        means = pairwise_mean(self._bounded("rewards", x))
        return tap(self, means, self._sampler._add_laplace(means, self.scale, rng))

    def release_means(self, means: object, rng: np.random.Generator) -> np.ndarray:
        """Noisy versions of means (..., K) already computed from n in-bound rewards each."""
        rng = check_rng(rng)
        m = real_array("means", means)
        if m.ndim < 1:
            raise ShapeError(f"means must have shape (..., K); got {describe(m)}")
        m = self._bounded("means", m)
        return tap(self, m, self._sampler._add_laplace(m, self.scale, rng))

    def pair_loss(self, first: list[np.ndarray], second: list[np.ndarray]) -> tuple[float, float]:
        """(0, epsilon): the pure-DP loss of two sequences of pre-noise means
        (`tape.pair_loss`), sum of ||difference||_1 / scale (basic composition)."""
        return laplace_loss(first, second, self.scale)

    def _bounded(self, name: str, x: np.ndarray) -> np.ndarray:
        outside = (x < self._lo) | (x > self._hi)
        if not outside.any():
            return x
        if self._mode == "clip":
            return np.clip(x, self._lo, self._hi)
        raise OutOfBoundsError(
            f"{name} must lie in [lo, hi] = [{self._lo:g}, {self._hi:g}] "
            f"(out_of_bounds='reject'); got {int(outside.sum())} entries outside, "
            f"e.g. {float(x[outside][0])!r}")

    # -- read-only view -------------------------------------------------------------
    @property
    def event(self) -> LaplaceEvent:
        """One release of a K-vector of means."""
        return self._event

    @property
    def scale(self) -> float:
        """The Laplace scale b (noise variance 2 b**2)."""
        return self._event.scale

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def l1_sensitivity(self) -> float:
        """The declared sensitivity (hi - lo) / n (the event's adds the rounding slack)."""
        return (self._hi - self._lo) / self._n

    @property
    def lo(self) -> float:
        return self._lo

    @property
    def hi(self) -> float:
        return self._hi

    @property
    def n(self) -> int:
        return self._n

    @property
    def out_of_bounds(self) -> str:
        return self._mode

    @property
    def sampler(self) -> Sampler:
        return self._sampler

    def __repr__(self) -> str:
        return (f"LaplaceMeans(epsilon={self._epsilon:g}, lo={self._lo:g}, hi={self._hi:g}, "
                f"n={self._n}, scale={self.scale:.6g}, sampler={self._sampler!r})")
