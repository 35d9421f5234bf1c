"""Adapters: turn a mechanism someone wrote into the audit callable `(dataset, rng, n) -> outputs`.

- `ReleaseAdapter(release, name, batched=True)`: any `release(value, rng)`
  (every mechanism of `mechanisms/`).  Batched: the dataset is broadcast to a
  leading axis of n and released once (the mechanisms are vectorized over
  leading axes); else `release` is called n times.
- `OpenDPMechanism(measurement, name)`: an OpenDP measurement, called n times.
  `claim(d_in, delta)` reads the guarantee from OpenDP's own privacy map
  (MaxDivergence; zCDP converted by OpenDP's `make_zCDP_to_approxDP`;
  smoothed max-divergence; Approximate(MaxDivergence)).  OpenDP draws from its
  own CSPRNG: `rng` is ignored and runs cannot be replayed.
- `DiffprivlibMechanism(mechanism_class, name, **params)`: a diffprivlib
  mechanism class (e.g. `diffprivlib.mechanisms.Laplace`) built with `params`
  and a `random_state` drawn from `rng` (so runs replay from the seed), then
  `randomise` called n times.  `claim()` is the mechanism's own (epsilon, delta).

Checked against opendp 0.16 and diffprivlib 0.6.6.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privbandit.accounting.errors import UnsupportedEventError, invalid

from .claims import Claim


@dataclass(frozen=True, eq=False)
class ReleaseAdapter:
    """`release(value, rng)` as an audit mechanism; `batched` if vectorized over axis 0."""

    release: Callable[[Any, np.random.Generator], Any]
    name: str = "release"
    batched: bool = True

    def __post_init__(self) -> None:
        if not callable(self.release):
            raise invalid("release", self.release, "a callable release(value, rng)")

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        value = np.asarray(dataset, dtype=float)
        if self.batched:
            return np.asarray(self.release(np.broadcast_to(value, (n, *value.shape)).copy(), rng))
        return np.stack([np.asarray(self.release(value, rng)) for _ in range(n)])


def _opendp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


@dataclass(frozen=True, eq=False)
class OpenDPMechanism:
    """An OpenDP measurement as an audit mechanism (OpenDP's CSPRNG; `rng` unused)."""

    measurement: Any
    name: str = "opendp"

    def __post_init__(self) -> None:
        if not (callable(self.measurement) and hasattr(self.measurement, "map")):
            raise invalid("measurement", self.measurement, "an opendp Measurement")

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.asarray([self.measurement(dataset) for _ in range(n)], dtype=float)

    def claim(self, d_in: Any, delta: float = 0.0) -> Claim:
        """The guarantee OpenDP's privacy map gives for inputs `d_in` apart, at `delta`."""
        dp = _opendp()
        m = self.measurement
        measure = m.output_measure
        source = f"opendp privacy map of {self.name} at d_in={d_in!r}"
        if measure == dp.max_divergence():
            return Claim(float(m.map(d_in)), delta, source)
        if measure == dp.zero_concentrated_divergence():
            m = dp.c.make_zCDP_to_approxDP(m)
            measure = m.output_measure
        if measure == dp.smoothed_max_divergence():
            return Claim(float(m.map(d_in).epsilon(delta)), delta, source)
        if measure == dp.approximate(dp.max_divergence()):
            eps, fixed_delta = m.map(d_in)
            return Claim(float(eps), float(fixed_delta), source)
        raise UnsupportedEventError(f"no (epsilon, delta) reading for output measure {measure!r}")


@dataclass(frozen=True, eq=False)
class DiffprivlibMechanism:
    """A diffprivlib mechanism class plus its parameters, seeded from `rng` per call."""

    mechanism_class: type
    name: str = "diffprivlib"
    params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.build(None)  # diffprivlib validates epsilon/delta in its constructor

    def build(self, random_state: "int | None") -> Any:
        """One instance of the wrapped mechanism."""
        try:
            mech = self.mechanism_class(**self.params, random_state=random_state)
        except TypeError as err:
            raise invalid("mechanism_class", self.mechanism_class,
                          f"a diffprivlib mechanism class accepting {sorted(self.params)}") from err
        if not callable(getattr(mech, "randomise", None)):
            raise invalid("mechanism_class", self.mechanism_class, "a class with randomise(value)")
        return mech

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        mech = self.build(int(rng.integers(2**31 - 1)))
        return np.asarray([mech.randomise(dataset) for _ in range(n)], dtype=float)

    def claim(self) -> Claim:
        """The mechanism's declared (epsilon, delta)."""
        mech = self.build(None)
        return Claim(float(mech.epsilon), float(mech.delta),
                     f"diffprivlib {self.mechanism_class.__name__} declared parameters")
