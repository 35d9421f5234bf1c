"""Matrix-factorization continual counting, streamed through a buffered-linear-Toeplitz factor.

`MatrixFactorization` releases (C x)_t + z_t at every step, the noise added by
the sampler to the value (C x)_t, and returns the prefix estimate
(B y)_t = (A C^-1 y)_t, computed afterwards as post-processing: the running
sum of w = C^-1 y.  C is the BLT approximation of the square root of the
prefix-sum matrix (`blt.sqrt_blt`), so both C x and C^-1 y need only
`buffers` arrays of the increment's shape, whatever the horizon.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from privbandit.accounting.events import FactorizationEvent, GaussianEvent
from privbandit.accounting.validation import check_count

from .blt import BufferedToeplitz, sqrt_blt
from .streaming import ContinualRelease, gamma

DEFAULT_BUFFERS = 8


class FactorizationNoise:
    """The prefix-noise structure of a factorization stream (`_factor`, `_horizon`), in units
    of one release's variance: prefix t carries sum_(k < t) b_k**2 (shared by the central
    and the secure factorization streams)."""

    def _variance_units(self, step: int) -> float:
        return float(self._variance_table()[step - 1])

    def _variance_units_all(self) -> np.ndarray:
        return self._variance_table().copy()

    def _max_variance_units(self) -> float:
        return float(self._variance_table()[-1])  # b_k**2 >= 0: the variance grows with t

    def _variance_table(self) -> np.ndarray:
        return _prefix_units(self._factor, self._horizon)


class MatrixFactorization(FactorizationNoise, ContinualRelease):
    """Noisy prefix sums by a streamed Toeplitz factorization A = B C (the "mf" mechanism).

    Same arguments as `TreePrivatizer` (shape, horizon, sigma or epsilon and
    delta, l2_sensitivity, symmetric, on_excess, psd_shift, psd_alpha,
    clip_norm, sampler; calibration "tight" only), plus `buffers` (default
    8, at most 64): the number of buffers of the BLT factor C, the memory of
    the stream (2 buffers + 1 arrays of the increment's shape).  With 8
    buffers the worst-prefix noise std is within 0.3% of the exact square
    root's at horizons up to 10**6 (`blt` module docstring); at T = 10**5 it
    is about 0.28 times the binary tree's for the same (epsilon, delta).

    Prefix noise: (B z)_t, per-entry (off-diagonal) variance
    sigma**2 sum_(k < t) b_k**2, exactly for the C used (`prefix_variance`);
    the diagonal of symmetric noise has twice that.  It grows with t, so
    `max_prefix_variance` is the variance at the horizon.

    Privacy guarantee
    -----------------
    Neighbouring relation: record-level -- two streams that differ in one
    increment, the difference having L2 (Frobenius) norm <= l2_sensitivity
    (clip_norm as for `TreePrivatizer`).  Mechanism: the whole stream of
    releases y = C x + z, z with independent per-entry N(0, sigma**2)
    (symmetric noise for symmetric increments), is ONE Gaussian mechanism on
    C x; changing increment s moves C x by column s of C times the
    difference, so the L2 sensitivity is l2_sensitivity times the largest
    column norm of C over the horizon (its first column, C Toeplitz),
    plus the float error of computing C x in the stream (`blt.float_error`,
    on both neighbours, over all steps: 2 sqrt(horizon) per-step bounds)
    and the sampler's grid slack over horizon x entries values.  Every
    prefix estimate is post-processing.  Event:
    FactorizationEvent(GaussianEvent(sigma, s), column_norm, horizon); the
    accountants read the Gaussian, so calibration from (epsilon, delta) is
    the exact analytic Gaussian's (tight).  A unit contributing k increments
    (a user's whole stream, any positions) is charged `user_level_event(k)`:
    sensitivity k s by the triangle inequality (k-fold participation).
    Assumptions: the horizon counts releases (`add` calls) and is fixed in
    advance.  Sources: Denisov, McMahan, Rush, Smith & Thakurta (2022) for
    the mechanism; Henzinger, Upadhyay & Upadhyay (SODA 2023) and
    Fichtenberger, Henzinger & Upadhyay (ICML 2023) for the square root;
    Dvijotham, McKenna et al. (2024) for buffered-linear-Toeplitz streaming.
    """

    kind = "mf"

    def __init__(self, shape: object, horizon: int, *, buffers: int = DEFAULT_BUFFERS,
                 **options) -> None:
        self._factor = sqrt_blt(check_count("horizon", horizon), buffers)
        super().__init__(shape, horizon, **options)

    # -- structure ------------------------------------------------------------------
    def _setup(self) -> None:
        f = self._factor
        self._omega = np.asarray(f.omega)
        self._decay = np.asarray(f.theta)[:, None]
        self._column_norm = _column_norm(f, self._horizon)
        n = math.prod(self._shape)
        self._n = n
        # One (buffers, 2 n) array: the buffers of C x (columns :n) and of C^-1 y (n:).
        self._buffers = np.zeros((f.buffers, 2 * n))
        self._sum = np.zeros(n)  # running sum of C^-1 y: the prefix estimate
        # symmetric: every entry reads its upper-triangle twin, so values are exactly symmetric
        if self._symmetric:
            rows, cols = np.indices(self._shape)
            self._mirror = (np.minimum(rows, cols) * self._shape[0]
                            + np.maximum(rows, cols)).ravel()
        else:
            self._mirror = None

    def _effective_sensitivity(self) -> float:
        clipping = 1.0 + gamma(self._entries() + 4)
        exact = column_sensitivity(self._factor, self._horizon, self._records)
        slack = self._sampler.l2_slack(self._horizon * self._released_entries())
        return self._core_sensitivity() * clipping * exact + slack

    def _encoded_norm2(self, diff: np.ndarray) -> float:
        """||C diff||^2: the stream is one Gaussian release of C x (C lower-triangular
        Toeplitz), so the pair's loss is exact; only steps that differ contribute."""
        n = diff.shape[0]
        coef = np.asarray(self._factor.coefficients(n))
        moved = np.zeros_like(diff)
        for s in np.flatnonzero(np.any(diff != 0.0, axis=1)):
            moved[s:] += coef[: n - s, None] * diff[s]
        return float(np.sum(moved**2))

    def _event_for(self, sigma: float, sensitivity: float) -> FactorizationEvent:
        return FactorizationEvent(GaussianEvent(sigma, sensitivity), self._column_norm,
                                  self._horizon)

    def _state_arrays(self) -> tuple[np.ndarray, ...]:
        return (self._buffers, self._sum)

    # -- the stream -----------------------------------------------------------------
    def _advance(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        n = self._n
        weighted = self._omega @ self._buffers  # sum_j omega_j buffer_j, every column at once
        flat = x.ravel()
        released = flat + weighted[:n]  # (C x)_t
        if self._mirror is not None:
            released = released.take(self._mirror)
        noisy = self._noisy(released.reshape(self._shape), rng)  # the only private release
        w = noisy.ravel() - weighted[n:]  # (C^-1 y)_t: post-processing from here
        if self._mirror is not None:
            w = w.take(self._mirror)
        out = self._sum + w
        self._buffers *= self._decay
        self._buffers[:, :n] += flat
        self._buffers[:, n:] += w
        self._sum = out
        return out.reshape(self._shape).copy()

    # -- read-only view -------------------------------------------------------------
    @property
    def event(self) -> FactorizationEvent:
        """The whole stream's event for one record (charge it once, before releasing)."""
        return self._event

    @property
    def factor(self) -> BufferedToeplitz:
        """The factor C actually used (theta, omega)."""
        return self._factor

    @property
    def buffers(self) -> int:
        return self._factor.buffers

    @property
    def column_norm(self) -> float:
        """Largest column norm of C over the horizon (rounded up)."""
        return self._column_norm


def column_sensitivity(factor: BufferedToeplitz, horizon: int, records: int) -> float:
    """The sensitivity of the streamed C x per clip norm: the largest column norm of C
    (times 1 + 2 r gamma_r when r > 1 records are summed per step) plus the float error of
    computing C x on both neighbours over all steps (2 sqrt(horizon) per-step bounds,
    `BufferedToeplitz.float_error`)."""
    batch = 2.0 * records * gamma(records) if records > 1 else 0.0
    float_error = factor.float_error(horizon) * records
    return _column_norm(factor, horizon) * (1.0 + batch) + 2.0 * math.sqrt(horizon) * float_error


@functools.lru_cache(maxsize=64)
def _column_norm(factor: BufferedToeplitz, horizon: int) -> float:
    """The largest column norm of C over the horizon: O(horizon), computed once."""
    return factor.column_norm(horizon)


@functools.lru_cache(maxsize=8)
def _prefix_units(factor: BufferedToeplitz, horizon: int) -> np.ndarray:
    """sum_(k < t) b_k**2 for t = 1 ... horizon (read-only): O(horizon buffers), computed once
    per factor and horizon (8 MB at 10**6 steps; the cache keeps the last 8)."""
    units = factor.prefix_noise_units_all(horizon)
    units.setflags(write=False)
    return units
