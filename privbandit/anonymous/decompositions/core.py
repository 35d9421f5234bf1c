"""C-anonymous decompositions of batched graphs (seed 004, §3.2): the shared pieces.

A batched graph is a total demand D and, for each user i, a non-empty set A_i of
arms (an (N, K) boolean mask `active`); user i wants w_ij = D / |A_i| pieces of
feedback on each j in A_i, i.e. ceil(D / |A_i|) as feedback comes in whole pieces.

A decomposition is a list of assignments (user -> arm).  Assignment M is
*informative* for (i, j) when M(i) = j and at least C + 1 users are on arm j in M
(what the feedback-eliciting sub-algorithm needs).  It is valid when (1) no user
is ever put on an arm outside A_i and (2) every pair (i, j), j in A_i, gets at
least ceil(D / |A_i|) informative assignments.  `verify_decomposition` checks both.

Assignments are stored compressed: distinct `patterns` (P, N) with `repeats` (P,).
A pattern may leave a user *free* (-1): the user has no informative role there and
may play any arm of A_i ("arbitrarily", §3.4.1); `Decomposition.filled` picks it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from privbandit.accounting.validation import check_count

from ...errors import ShapeError, config_error
from ..errors import DecompositionError

FREE = -1


def check_active(active: object) -> np.ndarray:
    """An (N, K) boolean mask with at least one active arm per user."""
    arr = np.asarray(active)
    if arr.ndim != 2 or arr.dtype != bool or 0 in arr.shape:
        raise ShapeError(
            f"active must be a non-empty (N, K) boolean array; got shape {arr.shape}, "
            f"dtype {arr.dtype}"
        )
    empty = np.flatnonzero(~arr.any(axis=1))
    if empty.size:
        raise config_error(
            "active", f"users {empty[:5].tolist()} with no active arm",
            "a mask with at least one active arm per user",
        )
    return arr


def pair_demand(active: np.ndarray, demand: int) -> np.ndarray:
    """Informative assignments each pair needs: ceil(D / |A_i|) on A_i, 0 elsewhere, (N, K)."""
    sizes = active.sum(axis=1, keepdims=True)
    return np.where(active, -(-demand // sizes), 0).astype(np.int64)


def check_decomposable(active: np.ndarray, threshold: int) -> None:
    """Every arm some user wants must have >= C + 1 candidate users (else no decomposition)."""
    candidates = active.sum(axis=0)
    short = np.flatnonzero((candidates > 0) & (candidates < threshold + 1))
    if short.size:
        j = int(short[0])
        raise DecompositionError(
            f"user-cluster assumption U >= C + 1 fails: arm {j} is active for only "
            f"{int(candidates[j])} users, so no group on it reaches C + 1 = {threshold + 1} "
            "and its demand can never be met"
        )


def check_batched_graph(
    active: object, demand: object, threshold: object
) -> tuple[np.ndarray, int, int]:
    """The checked inputs of a decomposition, (active, D, C); refuses graphs no
    decomposition can serve (`check_decomposable`)."""
    active = check_active(active)
    demand = check_count("demand", demand)
    threshold = check_count("threshold", threshold)
    check_decomposable(active, threshold)
    return active, demand, threshold


def is_u_batched(active: np.ndarray, cluster_size: int) -> bool:
    """Is there an assignment of users to active arms with >= U users on every arm?

    A feasibility LP over a bipartite (totally unimodular) system, so a fractional
    solution implies an integral one.
    """
    active = check_active(active)
    cluster_size = check_count("cluster_size", cluster_size)
    n, k = active.shape
    if active.sum(axis=0).min() < cluster_size:
        return False
    users, arms = np.nonzero(active)
    e = np.arange(users.size)
    rows = sparse.csr_matrix((np.ones(e.size), (users, e)), shape=(n, e.size))
    cols = sparse.csr_matrix((-np.ones(e.size), (arms, e)), shape=(k, e.size))
    res = linprog(
        np.zeros(e.size), A_ub=sparse.vstack([rows, cols]).tocsr(),
        b_ub=np.r_[np.ones(n), -np.full(k, float(cluster_size))], bounds=(0, 1),
        method="highs",
    )
    return bool(res.status == 0)


@dataclass(frozen=True)
class Decomposition:
    """Distinct assignments `patterns` (P, N) (arm per user, -1 = free), each used `repeats` times.

    `method` names the algorithm; `details` holds what it measured (e.g. the LP's
    approximation ratio).
    """

    patterns: np.ndarray
    repeats: np.ndarray
    method: str
    details: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        patterns = np.array(self.patterns, dtype=np.int64)  # own copies, then frozen
        repeats = np.array(self.repeats, dtype=np.int64)
        if patterns.ndim != 2 or repeats.shape != (patterns.shape[0],):
            raise ShapeError(
                f"patterns must be (P, N) and repeats (P,); got {patterns.shape} and "
                f"{repeats.shape}"
            )
        if repeats.size and repeats.min() < 1:
            raise config_error("repeats", repeats.min(), "integers >= 1")
        patterns.setflags(write=False)
        repeats.setflags(write=False)
        object.__setattr__(self, "patterns", patterns)
        object.__setattr__(self, "repeats", repeats)

    @property
    def size(self) -> int:
        """R, the number of assignments (each costs 2C + 2 rounds of elicitation)."""
        return int(self.repeats.sum())

    def informative(self, threshold: int) -> np.ndarray:
        """(P, N) bool: is pattern p informative for user i (on its assigned arm)?"""
        return informative_mask(self.patterns, threshold)

    def informative_counts(self, n_arms: int, threshold: int) -> np.ndarray:
        """(N, K) number of informative assignments of each user/arm pair."""
        info = self.informative(threshold)
        n = self.patterns.shape[1]
        weights = np.broadcast_to(self.repeats[:, None], info.shape)[info]
        users = np.broadcast_to(np.arange(n), info.shape)[info]
        flat = users * n_arms + self.patterns[info]
        return np.bincount(flat, weights=weights, minlength=n * n_arms).reshape(
            n, n_arms
        ).astype(np.int64)

    def filled(self, active: np.ndarray, arms: np.ndarray) -> "Decomposition":
        """Free users play `arms`: (N,) for every pattern or (P, N) per pattern, active ones."""
        n = self.patterns.shape[1]
        arms = np.broadcast_to(np.asarray(arms, dtype=np.int64), self.patterns.shape)
        ok = (arms >= 0) & (arms < active.shape[1])
        if not ok.all() or not active[np.arange(n), np.where(ok, arms, 0)].all():
            raise config_error("arms", "arms outside the users' demand sets",
                               "(N,) or (P, N) arms active for each user")
        patterns = np.where(self.patterns == FREE, arms, self.patterns)
        return Decomposition(patterns, self.repeats, self.method, self.details)

    def assignments(self) -> np.ndarray:
        """All R assignments expanded, (R, N) (free users stay -1)."""
        return np.repeat(self.patterns, self.repeats, axis=0)


def random_active_arms(active: np.ndarray, rows: int, rng: np.random.Generator) -> np.ndarray:
    """(rows, N): for each row, each user's uniformly drawn arm of A_i."""
    sizes = active.sum(axis=1)
    order = np.argsort(~active, axis=1, kind="stable")  # active arms first
    picks = np.floor(rng.random((rows, active.shape[0])) * sizes).astype(np.int64)
    return order[np.arange(active.shape[0]), picks]


def informative_mask(patterns: np.ndarray, threshold: int) -> np.ndarray:
    """(R, N) bool: assigned (not free) and on an arm with >= C + 1 users in that row."""
    patterns = np.asarray(patterns, dtype=np.int64)
    r, n = patterns.shape
    k = int(patterns.max(initial=-1)) + 1
    assigned = patterns >= 0
    flat = (np.arange(r)[:, None] * max(k, 1) + np.where(assigned, patterns, 0))[assigned]
    loads = np.bincount(flat, minlength=r * max(k, 1)).reshape(r, max(k, 1))
    on_arm = np.take_along_axis(loads, np.where(assigned, patterns, 0), axis=1)
    return assigned & (on_arm >= threshold + 1)


def verify_decomposition(
    decomposition: Decomposition, active: np.ndarray, demand: int, threshold: int
) -> None:
    """Raise `DecompositionError` unless the decomposition is valid for (D, A, C)."""
    active = check_active(active)
    n, k = active.shape
    pats = decomposition.patterns
    if pats.shape[1] != n:
        raise DecompositionError(f"patterns cover {pats.shape[1]} users; the graph has {n}")
    bad = (pats >= k) | (pats < FREE)
    assigned = pats >= 0
    outside = assigned & ~bad & ~active[np.arange(n), np.where(assigned & ~bad, pats, 0)]
    if bad.any() or outside.any():
        p, i = np.argwhere(bad | outside)[0]
        raise DecompositionError(
            f"pattern {p} puts user {i} on arm {pats[p, i]}, outside its demand set "
            f"{np.flatnonzero(active[i]).tolist()}"
        )
    deficit = pair_demand(active, demand) - decomposition.informative_counts(k, threshold)
    if (deficit > 0).any():
        i, j = np.argwhere(deficit > 0)[0]
        raise DecompositionError(
            f"pair (user {i}, arm {j}) has {deficit[i, j]} informative assignments fewer "
            f"than its demand ceil(D / |A_i|) = {pair_demand(active, demand)[i, j]}"
        )
