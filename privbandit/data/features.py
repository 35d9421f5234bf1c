"""From ratings to a bandit world: active users and items, SVD features, k-means clusters.

Follows the seeds' real-data preprocessing (seed 000 / 001, Experiments):
keep the most rated items and the most active users, factor the user x item
matrix by a truncated SVD into d-dimensional user and item vectors, and
cluster users with k-means (Lloyd's algorithm with k-means++ seeding, written
with NumPy so scikit-learn is not a dependency).
"""
from __future__ import annotations

import numpy as np

from ..errors import DataError, config_error
from ..validation import check_dim
from .ratings import Ratings


def top_matrix(
    ratings: Ratings, n_users: int, n_items: int, *, binary: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(matrix (n_users, n_items), user codes, item codes) of the most active part.

    Items: the `n_items` with the most ratings; users: the `n_users` with the
    most ratings among those items (ties: lower code first).  Entries are 1
    for "rated" when `binary` (implicit feedback, as the FCLUB public code
    does), else the rating value; unrated entries are 0.
    """
    n_users = check_dim("n_users", n_users)
    n_items = check_dim("n_items", n_items)
    if n_items > ratings.n_items:
        raise DataError(f"n_items={n_items} exceeds the {ratings.n_items} items in the file")
    item_counts = np.bincount(ratings.items, minlength=ratings.n_items)
    items = np.sort(np.argsort(-item_counts, kind="stable")[:n_items])
    keep = np.isin(ratings.items, items)
    user_counts = np.bincount(ratings.users[keep], minlength=ratings.n_users)
    if n_users > np.count_nonzero(user_counts):
        raise DataError(
            f"n_users={n_users} exceeds the {np.count_nonzero(user_counts)} users who rated "
            f"the top {n_items} items"
        )
    users = np.sort(np.argsort(-user_counts, kind="stable")[:n_users])
    row = np.full(ratings.n_users, -1)
    row[users] = np.arange(n_users)
    col = np.full(ratings.n_items, -1)
    col[items] = np.arange(n_items)
    sel = keep & (row[ratings.users] >= 0)
    matrix = np.zeros((n_users, n_items))
    values = np.ones(np.count_nonzero(sel)) if binary else ratings.values[sel]
    matrix[row[ratings.users[sel]], col[ratings.items[sel]]] = values
    return matrix, users, items


def svd_features(matrix: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(user vectors (U, dim), item vectors (I, dim)) from a rank-`dim` SVD.

    M ~ U S V^T; users get U sqrt(S), items V sqrt(S), each then scaled by one
    constant so the largest norm is 1 (so ||x|| <= 1 and ||theta|| <= 1).
    Signs are fixed so each component's largest item loading is positive.
    """
    dim = check_dim("dim", dim)
    if dim > min(matrix.shape):
        raise config_error("dim", dim, f"at most min(users, items) = {min(matrix.shape)}")
    u, s, vt = np.linalg.svd(matrix, full_matrices=False)
    u, s, v = u[:, :dim], s[:dim], vt[:dim].T
    flip = np.sign(v[np.argmax(np.abs(v), axis=0), np.arange(dim)])
    flip[flip == 0] = 1.0
    root = np.sqrt(s) * flip
    users, items = u * root, v * root
    return _unit_max(users), _unit_max(items)


def _unit_max(x: np.ndarray) -> np.ndarray:
    peak = np.linalg.norm(x, axis=1).max()
    return x / peak if peak > 0 else x


def kmeans(
    points: np.ndarray, k: int, rng: np.random.Generator, *, n_init: int = 4, max_iter: int = 100
) -> tuple[np.ndarray, np.ndarray]:
    """(centers (k, d), labels (n,)): the best of `n_init` Lloyd runs by inertia."""
    k = check_dim("k", k)
    if k > points.shape[0]:
        raise config_error("k", k, f"at most the number of points ({points.shape[0]})")
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for _ in range(check_dim("n_init", n_init)):
        centers = _plus_plus(points, k, rng)
        for _ in range(check_dim("max_iter", max_iter)):
            labels = _nearest(points, centers)
            moved = _centroids(points, labels, centers)
            if np.array_equal(moved, centers):
                break
            centers = moved
        labels = _nearest(points, centers)
        inertia = float(((points - centers[labels]) ** 2).sum())
        if best is None or inertia < best[0]:
            best = (inertia, centers, labels)
    assert best is not None
    return best[1], best[2]


def _nearest(points: np.ndarray, centers: np.ndarray) -> np.ndarray:
    d2 = ((points[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    return np.argmin(d2, axis=1)


def _centroids(points: np.ndarray, labels: np.ndarray, old: np.ndarray) -> np.ndarray:
    k = old.shape[0]
    counts = np.bincount(labels, minlength=k)
    sums = np.zeros_like(old)
    np.add.at(sums, labels, points)
    out = old.copy()  # an empty cluster keeps its center
    nz = counts > 0
    out[nz] = sums[nz] / counts[nz, None]
    return out


def _plus_plus(points: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding (Arthur & Vassilvitskii 2007)."""
    n = points.shape[0]
    centers = [points[rng.integers(n)]]
    d2 = ((points - centers[0]) ** 2).sum(axis=1)
    for _ in range(1, k):
        total = d2.sum()
        idx = rng.choice(n, p=d2 / total) if total > 0 else rng.integers(n)
        centers.append(points[idx])
        d2 = np.minimum(d2, ((points - points[idx]) ** 2).sum(axis=1))
    return np.array(centers)
