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
- `DiffprivlibMechanism(mechanism_class, name, params)`: a diffprivlib
  mechanism class (e.g. `diffprivlib.mechanisms.Laplace`) built with `params`
  and a `random_state` drawn from `rng` (so runs replay from the seed), then
  `randomise(dataset)` called n times.  `claim()` is the mechanism's own
  (epsilon, delta).  For a mechanism whose input is not a value -- the
  `Exponential`, whose data is its `utility` list -- give
  `params=lambda dataset: {...}` and `value=None`: the mechanism is built per
  dataset and `randomise()` called without a value.  `from_instance(mech)`
  takes an already built mechanism.
- `DiffprivlibFunction(function, name, params)`: a diffprivlib tool such as
  `diffprivlib.tools.mean`, called as `function(dataset, **params,
  random_state=seed)` n times.
- `as_release(obj)`: the one-run form `release(value, rng)` of a
  `ReleaseAdapter`, a mechanism object or a plain release function: what
  `sum_canaries` takes, so one object (a mechanism, or
  `ReleaseAdapter(release, batched=False)` around a user's function) audits
  both ways, many runs and one run.
- `as_mechanism(obj)`: what `run_audit` does with whatever it is given:
  callables pass through; an OpenDP measurement, a diffprivlib mechanism
  (instance, or its bound `randomise`) and an object with `release(value,
  rng)` (looped) are wrapped; anything else is refused naming the adapter.

Non-numeric outputs (diffprivlib's Exponential returns its candidates) are
returned as they are; `run_audit` maps them to indices.  Checked against
opendp 0.16 and diffprivlib 0.6.6.
"""
from __future__ import annotations

import copy
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
        return np.asarray([self.measurement(dataset) for _ in range(n)])

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
    params: "dict | Callable[[Any], dict]" = field(default_factory=dict)
    value: bool = True
    sample_input: Any = None

    def __post_init__(self) -> None:
        if callable(self.params) and self.sample_input is None:
            return  # built per dataset: validated on the first call
        self.build(None, self.sample_input)  # diffprivlib validates epsilon/delta here

    @classmethod
    def from_instance(cls, mech: Any, name: "str | None" = None) -> "DiffprivlibMechanism":
        """An already built diffprivlib mechanism, re-seeded from `rng` on every call."""
        if not callable(getattr(mech, "randomise", None)):
            raise invalid("mech", mech, "a diffprivlib mechanism (with randomise)")
        return cls(type(mech), name or f"diffprivlib {type(mech).__name__}",
                   lambda dataset: mech, sample_input=0.0)

    def build(self, random_state: "int | None", dataset: Any = None) -> Any:
        """One instance of the wrapped mechanism (for `dataset` when params is a callable)."""
        if callable(self.params):
            made = self.params(dataset)
            if not isinstance(made, dict):  # from_instance: the instance itself, re-seeded
                mech = copy.copy(made)
                mech._rng = np.random.RandomState(random_state)  # diffprivlib's generator
                return mech
            params = made
        else:
            params = self.params
        try:
            mech = self.mechanism_class(**params, random_state=random_state)
        except TypeError as err:
            raise invalid("mechanism_class", self.mechanism_class,
                          f"a diffprivlib mechanism class accepting {sorted(params)}") from err
        if not callable(getattr(mech, "randomise", None)):
            raise invalid("mechanism_class", self.mechanism_class, "a class with randomise(value)")
        return mech

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        mech = self.build(int(rng.integers(2**31 - 1)), dataset)
        if self.value:
            return np.asarray([mech.randomise(dataset) for _ in range(n)])
        return np.asarray([mech.randomise() for _ in range(n)])

    def claim(self, dataset: Any = None) -> Claim:
        """The mechanism's declared (epsilon, delta) (built for `dataset` if params is callable)."""
        mech = self.build(None, self.sample_input if dataset is None else dataset)
        return Claim(float(mech.epsilon), float(mech.delta),
                     f"diffprivlib {self.mechanism_class.__name__} declared parameters")


@dataclass(frozen=True, eq=False)
class DiffprivlibFunction:
    """A diffprivlib tool (`tools.mean`, `tools.var`, ...) called n times with a seeded state."""

    function: Callable
    name: str = "diffprivlib tool"
    params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise invalid("function", self.function, "a diffprivlib tool such as tools.mean")

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        state = np.random.RandomState(int(rng.integers(2**31 - 1)))
        data = np.asarray(dataset)
        return np.asarray([self.function(data, **self.params, random_state=state)
                           for _ in range(n)])

    def claim(self) -> Claim:
        """The tool's epsilon parameter (diffprivlib's tools are pure epsilon-DP)."""
        return Claim(float(self.params.get("epsilon", 1.0)), 0.0,
                     f"diffprivlib {getattr(self.function, '__name__', 'tool')} epsilon parameter")


def as_release(obj: Any) -> Callable[[Any, np.random.Generator], Any]:
    """`obj` as one run `release(value, rng) -> output`, for one-run audits (`sum_canaries`).

    Takes what `run_audit` takes in the one-run shape: a `ReleaseAdapter` (its
    release), an object with `release(value, rng)` (a mechanism), or a plain
    `release(value, rng)` callable; so the same object audits both ways.
    """
    if isinstance(obj, ReleaseAdapter):
        return obj.release
    method = getattr(obj, "release", None)
    if callable(method) and not isinstance(obj, type):
        return method
    if callable(obj):
        return obj
    raise invalid("release", obj, "a ReleaseAdapter, an object with release(value, rng) or a "
                  "callable release(value, rng) -> output")


def as_mechanism(obj: Any) -> Any:
    """`obj` as an audit mechanism `(dataset, rng, n) -> outputs` (see the module docstring)."""
    if callable(getattr(obj, "map", None)) and hasattr(obj, "output_measure"):
        return OpenDPMechanism(obj, "opendp measurement")
    owner = getattr(obj, "__self__", None)
    if getattr(obj, "__name__", "") == "randomise" and owner is not None:
        return DiffprivlibMechanism.from_instance(owner)
    if callable(getattr(obj, "randomise", None)) and not isinstance(obj, type):
        return DiffprivlibMechanism.from_instance(obj)
    if isinstance(obj, type) and callable(getattr(obj, "randomise", None)):
        raise invalid("mechanism", obj, "an instance, or DiffprivlibMechanism(cls, params={...})")
    if callable(obj):
        return obj
    if callable(getattr(obj, "release", None)):
        return ReleaseAdapter(obj.release, type(obj).__name__, batched=False)
    hint = (" (a stream: use StreamAdapter(factory))" if callable(getattr(obj, "add", None))
            else "")
    raise invalid("mechanism", obj, "a callable (dataset, rng, n) -> n outputs, an OpenDP "
                  "measurement, a diffprivlib mechanism or an object with release(value, rng)"
                  + hint)
