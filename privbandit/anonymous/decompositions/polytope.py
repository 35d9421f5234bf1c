"""The C-anonymity polytopes P_C(S) of seed 004, §3.4.2, and the LP that finds points in them.

For a set S of arms, P_C(S) is the convex hull of the 0/1 matrices v (N, K) with
at most one 1 per row, at least C + 1 ones in every column of S and none outside
S.  By Lemma 4 it is exactly the set of x with

    0 <= x_ij <= 1,  sum_j x_ij <= 1 (each i),  sum_i x_ij >= C + 1 (j in S),
    x_ij = 0 (j not in S)                                            (1)

(the system is a bipartite incidence system, totally unimodular, so its
vertices are integral).  For a batched graph with normalised weights
w_ij = 1 / |A_i| on A_i, `dominating_point` solves the LP

    maximise beta  s.t.  x in P_C(S),  x >= beta * w on the columns of S,
                         x = 0 off the demand sets

with scipy's HiGHS (dual simplex, so the point is a vertex of the LP).  Points
of several blocks S_1..S_m (a partition of the wanted arms) combine with weights
proportional to 1 / beta_a into one point of P_C dominating w / alpha with
alpha = sum_a 1 / beta_a (Lemma 6 gives every beta_a >= 1 when the blocks hold at
most U / (C + 1) arms, hence alpha <= ceil(K (C + 1) / U); Lemma 5 gives alpha = 1
with one block when U >= K (C + 1)).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from privbandit.accounting.validation import check_count

from ...errors import ShapeError
from ..errors import DecompositionError

# Feasibility slack for points computed in floating point.
TOL = 1e-9


def in_polytope(x: np.ndarray, arms: np.ndarray, threshold: int, tol: float = TOL) -> bool:
    """Does x (N, K) satisfy system (1) for S = `arms` ((K,) bool mask), up to `tol`?"""
    x = np.asarray(x, dtype=np.float64)
    arms = np.asarray(arms, dtype=bool)
    if x.ndim != 2 or arms.shape != (x.shape[1],):
        raise ShapeError(f"x must be (N, K) and arms (K,); got {x.shape} and {arms.shape}")
    cols = x.sum(axis=0)
    return bool(
        np.all(x >= -tol) and np.all(x <= 1 + tol)
        and np.all(x.sum(axis=1) <= 1 + tol)
        and np.all(cols[arms] >= threshold + 1 - tol)
        and np.all(np.abs(x[:, ~arms]) <= tol)
    )


def normalised_weights(active: np.ndarray) -> np.ndarray:
    """w_ij = 1 / |A_i| on A_i, 0 elsewhere, (N, K)."""
    return active / active.sum(axis=1, keepdims=True)


def dominating_point(
    active: np.ndarray, arms: np.ndarray, threshold: int
) -> tuple[float, np.ndarray]:
    """(beta, x): the largest beta with some x in P_C(arms), x >= beta w on arms' columns.

    Returns beta = 0 and x = 0 when P_C(arms) has no point supported on the demand
    sets (some arm of the block has at most C candidate users).
    """
    threshold = check_count("threshold", threshold)
    n, k = active.shape
    support = active & arms[None, :]
    users, cols = np.nonzero(support)
    m = users.size
    if m == 0 or (support.sum(axis=0)[arms] < threshold + 1).any():
        return 0.0, np.zeros((n, k))
    w = normalised_weights(active)[users, cols]
    e = np.arange(m)
    block_arms = np.flatnonzero(arms)
    col_row = np.searchsorted(block_arms, cols)
    # Variables: x_e (m of them), then beta.
    row_sum = sparse.csr_matrix((np.ones(m), (users, e)), shape=(n, m + 1))
    col_sum = sparse.csr_matrix((-np.ones(m), (col_row, e)), shape=(block_arms.size, m + 1))
    dominance = sparse.csr_matrix(
        (np.r_[-np.ones(m), w], (np.r_[e, e], np.r_[e, np.full(m, m)])), shape=(m, m + 1)
    )
    a_ub = sparse.vstack([row_sum, col_sum, dominance]).tocsr()
    b_ub = np.r_[np.ones(n), -np.full(block_arms.size, threshold + 1.0), np.zeros(m)]
    cost = np.zeros(m + 1)
    cost[m] = -1.0
    bounds = [(0.0, 1.0)] * m + [(0.0, None)]
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs-ds")
    if res.status == 2:
        return 0.0, np.zeros((n, k))
    if res.status != 0:
        raise DecompositionError(f"HiGHS failed on the anonymity LP: {res.message}")
    x = np.zeros((n, k))
    x[users, cols] = np.clip(res.x[:m], 0.0, 1.0)
    return float(res.x[m]), x


def snake_blocks(active: np.ndarray, count: int) -> list[np.ndarray]:
    """Partition the wanted arms into `count` blocks ((K,) bool masks), balancing candidates.

    Arms sorted by number of candidate users (most first) are dealt to blocks in
    snake order (0, 1, .., m-1, m-1, .., 0, ...), so each block mixes popular and
    rare arms; Lemma 6 allows any partition into blocks of <= U / (C + 1) arms.
    """
    candidates = active.sum(axis=0)
    wanted = np.flatnonzero(candidates > 0)
    ranked = wanted[np.argsort(-candidates[wanted], kind="stable")]
    period = np.r_[np.arange(count), np.arange(count)[::-1]]
    labels = period[np.arange(ranked.size) % period.size]
    blocks = []
    for a in range(count):
        mask = np.zeros(active.shape[1], dtype=bool)
        mask[ranked[labels == a]] = True
        blocks.append(mask)
    return [b for b in blocks if b.any()]


@dataclass(frozen=True)
class AnonymityPoint:
    """Block points x_a in P_C(S_a) with x_a >= beta_a w on S_a; alpha = sum_a 1 / beta_a."""

    blocks: tuple[np.ndarray, ...]
    points: tuple[np.ndarray, ...]
    betas: tuple[float, ...]

    @property
    def alpha(self) -> float:
        return float(sum(1.0 / b for b in self.betas))

    @property
    def weights(self) -> np.ndarray:
        """Convex weights of the blocks, proportional to 1 / beta_a."""
        inv = 1.0 / np.asarray(self.betas)
        return inv / inv.sum()

    def combined(self) -> np.ndarray:
        """sum_a weight_a x_a: a point of P_C dominating w / alpha."""
        return sum(wt * x for wt, x in zip(self.weights, self.points, strict=True))


def anonymity_point(active: np.ndarray, threshold: int) -> AnonymityPoint:
    """The best of the snake partitions into 1..K' blocks (K' = arms wanted): smallest alpha."""
    wanted = int((active.sum(axis=0) > 0).sum())
    best: AnonymityPoint | None = None
    for count in range(1, wanted + 1):
        blocks = snake_blocks(active, count)
        solved = [dominating_point(active, b, threshold) for b in blocks]
        if any(beta <= TOL for beta, _ in solved):
            continue
        point = AnonymityPoint(
            tuple(blocks), tuple(x for _, x in solved), tuple(beta for beta, _ in solved)
        )
        if best is None or point.alpha < best.alpha - TOL:
            best = point
        if best.alpha <= 1 + TOL:  # alpha >= 1 always: nothing better exists
            break
    if best is None:
        raise DecompositionError(
            "user-cluster assumption U >= C + 1 fails: no partition of the arms gives "
            "points of the anonymity polytopes covering the demand"
        )
    return best
