"""Noise samplers: an exact, floating-point-safe one (OpenDP) and a fast one (NumPy).

Every mechanism draws its noise through a `Sampler`.  Two implementations share
one interface:

* `OpenDPSampler(k=-40)` -- the deployment sampler and the default of every
  standalone mechanism.  Noise comes from OpenDP's discrete Laplace and
  discrete Gaussian samplers on the grid of multiples of 2**k, drawn from
  OpenDP's own cryptographically secure generator (the `rng` argument is
  accepted for a uniform interface and ignored: these draws cannot be seeded
  or replayed).  The value itself is handed to OpenDP, which rounds it to the
  grid, adds the integer-valued noise exactly and only then rounds to a
  float, so the set of possible outputs does not depend on the secret: the
  release is safe against Mironov's floating-point attack (CCS 2012).
* `NumpySampler()` (module constant `FAST`) -- for simulation.  Continuous
  Laplace/Gaussian draws from the caller's `numpy.random.Generator`: fast and
  reproducible bit for bit from a seed, but the textbook float
  implementation, NOT safe against Mironov's attack (the low-order bits of a
  float release can reveal the input).

The grid and the privacy map (exact sampler).  Rounding two inputs to the
nearest multiple of 2**k can move each differing coordinate apart by up to
2**k, so their distance can grow by up to `entries * 2**k` in L1 and
`sqrt(entries) * 2**k` in L2, `entries` being the number of coordinates in
which they may differ.  OpenDP's own privacy map adds exactly this slack (a
size-441 vector at k = -40 maps d_in to d_in + 4.0e-10 in L1).  The sampler
reports it through `l1_slack(entries)` / `l2_slack(entries)` (0 for the fast
sampler) and every mechanism adds it to the sensitivity in the event it
reports, so the accountants see the sensitivity of what is actually released.
The discrete Laplace on the grid is exactly (d/scale)-DP for grid distances d
(Ghosh, Roughgarden & Sundararajan 2012).  The discrete Gaussian is exactly
rho-zCDP with rho = d**2 / (2 sigma**2), like the continuous one (Canonne,
Kamath & Steinke 2020, Theorem 4); its (epsilon, delta) curve differs from
the continuous Gaussian's by terms of the order of the grid step relative to
sigma (about 1e-12 at k = -40, sigma ~ 1), far below any delta in use.

Symmetric matrices.  Seed 000 (Algorithm 5) symmetrises an i.i.d. matrix Z of
N(0, sigma**2) entries as (Z + Z.T) / sqrt(2): off-diagonal entries get
variance sigma**2, diagonal entries 2 sigma**2, and the result is symmetric.
The fast sampler computes exactly that.  The exact sampler draws the same
distribution directly on the released coordinates -- the strict upper
triangle with sigma, the diagonal with sqrt(2) sigma -- so that every released
entry is an OpenDP release (no float arithmetic after the noise).
"""
from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_positive

from ._checks import check_rng, check_shape, real_array
from .errors import ShapeError

SQRT2 = math.sqrt(2.0)
_GRID_RANGE = (-1074, 0)


class Sampler(ABC):
    """The interface: noise of a given scale and shape, or a value plus noise.

    `laplace(scale, shape, rng)` and `gaussian(sigma, shape, rng)` return pure
    noise; `add_laplace`, `add_gaussian` and `add_symmetric_gaussian` return
    `value + noise` the safe way for this sampler (use them to release a
    value: adding exact-sampler noise to an off-grid value yourself gives up
    the floating-point guarantee).  `sigma` is always a standard deviation.
    """

    __slots__ = ()
    exact: bool = False

    # -- public, validated ---------------------------------------------------
    def laplace(self, scale: float, shape: object, rng: np.random.Generator) -> np.ndarray:
        """Laplace(0, scale) noise of `shape` (variance 2 * scale**2)."""
        scale = check_positive("scale", scale)
        return self._add_laplace(np.zeros(check_shape("shape", shape)), scale, check_rng(rng))

    def gaussian(self, sigma: float, shape: object, rng: np.random.Generator) -> np.ndarray:
        """N(0, sigma**2) noise of `shape` (sigma is the standard deviation)."""
        sigma = check_positive("sigma", sigma)
        return self._add_gaussian(np.zeros(check_shape("shape", shape)), sigma, check_rng(rng))

    def symmetric_gaussian(self, sigma: float, dim: int, rng: np.random.Generator) -> np.ndarray:
        """A dim x dim symmetric matrix (Z + Z.T) / sqrt(2) with Z_pq ~ N(0, sigma**2)."""
        sigma = check_positive("sigma", sigma)
        dim = check_count("dim", dim)
        return self._add_symmetric(np.zeros((dim, dim)), sigma, check_rng(rng))

    def add_laplace(self, value: object, scale: float, rng: np.random.Generator) -> np.ndarray:
        """`value` plus Laplace(0, scale) noise on every entry."""
        scale = check_positive("scale", scale)
        return self._add_laplace(real_array("value", value), scale, check_rng(rng))

    def add_gaussian(self, value: object, sigma: float, rng: np.random.Generator) -> np.ndarray:
        """`value` plus N(0, sigma**2) noise on every entry."""
        sigma = check_positive("sigma", sigma)
        return self._add_gaussian(real_array("value", value), sigma, check_rng(rng))

    def add_symmetric_gaussian(
        self, value: object, sigma: float, rng: np.random.Generator
    ) -> np.ndarray:
        """Square `value`, mirrored from its upper triangle, plus noise (Z + Z.T) / sqrt(2).

        Only the upper triangle of `value` is read; the result is symmetric.
        """
        sigma = check_positive("sigma", sigma)
        value = real_array("value", value)
        if value.ndim != 2 or value.shape[0] != value.shape[1]:
            raise ShapeError(f"value must be a square matrix; got shape {value.shape}")
        value = np.triu(value) + np.triu(value, 1).T
        return self._add_symmetric(value, sigma, check_rng(rng))

    def l1_slack(self, entries: int) -> float:
        """How much rounding to the noise grid can add to an L1 distance (0: no grid)."""
        check_count("entries", entries, minimum=0)
        return 0.0

    def l2_slack(self, entries: int) -> float:
        """How much rounding to the noise grid can add to an L2 distance (0: no grid)."""
        check_count("entries", entries, minimum=0)
        return 0.0

    # -- unchecked hooks (subclasses implement them; mechanisms call them after
    #    validating once) -----------------------------------------------------------
    @abstractmethod
    def _add_laplace(self, value: np.ndarray, scale: float, rng) -> np.ndarray: ...

    @abstractmethod
    def _add_gaussian(self, value: np.ndarray, sigma: float, rng) -> np.ndarray: ...

    @abstractmethod
    def _add_symmetric(self, value: np.ndarray, sigma: float, rng) -> np.ndarray:
        """`value` must already be symmetric."""

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")


class NumpySampler(Sampler):
    """Continuous noise from the caller's Generator: fast, seedable, simulation only.

    Privacy guarantee: the textbook Laplace/Gaussian mechanisms over the reals;
    the float implementation is NOT safe against Mironov's floating-point
    attack.  Use it for simulations and audits, `OpenDPSampler` to deploy.
    Same Generator state, same numbers, bit for bit.
    """

    __slots__ = ()
    exact = False

    def _add_laplace(self, value, scale, rng):
        return value + rng.laplace(0.0, scale, value.shape)

    def _add_gaussian(self, value, sigma, rng):
        return value + sigma * rng.standard_normal(value.shape)

    def _add_symmetric(self, value, sigma, rng):
        z = rng.standard_normal(value.shape)
        noise = z + z.T
        noise *= sigma / SQRT2
        noise += value
        return noise

    def __repr__(self) -> str:
        return "NumpySampler()"

    def __eq__(self, other: object) -> bool:
        return type(other) is NumpySampler

    def __hash__(self) -> int:
        return hash(NumpySampler)


class OpenDPSampler(Sampler):
    """Exact noise from OpenDP on the grid 2**k: floating-point safe, not seedable.

    Privacy guarantee: each call is one OpenDP measurement (`make_laplace` or
    `make_gaussian` over a vector domain of known size, granularity 2**k), so
    the guarantees are OpenDP's: pure DP for Laplace, zCDP for Gaussian, with
    the sensitivity rounding slack of `l1_slack` / `l2_slack` (see the module
    docstring).  Noise comes from OpenDP's CSPRNG; `rng` is accepted for a
    uniform interface and ignored.  One call per vector or matrix (batched),
    roughly 10 microseconds per Gaussian entry.
    """

    __slots__ = ("_k",)
    exact = True

    def __init__(self, k: int = -40) -> None:
        lo, hi = _GRID_RANGE
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not lo <= k <= hi:
            raise invalid("k", k, f"an integer in [{lo}, {hi}] (noise grid 2**k)")
        object.__setattr__(self, "_k", int(k))

    @property
    def k(self) -> int:
        """The noise granularity: released values are multiples of 2**k before float rounding."""
        return self._k

    def l1_slack(self, entries: int) -> float:
        return math.ldexp(check_count("entries", entries, minimum=0), self._k)

    def l2_slack(self, entries: int) -> float:
        root = math.sqrt(check_count("entries", entries, minimum=0))
        return math.ldexp(math.nextafter(root, math.inf) if root else 0.0, self._k)

    def measurement(self, kind: str, scale: float, entries: int):
        """The OpenDP Measurement used for `entries` values (its `.map(d_in)` is the privacy map).

        `kind` is "laplace" (map: L1 distance -> epsilon) or "gaussian"
        (map: L2 distance -> zCDP rho).
        """
        if kind not in ("laplace", "gaussian"):
            raise invalid("kind", kind, "'laplace' or 'gaussian'")
        return _measurement(kind, check_positive("scale", scale), check_count("entries", entries),
                            self._k)

    def _release(self, kind: str, value: np.ndarray, scale: float) -> np.ndarray:
        if value.size == 0:
            return value.copy()
        meas = _measurement(kind, scale, value.size, self._k)
        return np.asarray(meas(value.ravel().tolist()), dtype=np.float64).reshape(value.shape)

    def _add_laplace(self, value, scale, rng):
        return self._release("laplace", value, scale)

    def _add_gaussian(self, value, sigma, rng):
        return self._release("gaussian", value, sigma)

    def _add_symmetric(self, value, sigma, rng):
        dim = value.shape[0]
        upper = np.triu_indices(dim, 1)
        out = np.empty_like(value)
        off = self._release("gaussian", value[upper], sigma)
        out[upper] = off
        out[upper[::-1]] = off
        # diagonal std sqrt(2) sigma, rounded up so it never falls below
        diag_sigma = math.nextafter(sigma * SQRT2, math.inf)
        out[np.diag_indices(dim)] = self._release("gaussian", np.diagonal(value).copy(), diag_sigma)
        return out

    def __repr__(self) -> str:
        return f"OpenDPSampler(k={self._k})"

    def __eq__(self, other: object) -> bool:
        return type(other) is OpenDPSampler and other.k == self._k

    def __hash__(self) -> int:
        return hash((OpenDPSampler, self._k))


@functools.lru_cache(maxsize=256)
def _measurement(kind: str, scale: float, entries: int, k: int):
    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=entries)
    if kind == "laplace":
        return dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=scale, k=k)
    return dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale, k=k)


@functools.lru_cache(maxsize=1)
def _opendp():
    # imported lazily: loading OpenDP's native library takes over a second
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


FAST = NumpySampler()
EXACT = OpenDPSampler(k=-40)


def resolve_sampler(sampler: "Sampler | None") -> Sampler:
    """`sampler`, or the exact default when None."""
    if sampler is None:
        return EXACT
    if not isinstance(sampler, Sampler):
        raise invalid("sampler", sampler, "a Sampler (samplers.FAST, OpenDPSampler(k)) or None")
    return sampler
