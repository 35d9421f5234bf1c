"""Scalar statistics that testers threshold: how a release becomes one number.

Protocol: a statistic has `name` and `fit(selection0, selection1) -> f`, where
the arguments are the held-out selection parts of the two output samples
(shape (n, ...)) and `f(outputs) -> (n,)` maps any batch of outputs to scalars.
Fitting only ever sees the selection part, so the evaluation part stays
independent of every choice the tester makes.

- `Scalar()`: the release itself (one number per run).
- `Projection(direction)`: <output, direction>, flattened; for a multivariate
  release with a known canary direction (e.g. a tree privatizer's prefix sums:
  the canary's increment repeated over the steps it affects).
- `LinearDiscriminant(ridge)`: the projection direction fitted on the selection
  half, Sigma^-1 (m1 - m0) with a small ridge; the likelihood-ratio test for two
  Gaussians with one covariance, and a strong generic choice otherwise.
- `Auto()` (the testers' default): `Scalar` when each run releases one
  number, else `LinearDiscriminant`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from privbandit.accounting.validation import check_positive
from privbandit.mechanisms.errors import ShapeError

ScalarMap = Callable[[np.ndarray], np.ndarray]


def _rows(outputs: np.ndarray) -> np.ndarray:
    x = np.asarray(outputs, dtype=float)
    if x.ndim == 0:
        raise ShapeError(f"outputs must have a leading sample axis; got a scalar {x!r}")
    return x.reshape(x.shape[0], -1)


@dataclass(frozen=True)
class Scalar:
    """The release itself; each run must release exactly one number."""

    name: str = "scalar"

    def fit(self, selection0: np.ndarray, selection1: np.ndarray) -> ScalarMap:
        return self

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return _scalar(outputs)


def _scalar(outputs: np.ndarray) -> np.ndarray:
    x = _rows(outputs)
    if x.shape[1] != 1:
        raise ShapeError(
            f"Scalar statistic needs one number per run; got outputs of shape "
            f"{np.shape(outputs)} (use Projection or LinearDiscriminant)"
        )
    return x[:, 0]


@dataclass(frozen=True, eq=False)
class Projection:
    """<output, direction> with a fixed direction of the release's shape."""

    direction: np.ndarray
    name: str = "projection"

    def __post_init__(self) -> None:
        w = np.array(self.direction, dtype=float).ravel()
        if w.size == 0 or not np.all(np.isfinite(w)) or not np.any(w):
            raise ShapeError(f"direction must be a finite, non-zero array; got {self.direction!r}")
        w.setflags(write=False)
        object.__setattr__(self, "direction", w)

    def fit(self, selection0: np.ndarray, selection1: np.ndarray) -> ScalarMap:
        return self

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        x = _rows(outputs)
        if x.shape[1] != self.direction.size:
            raise ShapeError(
                f"outputs of shape {np.shape(outputs)} do not match a direction of "
                f"{self.direction.size} entries"
            )
        return x @ self.direction


@dataclass(frozen=True)
class LinearDiscriminant:
    """Fisher's direction Sigma^-1 (m1 - m0), fitted on the selection part.

    `ridge` is relative to the mean variance, so a coordinate without noise
    (a dropped node) gets a huge but finite weight instead of a singular solve.
    """

    ridge: float = 1e-6
    name: str = "linear-discriminant"

    def __post_init__(self) -> None:
        object.__setattr__(self, "ridge", check_positive("ridge", self.ridge))

    def fit(self, selection0: np.ndarray, selection1: np.ndarray) -> ScalarMap:
        x0, x1 = _rows(selection0), _rows(selection1)
        if len(x0) < 2 or len(x1) < 2:
            raise ShapeError(
                f"LinearDiscriminant needs >= 2 runs per side to fit; got {len(x0)}, {len(x1)}"
            )
        gap = x1.mean(axis=0) - x0.mean(axis=0)
        cov = 0.5 * (np.atleast_2d(np.cov(x0, rowvar=False))
                     + np.atleast_2d(np.cov(x1, rowvar=False)))
        scale = float(np.trace(cov)) / cov.shape[0]
        if scale > 0:
            w = np.linalg.solve(cov + self.ridge * scale * np.eye(cov.shape[0]), gap)
        else:  # noiseless outputs: the mean gap itself separates the two samples
            w = gap
        if not np.any(w):
            w = np.ones_like(gap)  # no signal on the selection part: any direction will do
        return Projection(w / np.linalg.norm(w), name=self.name)


@dataclass(frozen=True)
class Auto:
    """`Scalar` for one number per run, else `LinearDiscriminant` (decided by the shape)."""

    name: str = "auto"

    def fit(self, selection0: np.ndarray, selection1: np.ndarray) -> ScalarMap:
        if _rows(selection0).shape[1] == 1:
            return Scalar()
        return LinearDiscriminant().fit(selection0, selection1)
