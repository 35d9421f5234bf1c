"""Phase-based cluster detection (seed 000 Algorithm 2): local edge deletion, global merge.

At the start of every phase each local server deletes the edge (i, j) of its
user graph when the users' estimates are far apart (eq. 3),

    ||theta_i - theta_j|| > alpha (F(T_i) + F(T_j)),   F(T) = sqrt((1 + ln(1 + T)) / (1 + T)),

and its local clusters are the connected components.  The global server then
joins local clusters whose estimates are close (eq. 4),

    ||theta_a - theta_b|| < alpha2 (F(T_a) + F(T_b)),

and the global clusters are the connected components of those joins (merging
is transitive).  The seed states eq. 4 for clusters of different servers; like
the authors' code we test every pair, so a local split that was premature can
be undone globally.  Estimates are ridge solutions (reg I + V)^-1 b, where `reg`
holds lam plus, for noisy statistics, the 2 rho shift of Definition 2.
Users or local clusters with no data are never separated (count 0), as in the
authors' code.  CDP-FCLUB-DC's detection="noise-aware" replaces both widths
by tests that count the privacy noise (`clustering.NoiseAwareClustering`):
an edge is deleted when the noisy estimates are proven different, and local
clusters join only when they are consistent and the test had the power to
tell them apart.  These functions run once per phase, never per round.
"""
from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ..kernels import UserGraph, club_confidence
from .labels import by_first_appearance

Partition = frozenset  # frozenset of global clusters, each a frozenset of local clusters


def ridge_estimates(gram: np.ndarray, b: np.ndarray, reg: np.ndarray) -> np.ndarray:
    """(reg_m I + gram_m)^-1 b_m for a batch: gram (M, d, d), b (M, d), reg (M,) -> (M, d)."""
    a = gram + reg[:, None, None] * np.eye(gram.shape[-1])
    try:
        return np.linalg.solve(a, b[..., None])[..., 0]
    except np.linalg.LinAlgError:  # a noisy matrix that happens to be singular
        return (np.linalg.pinv(a) @ b[..., None])[..., 0]


def _far_pairs(theta: np.ndarray, counts: np.ndarray, factor: float) -> np.ndarray:
    """(M, M) bool: ||theta_a - theta_b|| > factor (F(T_a) + F(T_b)), both counts > 0."""
    gaps = np.linalg.norm(theta[:, None, :] - theta[None, :, :], axis=-1)
    conf = club_confidence(counts)
    seen = counts > 0
    return (gaps > factor * (conf[:, None] + conf[None, :])) & seen[:, None] & seen[None, :]


def prune_local(graph: UserGraph, theta: np.ndarray, counts: np.ndarray, alpha: float) -> bool:
    """Delete every edge of `graph` that eq. 3 rejects; True if a component split.

    theta: (n_l, d) estimates of the server's users, counts: (n_l,) their sample counts.
    """
    return delete_far(graph, _far_pairs(theta, counts, alpha))


def delete_far(graph: UserGraph, far: np.ndarray) -> bool:
    """Delete the edges of `graph` that `far` (n_l, n_l) marks; True if a component split."""
    far = far & graph.adjacency
    split = False
    for user in np.flatnonzero(far.any(axis=1)):
        split |= graph.delete_edges(int(user), np.flatnonzero(far[user]))
    return split


def merge_global(theta: np.ndarray, counts: np.ndarray, alpha2: float) -> np.ndarray:
    """Global cluster label of each local cluster (eq. 4, transitive).

    theta: (C, d), counts: (C,).  Labels are 0..m-1 in order of first appearance.
    """
    conf = club_confidence(counts)
    gaps = np.linalg.norm(theta[:, None, :] - theta[None, :, :], axis=-1)
    close = gaps < alpha2 * (conf[:, None] + conf[None, :])
    _, labels = connected_components(csr_matrix(close), directed=False)
    return by_first_appearance(labels)


def partition_of(members: list[np.ndarray], labels: np.ndarray) -> Partition:
    """The global partition as a set of sets of local clusters (each a frozenset of users)."""
    groups: dict[int, set] = {}
    for users, k in zip(members, labels, strict=True):
        groups.setdefault(int(k), set()).add(frozenset(int(u) for u in users))
    return frozenset(frozenset(g) for g in groups.values())
