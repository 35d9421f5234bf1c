"""The anonymity-polytope decomposition (seed 004, §3.4.2, Lemmas 3-6, Corollaries 1-2).

1. `anonymity_point`: LPs (HiGHS) give, for a partition of the arms into blocks
   S_a, points x_a in P_C(S_a) with x_a >= beta_a w; their combination y with
   weights proportional to 1 / beta_a lies in P_C and dominates w / alpha,
   alpha = sum_a 1 / beta_a (1 when U >= K (C + 1), at most ceil(K (C + 1) / U)
   for U-batched graphs).
2. `caratheodory` writes each x_a as a convex combination of 0/1 vertices
   (assignments whose every assigned user is informative); `reduce_support`
   keeps at most E + 1 <= NK + 1 of them.
3. Vertex v with weight lam is repeated ceil(lam * alpha * D) times, so pair
   (i, j) gets at least alpha * D * y_ij >= D w_ij informative assignments, and
   the total is at most alpha * D + NK + 1 (Lemma 3).
"""
from __future__ import annotations

import numpy as np

from .caratheodory import caratheodory, reduce_support
from .core import FREE, Decomposition, check_batched_graph, pair_demand
from .polytope import anonymity_point
from .randomized import _greedy_top_up

# An alpha within this relative distance of an integer is that integer (LP rounding).
_ALPHA_SNAP = 1e-7


def lp_decomposition(
    active: np.ndarray, demand: int, threshold: int, rng: np.random.Generator | None = None
) -> Decomposition:
    """Polytope point + Carathéodory (rng unused: deterministic)."""
    active, demand, threshold = check_batched_graph(active, demand, threshold)
    point = anonymity_point(active, threshold)
    parts = [
        caratheodory(x, block, threshold)
        for block, x in zip(point.blocks, point.points, strict=True)
    ]
    vertices = np.concatenate([v for v, _ in parts])
    weights = np.concatenate([wt * lam for wt, (_, lam) in zip(point.weights, parts, strict=True)])
    vertices, weights = reduce_support(vertices, weights)
    alpha = point.alpha
    if abs(alpha - round(alpha)) <= _ALPHA_SNAP * alpha:
        alpha = float(round(alpha))
    repeats = np.ceil(weights * alpha * demand).astype(np.int64)
    used = repeats > 0
    vertices, repeats = vertices[used], repeats[used]
    patterns = np.where(vertices.any(axis=2), vertices.argmax(axis=2), FREE)
    decomposition = Decomposition(patterns, repeats, "lp")
    n, k = active.shape
    deficit = pair_demand(active, demand) - decomposition.informative_counts(k, threshold)
    top = _greedy_top_up(active, np.maximum(deficit, 0))
    details = {
        "alpha": alpha,
        "betas": list(point.betas),
        "blocks": [np.flatnonzero(b).tolist() for b in point.blocks],
        "vertices": int(len(patterns)),
        "topped_up": int(top[1].sum()),
    }
    return Decomposition(
        np.concatenate([patterns, top[0]]), np.r_[repeats, top[1]], "lp", details
    )
