"""The three protocols of an audit (plus the statistic a tester may use).

- `Mechanism`: `(dataset, rng, n) -> outputs`, n independent runs along axis 0.
- `PairGenerator`: `(rng) -> NeighbouringPair`; a fixed pair or a list of pairs
  works wherever a generator does (see `run_audit`).
- `Tester`: `bound(outputs0, outputs1, *, delta, confidence) -> LowerBound`,
  with `name` and `assumptions` strings for the report.
- `Statistic`: `fit(selection0, selection1) -> (outputs -> (n,) scalars)`.

They are structural (`typing.Protocol`): any object with the right call shape
qualifies; nothing needs to inherit from them.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .claims import NeighbouringPair
from .testers import LowerBound


@runtime_checkable
class Mechanism(Protocol):
    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> Any: ...


@runtime_checkable
class PairGenerator(Protocol):
    def __call__(self, rng: np.random.Generator) -> NeighbouringPair: ...


@runtime_checkable
class Tester(Protocol):
    name: str
    assumptions: str

    def bound(
        self, outputs0: np.ndarray, outputs1: np.ndarray, *, delta: float, confidence: float
    ) -> LowerBound: ...


@runtime_checkable
class Statistic(Protocol):
    def fit(
        self, selection0: np.ndarray, selection1: np.ndarray
    ) -> Callable[[np.ndarray], np.ndarray]: ...
