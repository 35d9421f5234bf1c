"""Noise samplers: a fast float-safe default (grid), OpenDP's exact one, NumPy's float one.

Every mechanism draws its noise through a `Sampler`.  Three implementations share
one interface; each says whether it is `float_safe` and whether it is `seedable`:

* `GridSampler(k=-36)` (module constant `GRID`) -- the default of every
  standalone mechanism (`resolve_sampler(None)`).  Discrete Laplace and
  discrete Gaussian noise on the grid of multiples of 2**k (Canonne, Kamath &
  Steinke 2020), vectorized NumPy drawn from the caller's
  `numpy.random.Generator`: reproducible bit for bit from a seed, and
  float-safe (see "Float safety" below).
* `OpenDPSampler(k=-40)` (module constant `EXACT`) -- OpenDP's exact discrete
  samplers on the grid 2**k, drawn from OpenDP's own cryptographically secure
  generator (the `rng` argument is accepted and ignored: draws cannot be
  seeded or replayed).  For deployments that need a cryptographic generator.
* `NumpySampler()` (module constant `FAST`) -- continuous Laplace/Gaussian
  draws from the caller's Generator: the textbook float implementation, NOT
  safe against Mironov's attack (CCS 2012: the low-order bits of a float
  release can reveal the input).  The explicit opt-in for simulation.

Float safety (grid sampler).  A value x is rounded to N = rint(x / 2**k)
(exact in floats), the integer noise Z is added in integer arithmetic, and the
release is fl((N + Z) * 2**k): the correctly rounded grid value, exact while
|N + Z| < 2**53.  The rounding of an exact grid value is a data-independent
function of it (post-processing), and Z has every integer in its support, so
the set of possible outputs does not depend on the secret: every grid point
is reachable from every input.  Z is drawn as in Canonne, Kamath & Steinke
(2020, Algorithms 2 and 3): a uniform integer below a power of two L <= t / 2
accepted with probability exp(-u / t), plus L times a geometric count, with
a random sign, gives the discrete Laplace of scale t; the discrete Gaussian
accepts a discrete Laplace proposal with probability
exp(-(|y| - sigma)**2 / (2 sigma**2)).  Every acceptance test compares a
53-bit uniform with a probability of at least e**-8 (larger exponents are
split into factors; exponential counts are drawn in memoryless blocks of 8,
in steps L / t >= 1/4),
so the drawn integer distribution matches the ideal one within a relative
factor exp(+-eta), eta <= 2**-38, on every integer (quantization
2**-53 * e**8 plus a few ulps of exp and log).  For neighbours that differ in
m coordinates this moves the privacy loss by at most 2 m eta.  That error is
counted in the noise: the sampler draws with scale (1 + 2**-20) times the
requested one, which lowers the loss by more than 2 m eta whenever
epsilon >= m 2**-17 (Laplace) or mu >= 2**-8 sqrt(m) (Gaussian), far below
any parameter in use (tested: `tests/mechanisms/test_grid_sampler.py`).
Supported noise: t = scale / 2**k up to 2**52 (sigma <= 65536 at k = -36);
the integers are floats (exact below 2**53) for t <= 2**43 and int64 above,
and the geometric count is capped where L * count would leave that range, at
more than 1000 scales (probability below e**-1000).

The grid and the privacy map (grid and exact samplers).  Rounding two inputs to the
nearest multiple of 2**k can move each differing coordinate apart by up to
2**k, so their distance can grow by up to `entries * 2**k` in L1 and
`sqrt(entries) * 2**k` in L2, `entries` being the number of coordinates in
which they may differ.  OpenDP's own privacy map adds exactly this slack (a
size-441 vector at k = -40 maps d_in to d_in + 4.0e-10 in L1).  Both grid
samplers report it through `l1_slack(entries)` / `l2_slack(entries)` (0 for
the fast sampler) and every mechanism adds it to the sensitivity in the event it
reports, so the accountants see the sensitivity of what is actually released.
The discrete Laplace on the grid is exactly (d/scale)-DP for grid distances d
(Ghosh, Roughgarden & Sundararajan 2012).  The discrete Gaussian is exactly
rho-zCDP with rho = d**2 / (2 sigma**2), like the continuous one (Canonne,
Kamath & Steinke 2020, Theorem 4); its (epsilon, delta) curve differs from
the continuous Gaussian's by terms of the order of the grid step relative to
sigma (about 1e-12 at k = -40, sigma ~ 1), far below any delta in use.  The
grid sampler's discrete Gaussian is the same distribution.

Symmetric matrices.  Seed 000 (Algorithm 5) symmetrises an i.i.d. matrix Z of
N(0, sigma**2) entries as (Z + Z.T) / sqrt(2): off-diagonal entries get
variance sigma**2, diagonal entries 2 sigma**2, and the result is symmetric.
The fast sampler computes exactly that.  The grid and exact samplers draw
the same distribution directly on the released coordinates -- the strict
upper triangle with sigma, the diagonal with sqrt(2) sigma (rounded up) -- so
that no float arithmetic follows the noise.
"""
from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_positive

from ._checks import check_rng, check_shape, real_array
from ._frozen import Frozen
from .errors import ShapeError

SQRT2 = math.sqrt(2.0)
_GRID_RANGE = (-1074, 0)


class Sampler(Frozen, ABC):
    """The interface: noise of a given scale and shape, or a value plus noise.

    `laplace(scale, shape, rng)` and `gaussian(sigma, shape, rng)` return pure
    noise; `add_laplace`, `add_gaussian` and `add_symmetric_gaussian` return
    `value + noise` the safe way for this sampler (use them to release a
    value: adding exact-sampler noise to an off-grid value yourself gives up
    the floating-point guarantee).  `sigma` is always a standard deviation.
    """

    __slots__ = ()
    exact: bool = False  # OpenDP's exact samplers (CSPRNG)
    float_safe: bool = False  # outputs on a data-independent grid (no Mironov attack)
    seedable: bool = True  # same Generator state, same numbers

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



class NumpySampler(Sampler):
    """Continuous noise from the caller's Generator: fast, seedable, simulation only.

    Privacy guarantee: the textbook Laplace/Gaussian mechanisms over the reals;
    the float implementation is NOT safe against Mironov's floating-point
    attack.  Use it for simulations and audits, `OpenDPSampler` to deploy.
    Same Generator state, same numbers, bit for bit.
    """

    __slots__ = ()
    exact = False
    float_safe = False

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


class _OnGrid(Sampler):
    """Shared by the samplers whose releases are multiples of 2**k: the grid and its slack."""

    __slots__ = ("_k",)
    float_safe = True

    def __init__(self, k: int) -> None:
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

    def _add_laplace(self, value, scale, rng):
        return self._release("laplace", value, scale, rng)

    def _add_gaussian(self, value, sigma, rng):
        return self._release("gaussian", value, sigma, rng)

    def _add_symmetric(self, value, sigma, rng):
        dim = value.shape[0]
        upper = np.triu_indices(dim, 1)
        out = np.empty_like(value)
        off = self._release("gaussian", value[upper], sigma, rng)
        out[upper] = off
        out[upper[::-1]] = off
        # diagonal std sqrt(2) sigma, rounded up so it never falls below
        diag_sigma = math.nextafter(sigma * SQRT2, math.inf)
        out[np.diag_indices(dim)] = self._release("gaussian", np.diagonal(value).copy(),
                                                    diag_sigma, rng)
        return out

    @abstractmethod
    def _release(self, kind: str, value: np.ndarray, scale: float, rng) -> np.ndarray:
        """`value` rounded to the grid plus `kind` noise of `scale`, on the grid."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(k={self._k})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.k == self._k

    def __hash__(self) -> int:
        return hash((type(self), self._k))


class OpenDPSampler(_OnGrid):
    """Exact noise from OpenDP on the grid 2**k: floating-point safe, not seedable.

    Privacy guarantee: each call is one OpenDP measurement (`make_laplace` or
    `make_gaussian` over a vector domain of known size, granularity 2**k), so
    the guarantees are OpenDP's: pure DP for Laplace, zCDP for Gaussian, with
    the sensitivity rounding slack of `l1_slack` / `l2_slack` (see the module
    docstring).  Noise comes from OpenDP's CSPRNG; `rng` is accepted for a
    uniform interface and ignored.  One call per vector or matrix (batched),
    roughly 10 microseconds per Gaussian entry.
    """

    __slots__ = ()
    exact = True
    seedable = False

    def __init__(self, k: int = -40) -> None:
        super().__init__(k)

    def measurement(self, kind: str, scale: float, entries: int):
        """The OpenDP Measurement used for `entries` values (its `.map(d_in)` is the privacy map).

        `kind` is "laplace" (map: L1 distance -> epsilon) or "gaussian"
        (map: L2 distance -> zCDP rho).
        """
        if kind not in ("laplace", "gaussian"):
            raise invalid("kind", kind, "'laplace' or 'gaussian'")
        return _measurement(kind, check_positive("scale", scale), check_count("entries", entries),
                            self._k)

    def _release(self, kind: str, value: np.ndarray, scale: float, rng) -> np.ndarray:
        if value.size == 0:
            return value.copy()
        meas = _measurement(kind, scale, value.size, self._k)
        return np.asarray(meas(value.ravel().tolist()), dtype=np.float64).reshape(value.shape)




class GridSampler(_OnGrid):
    """Discrete Laplace / Gaussian on the grid 2**k from the caller's Generator: the default.

    Privacy guarantee: the release of `add_laplace(value, scale, rng)` is the
    discrete Laplace mechanism on the grid (pure DP for grid distances,
    Ghosh, Roughgarden & Sundararajan 2012), that of `add_gaussian` the
    discrete Gaussian mechanism (rho-zCDP with rho = d**2 / (2 sigma**2),
    Canonne, Kamath & Steinke 2020, Theorem 4), each followed by the correct
    rounding of the exact grid value to a float (post-processing).  The grid
    rounding of the value is counted by `l1_slack` / `l2_slack`, the sampler's
    relative pmf error by drawing with a scale 1 + 2**-20 larger (module
    docstring).  Float-safe (no output depends on the secret through its
    low-order bits) and reproducible bit for bit from the Generator.
    Source: Canonne, Kamath & Steinke (2020), Algorithms 1-3, vectorized.
    """

    __slots__ = ()

    def __init__(self, k: int = -36) -> None:
        super().__init__(k)

    def _release(self, kind: str, value: np.ndarray, scale: float, rng) -> np.ndarray:
        t = self._grid_scale(kind, scale)
        if value.size == 0:
            return value.copy()
        return _on_grid(value, _integer_noise(rng, kind, t, value.size).reshape(value.shape),
                        self._k)

    def _add_symmetric(self, value, sigma, rng):
        # The strict upper triangle at sigma, the diagonal at sqrt(2) sigma (one draw each),
        # so the release is the discrete Gaussian of the whitened value: mu = ||D||_F /
        # (sqrt(2) sigma), the sensitivity a symmetric event states.
        dim = value.shape[0]
        off = dim * (dim - 1) // 2
        diag_sigma = math.nextafter(sigma * SQRT2, math.inf)
        z = np.concatenate((
            _integer_noise(rng, "gaussian", self._grid_scale("gaussian", sigma), off),
            _integer_noise(rng, "gaussian", self._grid_scale("gaussian", diag_sigma), dim)))
        return _on_grid(value, z[_symmetric_gather(dim)], self._k)

    def _grid_scale(self, kind: str, scale: float) -> float:
        """The noise scale in grid steps, with the margin that covers the sampler's error."""
        t = scale * _NOISE_MARGIN / math.ldexp(1.0, self._k)
        if not t <= _MAX_GRID_SCALE:
            raise invalid("scale" if kind == "laplace" else "sigma", scale,
                          f"at most {math.ldexp(_MAX_GRID_SCALE / _NOISE_MARGIN, self._k):.6g} "
                          f"on the grid 2**{self._k} (use GridSampler(k) with a larger k)")
        return t


# -- integer noise for the grid sampler ------------------------------------------------------
# Exponentials are drawn in memoryless blocks of _BLOCK, and acceptance exponents are
# split into factors of at most _BLOCK, so no Bernoulli test uses a probability below
# e**-_BLOCK (the relative error bound eta of the module docstring rests on this).
_BLOCK = 8.0
_BLOCK_LEVEL = -math.expm1(-_BLOCK)  # r above it: E = -log(1 - r) exceeds 8
_NOISE_MARGIN = 1.0 + 2.0**-20
_FLOAT_INTS = 2.0**53  # integers below it are exact floats
_INT_RANGE = 2.0**62  # |N|, |Z| below it: their int64 sum cannot overflow
_FLOAT_GRID_SCALE = 2.0**43  # up to it, a count cap of 2**53 / block is >= 1000 scales
_MAX_GRID_SCALE = 2.0**52  # up to it, a count cap of 2**62 / block is >= 1000 scales


def _exponential_counts(r: np.ndarray, rng: np.random.Generator, rate: float,
                        cap: float) -> np.ndarray:
    """min(floor(E / rate), cap) for E = -log(1 - r) ~ Exp(1): a geometric count with ratio
    exp(-rate), capped (E <= 8 never reaches the cap: rate >= 1/4, cap >= 1000)."""
    e = np.log1p(-r)  # -E
    if r.max() <= _BLOCK_LEVEL:
        return np.floor(e * (-1.0 / rate))
    over = np.flatnonzero(r > _BLOCK_LEVEL)  # memoryless: E > 8 is 8 plus a fresh exponential
    offset = np.zeros(r.size)
    while over.size:
        offset[over] -= _BLOCK
        fresh = np.log1p(-rng.random(over.size))
        e[over] = fresh
        over = over[fresh < -_BLOCK]
    e += offset
    return np.minimum(np.floor(e * (-1.0 / rate)), cap)


def _bernoulli_exp(rng: np.random.Generator, r: np.ndarray, logp: np.ndarray) -> np.ndarray:
    """Bernoulli(exp(logp)) from uniforms `r` (logp <= 0), tested in factors >= exp(-8)."""
    low = logp < -_BLOCK
    keep = r < np.exp(np.maximum(logp, -_BLOCK))
    rest = keep & low
    if not rest.any():  # survivors of a split test are rare: e**-8 each
        return keep
    rest = np.flatnonzero(rest)
    left = logp[rest] + _BLOCK
    while rest.size:
        passed = rng.random(rest.size) < np.exp(np.maximum(left, -_BLOCK))
        keep[rest[~passed]] = False
        more = passed & (left < -_BLOCK)
        rest, left = rest[more], left[more] + _BLOCK
    return keep


def _laplace_candidates(rng: np.random.Generator, t: float, size: int, gaussian: bool):
    """Candidates whose accepted part is discrete Laplace (P(y) ~ exp(-|y| / t)) or, with
    `gaussian`, discrete Gaussian of sigma t (CKS 2020, Algorithm 3 with proposal scale sigma).

    A uniform u below a power of two `block` <= t / 2 is kept with probability
    exp(-u / t); adding `block` times a geometric count of ratio exp(-block / t)
    gives a geometric magnitude; a random sign, with -0 refused, gives the
    discrete Laplace.  Arithmetic is in floats, exact below 2**53 (the count is
    capped there: more than 1000 scales out, see `_MAX_GRID_SCALE`).
    """
    bits = math.floor(math.log2(t)) - 1 if t >= 2 else 0
    block = float(1 << bits)  # a power of two <= t / 2: u is kept with probability >= e**-0.5
    raw = rng.bit_generator.random_raw(size)
    r = rng.random((2, size))
    u = (raw & np.uint64((1 << bits) - 1)).astype(np.float64)  # the low bits; the sign: the top
    wide = t > _FLOAT_GRID_SCALE  # magnitudes may pass 2**53: exact in int64 instead
    x = _exponential_counts(r[1], rng, block / t,
                            (_INT_RANGE if wide else _FLOAT_INTS) / block - 1.0)
    if wide:
        x = x.astype(np.int64) * (1 << bits)
        x += u.astype(np.int64)
    else:
        x *= block
        x += u
    # Keep u with probability exp(-u / t) (one test: the exponent is below 1/2) and, for
    # the Gaussian, y with probability exp(-(|y| - t)**2 / (2 t**2)): independent
    # tests, so one test of the product.
    logp = u * (-1.0 / t)
    if gaussian:
        gap = x - t  # float, relative error 2**-53 (int64 magnitudes included)
        gap *= gap
        gap *= -0.5 / (t * t)
        logp += gap
        keep = _bernoulli_exp(rng, r[0], logp)
    else:
        keep = r[0] < np.exp(logp)
    if x.min() == 0:  # +0 and -0 are one outcome: refuse -0
        keep &= ~((raw.view(np.int64) < 0) & (x == 0))
    return np.copysign(x, raw.view(np.int64))[keep]


def _integer_noise(rng: np.random.Generator, kind: str, t: float, size: int) -> np.ndarray:
    """`size` draws of discrete Laplace (scale t) or discrete Gaussian (sigma t), as floats."""
    gaussian = kind == "gaussian"
    rate = 0.6 if gaussian else 0.8  # about the acceptance rates (a shortfall draws again)
    got = _laplace_candidates(rng, t, int(size / rate) + 16, gaussian)
    if got.size >= size:
        return got[:size]
    parts = [got]
    while (have := sum(p.size for p in parts)) < size:
        parts.append(_laplace_candidates(rng, t, int((size - have) / rate) + 16, gaussian))
    return np.concatenate(parts)[:size]


@functools.lru_cache(maxsize=64)
def _symmetric_gather(dim: int) -> np.ndarray:
    """(dim, dim) indices into [strict upper triangle..., diagonal...]: a symmetric layout."""
    out = np.empty((dim, dim), dtype=np.intp)
    upper = np.triu_indices(dim, 1)
    out[upper] = out[upper[::-1]] = np.arange(upper[0].size)
    out[np.diag_indices(dim)] = upper[0].size + np.arange(dim)
    out.setflags(write=False)
    return out


def _on_grid(value: np.ndarray, noise: np.ndarray, k: int) -> np.ndarray:
    """fl((rint(value / 2**k) + noise) * 2**k), a function of the exact grid value alone.

    Float noise holds exact integers, so the float sum is the correctly rounded
    exact sum; int64 noise (beyond 2**53) is added in int64, or in Python
    integers for values beyond 2**62 grid steps, then rounded once.
    """
    n = np.rint(np.ldexp(value, -k))
    if noise.dtype.kind == "f":
        return np.ldexp(n + noise, k)
    small = np.abs(n) < _INT_RANGE
    total = np.where(small, n, 0.0).astype(np.int64) + noise
    out = total.astype(np.float64)  # one correct rounding
    for i in np.flatnonzero(~small.ravel()):
        out.flat[i] = float(int(n.flat[i]) + int(noise.flat[i]))
    return np.ldexp(out, k)


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


def discrete_gaussian_integers(sigma: float, shape: object, rng: np.random.Generator, *,
                               summed: int = 1) -> np.ndarray:
    """int64 draws of the discrete Gaussian N_Z(0, sigma**2), sigma in integer steps.

    The grid sampler's integer noise (Canonne, Kamath & Steinke 2020, Algorithms 1-3,
    vectorized), reproducible from `rng`.  Its pmf is within a relative exp(+-eta),
    eta <= 2**-38, of the ideal one on every integer (module docstring), so a sum of
    `summed` such draws per entry is within exp(+-summed * eta) of the ideal sum's; the
    draws use sigma * (1 + summed * 2**-20), the margin that covers that error under the
    grid sampler's own condition (mu >= 2**-8 sqrt(m) for m differing entries).
    Distributed noise (`mechanisms.distributed_noise`) draws its shares here.
    """
    sigma = check_positive("sigma", sigma)
    dims = check_shape("shape", shape)
    rng = check_rng(rng)
    if not sigma * (1.0 + check_count("summed", summed) * 2.0**-20) <= _MAX_GRID_SCALE:
        raise invalid("sigma", sigma, f"at most {_MAX_GRID_SCALE / 2:.6g} integer steps")
    return _discrete_gaussian_integers(sigma, dims, rng, summed)


def _discrete_gaussian_integers(sigma: float, dims: tuple, rng: np.random.Generator,
                                summed: int) -> np.ndarray:
    """`discrete_gaussian_integers` of validated arguments (callers validate once)."""
    size = math.prod(dims)
    if size == 0:
        return np.zeros(dims, dtype=np.int64)
    t = sigma * (1.0 + summed * 2.0**-20)
    return _integer_noise(rng, "gaussian", t, size).astype(np.int64).reshape(dims)


FAST = NumpySampler()
EXACT = OpenDPSampler(k=-40)
GRID = GridSampler(k=-36)


def resolve_sampler(sampler: "Sampler | None") -> Sampler:
    """`sampler`, or the float-safe default `GRID` when None."""
    if sampler is None:
        return GRID
    if not isinstance(sampler, Sampler):
        raise invalid("sampler", sampler,
                      "a Sampler (samplers.GRID, samplers.FAST, OpenDPSampler(k)) or None")
    return sampler
