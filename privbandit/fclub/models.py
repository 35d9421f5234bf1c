"""`RecommendationModels`: the ridge models local clusters recommend with.

Row m holds M_m^-1, b_m, ln det M_m and the sample count of the statistics
M_m = (regulariser) + sum x x^T, b_m = sum y x.  An own observation is one
Sherman-Morrison step plus one determinant-lemma step (O(d^2)); a row is
reset from a full matrix only when communication changes it.  Resets are
deferred until a row's inverse or ln det is next read, then done for every
pending row in one batched inversion and one batched Cholesky: a row reset
twice in between is inverted once, and a burst of downloads costs two
calls (`inverse` and `logdets` give a batch the bits of one matrix at a time).
Matrices built from noisy statistics may, with small probability, fail to be
positive definite: `set` then keeps the pseudo-inverse and ln|det| = -inf, so
the run goes on (the privacy guarantee never depends on it).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..kernels import sherman_morrison, ucb_scores


def logdet(matrix: np.ndarray) -> float:
    """ln det of a symmetric matrix by Cholesky; -inf unless it is positive definite.
    The bits of `logdets` (one matrix of a batch), with fewer steps when the product
    of the factor's diagonal is a positive finite number."""
    try:
        factor = np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError:
        return -math.inf
    product = factor.diagonal().prod()
    if 0.0 < product < math.inf:
        return 2.0 * float(np.log(product))
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
    """`rows` ridge models in dimension `dim` (see the module docstring).

    `inv` (rows, d, d), `b` (rows, d), `logdet` (rows,) and `count` (rows,) are
    arrays; reading `inv` or `logdet` first completes pending resets, and
    assigning them (binding to another array) does too.
    """

    def __init__(self, rows: int, dim: int) -> None:
        self.dim = dim
        self._inv = np.zeros((rows, dim, dim))
        self.b = np.zeros((rows, dim))
        self._logdet = np.zeros(rows)
        self.count = np.zeros(rows, dtype=np.int64)
        self._gram = np.empty((rows, dim, dim))  # the matrices of pending resets
        self._stale_inv: set[int] = set()
        self._stale_logdet: set[int] = set()

    @property
    def inv(self) -> np.ndarray:
        """M_m^-1 of every row, (rows, d, d)."""
        if self._stale_inv or self._stale_logdet:
            self._complete()
        return self._inv

    @inv.setter
    def inv(self, value: np.ndarray) -> None:
        self._complete()
        self._inv = value

    @property
    def logdet(self) -> np.ndarray:
        """ln det M_m of every row, (rows,)."""
        if self._stale_inv or self._stale_logdet:
            self._complete()
        return self._logdet

    @logdet.setter
    def logdet(self, value: np.ndarray) -> None:
        self._complete()
        self._logdet = value

    def _complete(self) -> None:
        """Do the pending resets: one batched inversion, one batched ln det."""
        stale_inv, stale_logdet = self._stale_inv, self._stale_logdet
        same = stale_inv == stale_logdet  # the usual case: matrices given alone
        if stale_inv:
            rows = np.fromiter(stale_inv, np.intp, len(stale_inv))
            grams = self._gram[rows]
            self._inv[rows] = inverse(grams)
            if same:
                self._logdet[rows] = logdets(grams)
        if stale_logdet and not same:
            rows = np.fromiter(stale_logdet, np.intp, len(stale_logdet))
            self._logdet[rows] = logdets(self._gram[rows])
        stale_inv.clear()
        stale_logdet.clear()

    def set(self, row: int | np.ndarray, gram: np.ndarray, b: np.ndarray, count: Any,
            inv: np.ndarray | None = None, logdet_value: Any = None) -> None:
        """Row `row` := the statistics (gram, b, count); pass inv/logdet if already known
        (otherwise they are computed when next read).  `row` may be an array of R rows,
        with gram (R, d, d), b (R, d) and counts (R,): one call for a burst of resets."""
        keys = row.tolist() if isinstance(row, np.ndarray) else (row,)
        if inv is None or logdet_value is None:
            self._gram[row] = gram
        if inv is None:
            self._stale_inv.update(keys)
        else:
            self._stale_inv.difference_update(keys)
            self._inv[row] = inv
        if logdet_value is None:
            self._stale_logdet.update(keys)
        else:
            self._stale_logdet.difference_update(keys)
            self._logdet[row] = logdet_value
        self.b[row] = b
        self.count[row] = count

    def add(self, row: int, x: np.ndarray, y: float) -> None:
        """Add one observation (x, y) to row `row`: O(d^2)."""
        if self._stale_inv or self._stale_logdet:
            self._complete()
        quad = sherman_morrison(self._inv[row], x)
        self.b[row] += y * x
        self._logdet[row] += math.log1p(quad)
        self.count[row] += 1

    def scores(self, row: int, items: np.ndarray, beta: float) -> np.ndarray:
        """UCBs x_k . theta + beta ||x_k||_{M^-1} of the K items, (K,)."""
        if self._stale_inv or self._stale_logdet:
            self._complete()
        inv = self._inv[row]
        return ucb_scores(inv @ self.b[row], inv, items, beta)
