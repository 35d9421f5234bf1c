"""From ratings to a bandit world: active users and items, SVD features, k-means clusters.

Follows the seeds' real-data preprocessing (seed 000 / 001, Experiments):
keep the most rated items and the most active users, factor the user x item
matrix by a truncated SVD into d-dimensional user and item vectors, and
cluster users with k-means (SciPy's `kmeans2` with k-means++ seeding).
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import DataError, config_error
from ..validation import check_dim
from .ratings import Ratings


def top_matrix(
    ratings: Ratings, n_users: int, n_items: int, *, binary: bool = True,
    clamp: tuple[bool, bool] = (False, False),
    names: tuple[str, str] = ("n_users", "n_items"),
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(matrix (n_users, n_items), user codes, item codes) of the most active part.

    Items: the `n_items` with the most ratings; users: the `n_users` with the
    most ratings among those items (ties: lower code first).  Entries are 1
    for "rated" when `binary` (implicit feedback, as the FCLUB public code
    does), else the rating value; unrated entries are 0.  A request larger
    than the file is a DataError naming the parameter as `names` gives it,
    or, where `clamp` (users, items) is true, is reduced to what the file
    has (the shape says so).
    """
    user_key, item_key = names
    n_users = check_dim(user_key, n_users)
    n_items = check_dim(item_key, n_items)
    if n_items > ratings.n_items:
        if not clamp[1]:
            raise DataError(f"{item_key}={n_items} exceeds the {ratings.n_items} items in "
                            f"{ratings.source}; set {item_key} <= {ratings.n_items}")
        n_items = ratings.n_items
    item_counts = np.bincount(ratings.items, minlength=ratings.n_items)
    items = np.sort(np.argsort(-item_counts, kind="stable")[:n_items])
    keep = np.isin(ratings.items, items)
    user_counts = np.bincount(ratings.users[keep], minlength=ratings.n_users)
    active = int(np.count_nonzero(user_counts))
    if n_users > active:
        if not clamp[0]:
            raise DataError(
                f"{user_key}={n_users} exceeds the {active} users who rated the top {n_items} "
                f"items of {ratings.source}; set {user_key} <= {active}"
            )
        n_users = active
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
    """(centers (k, d), labels (n,)): the best of `n_init` k-means runs by inertia.

    Each run is `scipy.cluster.vq.kmeans2` with k-means++ seeding, seeded
    from `rng` (so the same generator state gives the same clusters).
    """
    from scipy.cluster.vq import kmeans2

    k = check_dim("k", k)
    if k > points.shape[0]:
        raise config_error("k", k, f"at most the number of points ({points.shape[0]})")
    best: tuple[float, np.ndarray, np.ndarray] | None = None
    for _ in range(check_dim("n_init", n_init)):
        seed = np.random.default_rng(rng.integers(2**63))
        with warnings.catch_warnings():  # an empty cluster keeps its center; not worth a warning
            warnings.simplefilter("ignore", UserWarning)
            centers, labels = kmeans2(points, k, iter=check_dim("max_iter", max_iter),
                                      minit="++", missing="warn", seed=seed)
        inertia = float(((points - centers[labels]) ** 2).sum())
        if best is None or inertia < best[0]:
            best = (inertia, centers, labels)
    assert best is not None
    return best[1], best[2]
