"""Static batch grids of BaSE (Gao, Han, Ren, Zhou 2019, "Batched multi-armed bandits").

A grid is the increasing sequence of batch end points 0 < t_1 < ... < t_M = T.
It is *static*: it depends on T and M only, never on feedback, so many BaSE
instances (one per user in seed 004's Algorithm 1) run their batches in lockstep.

- minimax grid: t_m = floor(a ** (2 - 2 ** (1 - m))), a = T ** (1 / (2 - 2 ** (1 - M)));
- geometric grid: t_m = floor(b ** m), b = T ** (1 / M);
- both end at t_M = T exactly.
"""
from __future__ import annotations

import math

import numpy as np

from privbandit.accounting.validation import check_count

from ..errors import config_error
from .errors import HorizonTooShortError

GRIDS = ("minimax", "geometric")


def default_batches(horizon: int) -> int:
    """B = ceil(log2 log2 T), at least 2: seed 004's "B = log log T" (base 2, our choice)."""
    horizon = check_count("horizon", horizon, minimum=2)
    return max(2, math.ceil(math.log2(max(math.log2(horizon), 1.0))))


def minimax_grid(horizon: int, batches: int) -> np.ndarray:
    """End points of Gao et al.'s minimax grid, (batches,) int64."""
    horizon, batches = _check(horizon, batches)
    a = horizon ** (1.0 / (2.0 - 2.0 ** (1 - batches)))
    m = np.arange(1, batches, dtype=np.float64)
    points = np.floor(a ** (2.0 - 2.0 ** (1.0 - m)))
    return _finish("minimax", points, horizon, batches)


def geometric_grid(horizon: int, batches: int) -> np.ndarray:
    """End points of Gao et al.'s geometric grid, (batches,) int64."""
    horizon, batches = _check(horizon, batches)
    b = horizon ** (1.0 / batches)
    points = np.floor(b ** np.arange(1, batches, dtype=np.float64))
    return _finish("geometric", points, horizon, batches)


def make_grid(kind: str, horizon: int, batches: int) -> np.ndarray:
    """The grid named `kind` ("minimax" or "geometric")."""
    if kind == "minimax":
        return minimax_grid(horizon, batches)
    if kind == "geometric":
        return geometric_grid(horizon, batches)
    raise config_error("grid", kind, f"one of {GRIDS}")


def batch_lengths(grid: np.ndarray) -> np.ndarray:
    """D_m = t_m - t_(m-1) with t_0 = 0."""
    return np.diff(np.asarray(grid, dtype=np.int64), prepend=0)


def _check(horizon: object, batches: object) -> tuple[int, int]:
    return check_count("horizon", horizon, minimum=1), check_count("batches", batches, minimum=1)


def _finish(kind: str, points: np.ndarray, horizon: int, batches: int) -> np.ndarray:
    grid = np.append(points.astype(np.int64), horizon)
    if np.any(np.diff(grid, prepend=0) <= 0):
        raise HorizonTooShortError(
            f"horizon too short for {batches} batches: the {kind} grid over T={horizon} "
            f"is {grid.tolist()}, and every batch needs at least one round"
        )
    return grid
