"""Carathéodory decomposition of a point of P_C(S) into vertices (0/1 assignments).

Walk (as in Hoeksma, Manthey, Uetz 2016): given y in P_C(S), take a vertex v of
the smallest face containing y (an LP over that face; the face of a totally
unimodular system has integral vertices), and move from v through y to the
face's boundary: y = lam v + (1 - lam) y' with the largest lam keeping y' in
P_C(S).  That lam has a closed form (below), y' satisfies every constraint
tight at y plus at least one more, so after at most dim + 1 steps y' is itself a
vertex.  A final pass (`reduce_support`) shrinks any convex combination of
points in R^E to at most E + 1 of them (the theorem's bound).
"""
from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from ..errors import DecompositionError
from .polytope import TOL

# The walk ends when the mass left after a step is below this (of 1): dividing the rest by
# 1 - lam then would blow its rounding up past any tolerance (lam = 1 - 2e-9 left 4e-14 of
# the point and turned the next face's LP infeasible).
_MASS = 1e-12


def caratheodory(
    y: np.ndarray, arms: np.ndarray, threshold: int
) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (V, N, K) of P_C(arms) and convex weights (V,) whose combination is y."""
    y = _snap(np.where(arms[None, :], np.asarray(y, dtype=np.float64), 0.0))
    vertices, weights, left = [], [], 1.0
    limit = 2 * (y.size + y.shape[0] + y.shape[1]) + 10
    for _ in range(limit):
        v = _face_vertex(y, arms, threshold)
        lam = _step(y, v, arms, threshold)
        vertices.append(v)
        if lam >= 1.0 - TOL or left * (1.0 - lam) < _MASS:
            weights.append(left)
            return np.array(vertices), np.array(weights)
        weights.append(left * lam)
        y = _snap((y - lam * v) / (1.0 - lam))
        left *= 1.0 - lam
    raise DecompositionError(f"Carathéodory walk did not end within {limit} steps")


def _snap(y: np.ndarray) -> np.ndarray:
    y = np.clip(y, 0.0, 1.0)
    y[y < TOL] = 0.0
    y[y > 1.0 - TOL] = 1.0
    return y


def _step(y: np.ndarray, v: np.ndarray, arms: np.ndarray, threshold: int) -> float:
    """Largest lam in (0, 1] with (y - lam v) / (1 - lam) still in P_C(arms)."""
    ones = v > 0.5
    bounds = [y[ones], 1.0 - y[~ones & (y > 0)]]
    rows_off = ~ones.any(axis=1)
    bounds.append(1.0 - y.sum(axis=1)[rows_off])
    kappa = v.sum(axis=0)[arms]
    col = y.sum(axis=0)[arms]
    over = kappa > threshold + 1
    bounds.append((col[over] - threshold - 1) / (kappa[over] - threshold - 1))
    lam = min((float(b.min()) for b in bounds if b.size), default=1.0)
    if lam <= 0.0:
        raise DecompositionError(f"Carathéodory step found no progress (lam = {lam:g})")
    return min(lam, 1.0)


def _face_vertex(y: np.ndarray, arms: np.ndarray, threshold: int) -> np.ndarray:
    """An integral vertex of the smallest face of P_C(arms) containing y.

    Entries of y at 0 or 1 are fixed; rows summing to 1 and columns summing to
    C + 1 stay tight.  Among the face's vertices the LP picks one maximising
    sum y_e v_e (the one most aligned with y), so steps tend to be long.
    """
    n, k = y.shape
    fixed = y >= 1.0
    users, cols = np.nonzero((y > 0.0) & ~fixed)
    v = fixed.astype(np.float64)
    m = users.size
    if m == 0:
        return v
    e = np.arange(m)
    row_room = 1.0 - fixed.sum(axis=1)
    col_need = threshold + 1.0 - fixed.sum(axis=0)
    row_tight = y.sum(axis=1) >= 1.0 - TOL
    col_tight = (y.sum(axis=0) <= threshold + 1.0 + TOL) & arms
    rows = sparse.csr_matrix((np.ones(m), (users, e)), shape=(n, m))
    colm = sparse.csr_matrix((np.ones(m), (cols, e)), shape=(k, m))
    used_rows, used_cols = np.unique(users), np.unique(cols)
    tight_rows, loose_rows = _split(used_rows, row_tight)
    tight_cols, loose_cols = _split(used_cols, col_tight)
    eq = [rows[tight_rows], colm[tight_cols]]
    b_eq = np.r_[row_room[tight_rows], col_need[tight_cols]]
    a_ub = sparse.vstack([rows[loose_rows], -colm[loose_cols]]).tocsr()
    b_ub = np.r_[row_room[loose_rows], -col_need[loose_cols]]
    res = linprog(
        -y[users, cols], A_ub=a_ub if b_ub.size else None, b_ub=b_ub if b_ub.size else None,
        A_eq=sparse.vstack(eq).tocsr() if b_eq.size else None,
        b_eq=b_eq if b_eq.size else None, bounds=(0.0, 1.0), method="highs-ds",
    )
    if res.status != 0:
        raise DecompositionError(f"no vertex found on the face of y: {res.message}")
    sol = res.x
    if np.abs(sol - np.round(sol)).max() > 1e-6:
        raise DecompositionError("the face LP returned a fractional vertex")
    v[users, cols] = np.round(sol)
    return v


def _split(indices: np.ndarray, tight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return indices[tight[indices]], indices[~tight[indices]]


def reduce_support(points: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop points until at most E + 1 remain (E = coordinates), same combination.

    Each pass finds an affine dependence mu (sum mu_k p_k = 0, sum mu_k = 0) and
    moves the weights along it until one reaches zero.
    """
    points = np.asarray(points, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    flat = points.reshape(len(points), -1)
    keep = flat.any(axis=0)
    flat = flat[:, keep]
    while len(weights) > flat.shape[1] + 1:
        system = np.vstack([flat.T, np.ones(len(weights))])
        mu = np.linalg.svd(system)[2][-1]
        if not (mu > 0).any():
            mu = -mu
        pos = mu > 1e-12
        t = np.min(weights[pos] / mu[pos])
        weights = weights - t * mu
        alive = weights > 1e-15
        alive[np.argmin(np.where(pos, weights, np.inf))] = False
        points, flat, weights = points[alive], flat[alive], weights[alive]
    return points, weights / weights.sum()
