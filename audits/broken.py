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
- `DeltaLeak(mechanism, value, probability)`: returns the raw value with a
  small probability (an atom of infinite privacy loss).
- `InverseCDFGaussianSampler(inner)`: the textbook float Gaussian
  x + sigma * ndtri(U) (the fast sampler's Laplace is already the textbook
  float Laplace of Mironov 2012).
- `MisScaledCoordinateSampler(inner, index, factor)`: one coordinate of a
  Gaussian vector gets `factor` times the noise.
- `SparseVector(epsilon, threshold, variant)`: the sparse vector technique,
  correct or as two broken variants of Lyu, Su & Li (2017).
- `NoisyMax(epsilon, noise_factor)`: report noisy max; factor < 1 is too
  little noise.
- `UnmaskedShare(party)`: secure-sum masks (`mechanisms.pairwise_masks`) that
  leave one party out of every pairwise mask, so that its share, less the
  self mask the aggregator rebuilds, is its noised value: the aggregator sees
  one party's value under that party's own small share of the noise.  (No
  dropouts: the pairwise masks the survivors would reveal are not rebuilt.)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_positive
from privbandit.mechanisms.pairwise_masks import MaskRound, Revealed, SimulatedMasks
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


# -- flaws of the float-safe era: atoms, float bits, algorithms -----------------------------
@dataclass(frozen=True, eq=False)
class DeltaLeak:
    """`mechanism`, except that each run returns the raw value with `probability` (BROKEN).

    A delta-leak: the raw value is an atom of infinite privacy loss that a
    threshold event never isolates.  `value(dataset)` is what leaks.
    """

    mechanism: Any
    value: Any
    probability: float = 1e-3
    name: str = "delta-leak"

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        g_mech, g_leak = rng.spawn(2)
        out = np.array(self.mechanism(dataset, g_mech, n), dtype=float)
        leak = g_leak.random(n) < self.probability
        out[leak] = np.asarray(self.value(dataset), dtype=float)
        return out


class InverseCDFGaussianSampler(_WrappedSampler):
    """Gaussian noise as sigma * ndtri(U) from a 53-bit uniform, added in floats (BROKEN).

    The textbook floating-point Gaussian: which doubles come out depends on the
    value (Mironov 2012; Jin et al. 2022).  Laplace and symmetric draws are the
    inner sampler's.
    """

    __slots__ = ()

    def _add_gaussian(self, value, sigma, rng):
        from scipy.special import ndtri

        u = rng.random(value.shape)
        u[u == 0.0] = 0.5  # ndtri(0) = -inf; a 2**-53 event
        return value + sigma * ndtri(u)

    def __repr__(self) -> str:
        return f"InverseCDFGaussianSampler({self._inner!r})"


class MisScaledCoordinateSampler(_WrappedSampler):
    """Gaussian noise whose coordinate `index` (flat) has `factor` times the std (BROKEN)."""

    __slots__ = ("_index", "_factor")

    def __init__(self, inner: Sampler, index: int, factor: float) -> None:
        super().__init__(inner)
        object.__setattr__(self, "_index", check_count("index", index, minimum=0))
        object.__setattr__(self, "_factor", check_positive("factor", factor))

    def _add_gaussian(self, value, sigma, rng):
        out = self._inner._add_gaussian(value, sigma, rng)
        flat = value.reshape(len(value), -1) if value.ndim > 1 else value.reshape(1, -1)
        column = self._inner._add_gaussian(flat[:, self._index].copy(), sigma * self._factor, rng)
        out.reshape(flat.shape)[:, self._index] = column
        return out

    def __repr__(self) -> str:
        return (f"MisScaledCoordinateSampler({self._inner!r}, index={self._index}, "
                f"factor={self._factor:g})")


_SVT_VARIANTS = ("correct", "no-query-noise", "no-cutoff")


@dataclass(frozen=True, eq=False)
class SparseVector:
    """The sparse vector technique on query answers (dataset: (m,) answers, sensitivity 1).

    Lyu, Su & Li (VLDB 2017), Algorithm 1 with cutoff c = 1: threshold noise
    rho ~ Lap(2 / eps), query noise nu_i ~ Lap(4 / eps), answer 1 (above) when
    q_i + nu_i >= T + rho, else 0, and stop after the first 1 (later entries
    -1).  eps-DP.  The broken variants of their Section 3:
    - "no-query-noise" (their Algorithm 5): nu_i = 0;
    - "no-cutoff" (their Algorithm 6): never stops, answers every query.
    Noise is drawn with `sampler` (float-safe by default).
    """

    epsilon: float
    threshold: float
    variant: str = "correct"
    sampler: Any = None
    name: str = "sparse vector"

    def __post_init__(self) -> None:
        check_positive("epsilon", self.epsilon)
        if self.variant not in _SVT_VARIANTS:
            raise invalid("variant", self.variant, "one of " + ", ".join(_SVT_VARIANTS))

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        from privbandit.mechanisms.samplers import resolve_sampler

        sampler = resolve_sampler(self.sampler)
        q = np.broadcast_to(np.asarray(dataset, dtype=float), (n, np.size(dataset)))
        rho = sampler.laplace(2.0 / self.epsilon, (n, 1), rng)
        noisy = q if self.variant == "no-query-noise" else sampler.add_laplace(
            q, 4.0 / self.epsilon, rng)
        above = (noisy >= self.threshold + rho).astype(float)
        if self.variant == "no-cutoff":
            return above
        stopped = np.cumsum(np.cumsum(above, axis=1), axis=1) > 1  # after the first 1
        return np.where(stopped, -1.0, above)


@dataclass(frozen=True, eq=False)
class NoisyMax:
    """Report noisy max over counts (dataset: (K,) counts): the label of the largest noisy count.

    With Laplace noise of scale 1 / epsilon on counts of sensitivity 1 this is
    epsilon-DP (Dwork & Roth 2014, Claim 3.9); `noise_factor` < 1 is the
    "too little noise" mistake.  Returns labels ("arm 0", ...), which
    `run_audit` maps to indices.
    """

    epsilon: float
    noise_factor: float = 1.0
    sampler: Any = None
    name: str = "report noisy max"

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        from privbandit.mechanisms.samplers import resolve_sampler

        counts = np.broadcast_to(np.asarray(dataset, dtype=float), (n, np.size(dataset)))
        noisy = resolve_sampler(self.sampler).add_laplace(
            counts, self.noise_factor / self.epsilon, rng)
        return np.array([f"arm {i}" for i in range(counts.shape[1])])[np.argmax(noisy, axis=1)]


class UnmaskedShare:
    """Simulated secure-sum masks with party `party` left out of every pairwise mask (module
    docstring): its pairwise total moves to another party, so the sum still unmasks."""

    simulated = True
    description = "simulated masks with one party's share left unmasked (a broken scheme)"

    def __init__(self, party: int = 0) -> None:
        self.party = check_count("party", party, 0)

    def round(self, release: int, parties: int, entries: int, threshold: int,
              rng: np.random.Generator) -> MaskRound:
        if not self.party < parties >= 2:
            raise invalid("parties", parties, f"at least 2, more than party = {self.party}")
        inner = SimulatedMasks().round(release, parties, entries, threshold, rng)
        return _UnmaskedRound(inner, self.party)


class _UnmaskedRound(MaskRound):
    def __init__(self, inner: MaskRound, party: int) -> None:
        masks = inner.party_masks.copy()
        own = inner.revealed(np.ones(masks.shape[0], dtype=bool)).self_masks
        other = (party + 1) % masks.shape[0]
        masks[other] += masks[party] - own[party]  # uint64: exact modulo 2**64
        masks[party] = own[party]
        hidden = np.ones(masks.shape[0], dtype=bool)
        hidden[party] = False
        super().__init__(masks, inner.threshold, hidden)
        self._own = own

    def unmask(self, survivors: np.ndarray) -> np.ndarray:
        alive = self.check_survivors(survivors)
        return self.party_masks[alive].sum(axis=0, dtype=np.uint64)

    def revealed(self, survivors: np.ndarray) -> Revealed:
        alive = self.check_survivors(survivors)
        return Revealed({}, {int(k): self._own[int(k)] for k in np.flatnonzero(alive)})
