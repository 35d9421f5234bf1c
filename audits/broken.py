"""Deliberately broken mechanisms: the positive controls every audit must reject.

Each is built from the real mechanism with one mistake injected, never from a
copy of its logic:

- `NoiseScaleSampler(inner, factor)`: a sampler drawing noise `factor` times
  the scale it is asked for.  factor 1/2 on Laplace is "half the needed
  scale"; factor 1/(hi - lo) on Laplace means is "sensitivity ignoring the
  bound width" (the noise of a unit-width mean on data spread over hi - lo).
- `VarianceAsStdSampler(inner)`: draws Gaussian noise with standard deviation
  sigma**2 when asked for sigma, the confusion of the seed 000 public code
  (its node variance formula is handed to the sampler as a std).  It weakens
  privacy only when sigma < 1; above 1 it adds noise instead.
- `DropNoiseSampler(inner, call)`: releases the `call`-th Gaussian draw
  request (1-based) without noise; given to a tree privatizer it drops the
  noise of the node completed at that step.  Stateful: build one per tree.
- `RedrawingTree(factory)`: a tree privatizer that redraws every node's noise
  at every release (a fresh tree replays the stream for each release), so a
  record's contribution is seen through independent noise again and again.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_count, check_positive
from privbandit.mechanisms.samplers import Sampler

from .streams import Factory, _stream


class _WrappedSampler(Sampler):
    __slots__ = ("_inner",)
    exact = False

    def __init__(self, inner: Sampler) -> None:
        object.__setattr__(self, "_inner", inner)

    def _add_laplace(self, value, scale, rng):
        return self._inner._add_laplace(value, scale, rng)

    def _add_gaussian(self, value, sigma, rng):
        return self._inner._add_gaussian(value, sigma, rng)

    def _add_symmetric(self, value, sigma, rng):
        return self._inner._add_symmetric(value, sigma, rng)


class NoiseScaleSampler(_WrappedSampler):
    """Every draw uses `factor` times the requested scale (BROKEN when factor < 1)."""

    __slots__ = ("_factor",)

    def __init__(self, inner: Sampler, factor: float) -> None:
        super().__init__(inner)
        object.__setattr__(self, "_factor", check_positive("factor", factor))

    def _add_laplace(self, value, scale, rng):
        return self._inner._add_laplace(value, scale * self._factor, rng)

    def _add_gaussian(self, value, sigma, rng):
        return self._inner._add_gaussian(value, sigma * self._factor, rng)

    def _add_symmetric(self, value, sigma, rng):
        return self._inner._add_symmetric(value, sigma * self._factor, rng)

    def __repr__(self) -> str:
        return f"NoiseScaleSampler({self._inner!r}, factor={self._factor:g})"


class VarianceAsStdSampler(_WrappedSampler):
    """Gaussian draws with std sigma**2 (BROKEN when sigma < 1): seed 000 code's mistake."""

    __slots__ = ()

    def _add_gaussian(self, value, sigma, rng):
        return self._inner._add_gaussian(value, sigma**2, rng)

    def _add_symmetric(self, value, sigma, rng):
        return self._inner._add_symmetric(value, sigma**2, rng)

    def __repr__(self) -> str:
        return f"VarianceAsStdSampler({self._inner!r})"


class DropNoiseSampler(_WrappedSampler):
    """The `call`-th Gaussian request comes back without noise (BROKEN)."""

    __slots__ = ("_drop", "_calls")

    def __init__(self, inner: Sampler, call: int) -> None:
        super().__init__(inner)
        object.__setattr__(self, "_drop", check_count("call", call))
        object.__setattr__(self, "_calls", [0])

    def _next_is_dropped(self) -> bool:
        self._calls[0] += 1
        return self._calls[0] == self._drop

    def _add_gaussian(self, value, sigma, rng):
        noisy = self._inner._add_gaussian(value, sigma, rng)
        return value.copy() if self._next_is_dropped() else noisy

    def _add_symmetric(self, value, sigma, rng):
        noisy = self._inner._add_symmetric(value, sigma, rng)
        return value.copy() if self._next_is_dropped() else noisy

    def __repr__(self) -> str:
        return f"DropNoiseSampler({self._inner!r}, call={self._drop})"


@dataclass(frozen=True, eq=False)
class RedrawingTree:
    """(stream, rng, n) -> (n, T, *shape) with fresh node noise at every release (BROKEN)."""

    factory: Factory
    name: str = "tree redrawing node noise"

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        stream = _stream(dataset)
        batches = [np.broadcast_to(x, (n, *x.shape)).copy() for x in stream]
        releases = []
        for t in range(1, len(stream) + 1):
            tree = self.factory(n)  # a fresh tree: every node's noise is drawn again
            for x in batches[:t]:
                out = tree.add(x, rng)
            releases.append(out)
        return np.stack(releases, axis=1)
