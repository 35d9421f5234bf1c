"""`RecommendationModels`: the ridge models local clusters recommend with.

Row m holds M_m^-1, b_m, ln det M_m and the sample count of the statistics
M_m = (regulariser) + sum x x^T, b_m = sum y x.  An own observation is one
Sherman-Morrison step plus one determinant-lemma step (O(d^2)); a row is
reset from a full matrix only when communication changes it (one inversion).
Matrices built from noisy statistics may, with small probability, fail to be
positive definite: `set` then keeps the pseudo-inverse and ln|det| = -inf, so
the run goes on (the privacy guarantee never depends on it).
"""
from __future__ import annotations

import math

import numpy as np

from ..kernels import sherman_morrison, ucb_scores


def logdet(matrix: np.ndarray) -> float:
    """ln det of a symmetric matrix by Cholesky; -inf unless it is positive definite."""
    return float(logdets(matrix[None])[0])


def logdets(matrices: np.ndarray) -> np.ndarray:
    """ln det of a batch of symmetric matrices (M, d, d) -> (M,), by Cholesky; -inf for
    those that are not positive definite.  One arithmetic for one matrix and for a batch
    (`logdet` calls this), so replicates in lockstep get the bits of separate runs."""
    try:
        factors = np.linalg.cholesky(matrices)
    except np.linalg.LinAlgError:  # some matrix is not positive definite: one at a time
        return np.array([logdets(m[None])[0] if _positive_definite(m) else -math.inf
                         for m in matrices])
    diag = np.diagonal(factors, axis1=-2, axis2=-1)
    product = diag.prod(axis=-1)
    if product.all():  # one log instead of d per matrix, unless a product fails
        out = np.log(product)
        if math.isfinite(math.fsum(out)):
            out *= 2.0
            return out
    with np.errstate(divide="ignore", over="ignore"):
        fine = (product > 0.0) & (product < math.inf)
        return 2.0 * np.where(fine, np.log(product), np.log(diag).sum(axis=-1))


def _positive_definite(matrix: np.ndarray) -> bool:
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return False
    return True


def inverse(matrix: np.ndarray) -> np.ndarray:
    """The inverse, or the pseudo-inverse of a (numerically) singular matrix; a batch
    (..., d, d) is inverted matrix by matrix (the same numbers as one at a time)."""
    try:
        return np.linalg.inv(matrix)
    except np.linalg.LinAlgError:
        if matrix.ndim > 2:
            return np.stack([inverse(m) for m in matrix])
        return np.linalg.pinv(matrix)


class RecommendationModels:
    """`rows` ridge models in dimension `dim` (see the module docstring)."""

    def __init__(self, rows: int, dim: int) -> None:
        self.dim = dim
        self.inv = np.zeros((rows, dim, dim))
        self.b = np.zeros((rows, dim))
        self.logdet = np.zeros(rows)
        self.count = np.zeros(rows, dtype=np.int64)

    def set(self, row: int, gram: np.ndarray, b: np.ndarray, count: int,
            inv: np.ndarray | None = None, logdet_value: float | None = None) -> None:
        """Row `row` := the statistics (gram, b, count); pass inv/logdet if already known."""
        self.inv[row] = inverse(gram) if inv is None else inv
        self.b[row] = b
        self.logdet[row] = logdet(gram) if logdet_value is None else logdet_value
        self.count[row] = count

    def add(self, row: int, x: np.ndarray, y: float) -> None:
        """Add one observation (x, y) to row `row`: O(d^2)."""
        quad = sherman_morrison(self.inv[row], x)
        self.b[row] += y * x
        self.logdet[row] += math.log1p(quad)
        self.count[row] += 1

    def scores(self, row: int, items: np.ndarray, beta: float) -> np.ndarray:
        """UCBs x_k . theta + beta ||x_k||_{M^-1} of the K items, (K,)."""
        inv = self.inv[row]
        return ucb_scores(inv @ self.b[row], inv, items, beta)
