"""Streaming mechanisms (the tree privatizer) as audit mechanisms.

    StreamAdapter(factory, name)
    tree_factory(shape, horizon, sigma, *, clip_norm, sampler=None) -> factory

A streaming privatizer releases after every `add(increment, rng)`; one run of
the audit is a whole stream, and its output is every release, stacked
(n, T, *shape).  `factory(batch)` builds a privatizer whose increments have
shape (batch, *shape): n runs are simulated as one privatizer over a batch
axis, which is exact for a tree because its noise is drawn independently per
entry and nothing couples entries except the norm clip.  `tree_factory` turns
that clip off on the batch (each run's increments are checked against
`clip_norm` here instead) and passes the run-level `sigma` through, so the
batched tree releases exactly what n separate `TreePrivatizer`s would.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_positive
from privbandit.mechanisms.errors import OutOfBoundsError, ShapeError
from privbandit.mechanisms.tree import TreePrivatizer

Factory = Callable[[int], Any]


@dataclass(frozen=True, eq=False)
class StreamAdapter:
    """(stream (T, *shape), rng, n) -> (n, T, *shape): every release of n runs."""

    factory: Factory
    name: str = "stream"

    def __post_init__(self) -> None:
        if not callable(self.factory):
            raise invalid("factory", self.factory, "a callable batch -> privatizer")

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        stream = _stream(dataset)
        privatizer = self.factory(n)
        releases = [privatizer.add(np.broadcast_to(x, (n, *x.shape)).copy(), rng) for x in stream]
        return np.stack(releases, axis=1)


def _stream(dataset: Any) -> np.ndarray:
    stream = np.asarray(dataset, dtype=float)
    if stream.ndim < 1 or len(stream) == 0:
        raise ShapeError(f"a stream must be an array (T, *shape) with T >= 1; got {stream.shape}")
    return stream


def tree_factory(shape: tuple, horizon: int, sigma: float, *, clip_norm: float,
                 sampler: Any = None) -> Factory:
    """Batched `TreePrivatizer`s with node std `sigma` (see the module docstring)."""
    shape = tuple(shape)
    horizon = check_count("horizon", horizon)
    sigma = check_positive("sigma", sigma)
    clip = check_positive("clip_norm", clip_norm)

    def build(batch: int) -> "_CheckedTree":
        wide = clip * math.sqrt(check_count("batch", batch)) * (1.0 + 1e-9)
        tree = TreePrivatizer((batch, *shape), horizon, sigma=sigma, l2_sensitivity=wide,
                              sampler=sampler)
        return _CheckedTree(tree, clip)

    return build


@dataclass(frozen=True, eq=False)
class _CheckedTree:
    """A batched tree that refuses any run's increment above the run-level clip norm."""

    tree: TreePrivatizer
    clip: float

    def add(self, increment: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        norms = np.sqrt(np.sum(increment.reshape(len(increment), -1) ** 2, axis=1))
        if np.any(norms > self.clip):
            raise OutOfBoundsError(
                f"stream increments must have norm <= clip_norm = {self.clip:g} per run; got "
                f"{float(norms.max()):.6g}")
        return self.tree.add(increment, rng)
