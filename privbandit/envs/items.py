"""Item sources: the documented distributions of each round's K item vectors.

Each source draws a whole block of rounds in one call: `draw(rounds, rng)`
returns a read-only (rounds, K, d) float64 array whose rows have norm <= `bound`,
validated as a whole when drawn (`validation.mark_validated`), so policies
skip the per-round norm check for these items.  `fill(out, rng)` draws the same
values into a buffer the caller reuses (no allocation per block) and returns
the largest row norm it measured, for the caller to hand to `check_items`.

- `SphereItems`: standard Gaussian vectors normalised to unit norm, i.e.
  uniform on the sphere (seed 001's synthetic items; seed 003's N(0, 0.05 I)
  items normalised are the same distribution).
- `BiasedSphereItems`: x = [g / ||g|| / sqrt 2, 1 / sqrt 2] with g ~ N(0, I_{d-1})
  (seed 000's generator, see notes/seed-clarifications.md), so ||x|| = 1 and
  x . theta lies in [0, 1] for theta of the same form.
- `PoolItems`: K distinct rows drawn uniformly, without replacement, from a
  fixed pool of item features (real data).
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_positive

from ..errors import NormBoundError, ShapeError, config_error
from ..validation import check_dim, mark_validated, real_array, validated_norm

_NORM_SLACK = 1e-9
# Normalised rows have norm 1 up to rounding of order dim * 2^-53, far inside the policies'
# 1e-9 slack, when the normaliser is finite and well above underflow and dim is moderate.
_MIN_NORMALISER = 1e-100
_MAX_NORMALISED_DIM = 100_000


class ItemSource(ABC):
    """K items of dimension d per round, norms <= bound."""

    dim: int
    n_items: int
    bound: float

    @abstractmethod
    def draw(self, rounds: int, rng: np.random.Generator) -> np.ndarray:
        """Items of `rounds` rounds, (rounds, K, d), in one vectorized draw (read-only)."""

    def fill(self, out: np.ndarray, rng: np.random.Generator) -> float:
        """Write the items of len(out) rounds into `out` (rounds, K, d) float64, C-contiguous,
        writeable: the values and generator use of `draw(len(out), rng)`.  Returns the
        largest row norm measured in that draw (math.inf when none was: the caller then
        runs the full check).

        Straight into `out` (`_fill`) when the class that defines `draw` defines
        `_fill` too; a subclass that overrides only `draw` is filled through its `draw`.
        """
        if _owner(type(self), "_fill") is _owner(type(self), "draw"):
            return self._fill(out, rng)
        block = self.draw(out.shape[0], rng)
        out[...] = block
        return validated_norm(block)

    def _fill(self, out: np.ndarray, rng: np.random.Generator) -> float:
        """`fill` without allocation (sources that can draw into `out` override it)."""
        raise NotImplementedError

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """JSON-serialisable description."""


def _owner(cls: type, name: str) -> type | None:
    """The class of cls's MRO whose body defines `name`."""
    return next((c for c in cls.__mro__ if name in c.__dict__), None)


def _unit_rows(g: np.ndarray) -> bool:
    """Normalise the rows of g in place; True if every row then has norm 1 up to rounding."""
    norms = np.sqrt(np.einsum("...d,...d->...", g, g))
    g /= norms[..., None]
    # NaN fails both comparisons; an infinite or vanishing normaliser leaves the block unmarked
    return (
        g.shape[-1] <= _MAX_NORMALISED_DIM
        and bool(norms.min() > _MIN_NORMALISER)
        and math.isfinite(norms.max())
    )


class SphereItems(ItemSource):
    """Uniform on the unit sphere of R^dim: normalised standard Gaussians."""

    def __init__(self, dim: int, n_items: int) -> None:
        self.dim = check_dim("dim", dim)
        self.n_items = check_dim("n_items", n_items)
        self.bound = 1.0

    def draw(self, rounds: int, rng: np.random.Generator) -> np.ndarray:
        g = np.empty((rounds, self.n_items, self.dim))
        return mark_validated(g, self._fill(g, rng))

    def _fill(self, out: np.ndarray, rng: np.random.Generator) -> float:
        rng.standard_normal(out=out)  # the values of standard_normal(out.shape)
        return 1.0 if _unit_rows(out) else math.inf

    def describe(self) -> dict[str, Any]:
        return {"items": "sphere", "dim": self.dim, "n_items": self.n_items}


class BiasedSphereItems(ItemSource):
    """Seed 000's items: [u / sqrt 2, 1 / sqrt 2] with u uniform on the sphere of R^(dim-1)."""

    def __init__(self, dim: int, n_items: int) -> None:
        self.dim = check_dim("dim", dim)
        if self.dim < 2:
            raise config_error("dim", dim, "an integer >= 2 (one coordinate is the constant)")
        self.n_items = check_dim("n_items", n_items)
        self.bound = 1.0

    def draw(self, rounds: int, rng: np.random.Generator) -> np.ndarray:
        out = np.empty((rounds, self.n_items, self.dim))
        return mark_validated(out, self._fill(out, rng))

    def _fill(self, out: np.ndarray, rng: np.random.Generator) -> float:
        g = rng.standard_normal(out.shape[:-1] + (self.dim - 1,))
        unit = _unit_rows(g)
        np.multiply(g, np.sqrt(0.5), out=out[..., :-1])  # no temporary: same values
        out[..., -1] = np.sqrt(0.5)
        return 1.0 if unit else math.inf

    def describe(self) -> dict[str, Any]:
        return {"items": "biased-sphere", "dim": self.dim, "n_items": self.n_items}


class PoolItems(ItemSource):
    """K distinct items per round, uniform without replacement from a fixed pool (P, d).

    `bound` defaults to the largest row norm of the pool; a given bound must
    hold for every row.
    """

    def __init__(self, features: np.ndarray, n_items: int, *, bound: float | None = None) -> None:
        f = real_array("features", features)
        if f.ndim != 2 or f.shape[0] == 0 or f.shape[1] == 0:
            raise ShapeError(f"features must be a non-empty (P, d) array; got shape {f.shape}")
        if not np.all(np.isfinite(f)):
            raise config_error("features", "array", "finite values")
        self.n_items = check_dim("n_items", n_items)
        if self.n_items > f.shape[0]:
            raise config_error(
                "n_items", n_items, f"at most the pool's item count {f.shape[0]}"
            )
        norms = np.sqrt(np.einsum("pd,pd->p", f, f))
        self._max_norm = float(norms.max())  # what drawn blocks are validated against
        if bound is None:
            self.bound = float(norms.max()) or 1.0
        else:
            self.bound = check_positive("bound", bound)
            if norms.max() > self.bound * (1 + _NORM_SLACK):
                raise NormBoundError(
                    f"features must have L2 norm <= bound={self.bound:g}; "
                    f"got a row of norm {norms.max():.6g}"
                )
        f.flags.writeable = False
        self.features = f
        self.dim = f.shape[1]

    @property
    def pool_size(self) -> int:
        return self.features.shape[0]

    def draw(self, rounds: int, rng: np.random.Generator) -> np.ndarray:
        out = np.empty((rounds, self.n_items, self.dim))
        return mark_validated(out, self._fill(out, rng))

    def _fill(self, out: np.ndarray, rng: np.random.Generator) -> float:
        keys = rng.random((out.shape[0], self.pool_size))
        idx = np.argpartition(keys, self.n_items - 1, axis=1)[:, : self.n_items]
        np.take(self.features, idx, axis=0, out=out)
        return self._max_norm

    def describe(self) -> dict[str, Any]:
        return {
            "items": "pool", "dim": self.dim, "n_items": self.n_items,
            "pool_size": self.pool_size, "bound": self.bound,
        }
