"""The greedy decomposition (seed 004, §3.4.1): approximation ratio alpha = K.

For each arm j wanted by someone, the assignment M_j puts every user with j in
A_i on arm j (the others are free), repeated D times.  With U >= C + 1 at least
C + 1 users are on arm j in M_j, so M_j is informative for every pair (i, j) and
D copies meet every demand: K * D assignments in all.
"""
from __future__ import annotations

import numpy as np

from .core import FREE, Decomposition, check_batched_graph


def greedy_decomposition(
    active: np.ndarray, demand: int, threshold: int, rng: np.random.Generator | None = None
) -> Decomposition:
    """D copies of M_j for every arm j with candidates (rng unused: deterministic)."""
    active, demand, threshold = check_batched_graph(active, demand, threshold)
    arms = np.flatnonzero(active.any(axis=0))
    patterns = greedy_patterns(active, arms)
    repeats = np.full(arms.size, demand, dtype=np.int64)
    return Decomposition(patterns, repeats, "greedy", {"alpha": float(arms.size)})


def greedy_patterns(active: np.ndarray, arms: np.ndarray) -> np.ndarray:
    """M_j for each j in `arms`, (len(arms), N): users with j in A_i on j, the others free."""
    return np.where(active[:, arms].T, arms[:, None], FREE)
