"""Gaussian releases: a vector (any array) and a symmetric matrix, with L2 sensitivity.

`sigma` is always the standard deviation of the noise on one entry (never
the variance).  Build from a noise scale, or from a target (epsilon, delta)
with `from_privacy`, which calibrates sigma with the accounting layer.
"""
from __future__ import annotations

import math

import numpy as np

from privbandit.accounting import calibration as calib
from privbandit.accounting.errors import invalid
from privbandit.accounting.events import GaussianEvent
from privbandit.accounting.validation import check_count, check_positive

from ._checks import check_rng, describe, real_array
from ._frozen import Frozen
from .errors import ShapeError
from .samplers import Sampler, resolve_sampler
from .tape import constructed, tap, whiten_symmetric

DEFAULT_MAX_ENTRIES = 2**20
# relative asymmetry tolerated (and removed) in symmetric inputs
_SYMMETRY_TOL = 1e-9


class _GaussianBase(Frozen):
    """Shared construction: sigma, declared sensitivity, sampler, event with grid slack."""

    __slots__ = ("_sigma", "_sensitivity", "_sampler", "_max_entries", "_event")

    def __init__(
        self,
        sigma: float,
        l2_sensitivity: float,
        *,
        sampler: Sampler | None = None,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> None:
        sigma = check_positive("sigma", sigma)
        sens = check_positive("l2_sensitivity", l2_sensitivity)
        sampler = resolve_sampler(sampler)
        max_entries = check_count("max_entries", max_entries)
        event = GaussianEvent(sigma, sens * self._whitening + sampler.l2_slack(
            max_entries))
        for name, value in (("_sigma", sigma), ("_sensitivity", sens), ("_sampler", sampler),
                            ("_max_entries", max_entries), ("_event", event)):
            object.__setattr__(self, name, value)
        constructed(self)

    @classmethod
    def from_privacy(
        cls,
        epsilon: float,
        delta: float,
        l2_sensitivity: float,
        *,
        sampler: Sampler | None = None,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        accountant: str = "exact-gaussian",
    ):
        """The smallest sigma that `accountant` certifies (epsilon, delta)-DP for one release."""
        sens = check_positive("l2_sensitivity", l2_sensitivity)
        slack = resolve_sampler(sampler).l2_slack(check_count("max_entries", max_entries))
        sigma = calib.calibrate_gaussian_sigma(epsilon, delta, sens * cls._whitening + slack,
                                               accountant=accountant)
        return cls(sigma, sens, sampler=sampler, max_entries=max_entries)

    # the factor from the declared sensitivity to the released values' (1: no whitening)
    _whitening = 1.0

    def pair_loss(self, first: list[np.ndarray], second: list[np.ndarray]) -> tuple[float, float]:
        """(mu**2, 0) of two sequences of pre-noise values of this mechanism's releases
        (`tape.pair_loss`): the squared whitened distances over sigma**2, added."""
        mu2 = sum(float(np.sum(self._whiten(a - b) ** 2)) for a, b in zip(first, second,
                                                                           strict=True))
        return mu2 / self._sigma**2, 0.0

    def _whiten(self, diff: np.ndarray) -> np.ndarray:
        return diff

    @property
    def event(self) -> GaussianEvent:
        """One release (sensitivity = declared + the grid sampler's slack)."""
        return self._event

    @property
    def sigma(self) -> float:
        """Standard deviation of the noise on one (off-diagonal) entry."""
        return self._sigma

    @property
    def l2_sensitivity(self) -> float:
        """The declared sensitivity (the event's adds the grid slack)."""
        return self._sensitivity

    @property
    def max_entries(self) -> int:
        return self._max_entries

    @property
    def sampler(self) -> Sampler:
        return self._sampler

    def _check_entries(self, name: str, entries: int, array: np.ndarray) -> None:
        if entries > self._max_entries:
            raise ShapeError(
                f"{name} releases {entries} entries, over max_entries = {self._max_entries} "
                f"(the grid slack in the event covers that many); got {describe(array)}")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(sigma={self._sigma:.6g}, "
                f"l2_sensitivity={self._sensitivity:g}, sampler={self._sampler!r})")


class GaussianVector(_GaussianBase):
    """value + N(0, sigma**2 I) for an array of any shape (the whole array is one release).

    Privacy guarantee
    -----------------
    Neighbouring relation: the caller's; the mechanism needs only that
    neighbouring inputs give values whose difference has L2 norm (over all
    entries; Frobenius for matrices) <= l2_sensitivity.  Privacy measure:
    mu-GDP with mu = sensitivity / sigma (Dong, Roth & Su 2019), hence
    (epsilon, delta)-DP by the analytic Gaussian mechanism (Balle & Wang 2018,
    Theorem 8) and rho-zCDP with rho = mu**2 / 2.  With a grid sampler (the default, or exact) the
    event's sensitivity includes the grid slack sqrt(max_entries) * 2**k,
    and releases of more than `max_entries` entries are refused.  The
    sensitivity of float computations upstream is the caller's to bound.
    Source: Dwork & Roth (2014) Sec. 3.5.3; Balle & Wang (2018).
    """

    __slots__ = ()

    def release(self, value: object, rng: np.random.Generator) -> np.ndarray:
        """`value` plus independent N(0, sigma**2) noise on every entry (same shape)."""
        rng = check_rng(rng)
        x = real_array("value", value)
        self._check_entries("value", x.size, x)
        return tap(self, x, self._sampler._add_gaussian(x, self._sigma, rng))


class SymmetricGaussianMatrix(_GaussianBase):
    """A symmetric matrix plus symmetric noise (Z + Z.T) / sqrt(2), Z_pq ~ N(0, sigma**2).

    Noise: off-diagonal entries have variance sigma**2, diagonal entries
    2 sigma**2, and the released matrix is exactly symmetric (seed 000
    Algorithm 5; Shariff & Sheffet 2018, Sec. 4.2).  Inputs must be symmetric
    (up to a relative 1e-9, removed by (M + M.T) / 2 -- a contraction in the
    Frobenius norm, so it never increases the sensitivity).

    Privacy guarantee
    -----------------
    Neighbouring relation: the caller's; the mechanism needs only that
    neighbouring inputs are symmetric matrices whose difference D has
    Frobenius norm ||D||_F <= l2_sensitivity.  Privacy measure: the release
    is equivalent to the upper triangle, entry (p, q) with noise std sigma
    (p < q) or sqrt(2) sigma (p = q), which is exactly mu-GDP with
    mu = ||D||_F / (sqrt(2) sigma).  The event, GaussianEvent(sigma,
    l2_sensitivity + grid slack), states the looser mu = sensitivity / sigma
    (the paper's analysis; a factor sqrt(2) to spare), so every calibration
    from it is valid.  With a grid sampler, the grid slack covers up to
    `max_entries` released (upper-triangle) entries, D (D + 1) / 2 for a
    D x D matrix.  Sources: seed 000 Algorithm 5 and Section 3; Shariff &
    Sheffet (2018).
    """

    __slots__ = ()

    def release(self, value: object, rng: np.random.Generator) -> np.ndarray:
        """A symmetric (D, D) `value` plus symmetric Gaussian noise (same shape, symmetric)."""
        rng = check_rng(rng)
        x = real_array("value", value)
        if x.ndim != 2 or x.shape[0] != x.shape[1]:
            raise ShapeError(f"value must be a square (D, D) matrix; got {describe(x)}")
        dim = x.shape[0]
        self._check_entries("value", dim * (dim + 1) // 2, x)
        if dim:
            gap = float(np.abs(x - x.T).max())
            if gap > _SYMMETRY_TOL * (1.0 + math.sqrt(float(np.vdot(x, x)))):
                raise invalid("value", f"a matrix with max |x - x.T| = {gap:.3g}",
                              "a symmetric matrix")
        x = (x + x.T) * 0.5
        return tap(self, x, self._sampler._add_symmetric(x, self._sigma, rng))

    _whitening = 1.0 / math.sqrt(2.0)

    def _whiten(self, diff: np.ndarray) -> np.ndarray:
        return whiten_symmetric(diff)
