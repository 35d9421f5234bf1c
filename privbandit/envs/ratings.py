"""Real-data worlds from rating files the user already has (nothing is downloaded).

`ratings_environment(path, rng, ...)` reads a MovieLens or Yelp file
(`privbandit.data`), keeps the most rated items and most active users, builds
d-dimensional SVD features, samples the simulated users, clusters them with
k-means, and gives each user its cluster's center as preference vector (seed
001, Experiments).  Rounds then show K distinct items drawn from the kept items.
"""
from __future__ import annotations

import os
import warnings

import numpy as np

from ..data import infer_format, kmeans, read_ratings, svd_features, top_matrix
from ..errors import DataError
from ..validation import check_dim
from .cascade import CascadeEnv
from .items import PoolItems
from .linear import LinearUsersEnv

DEFAULT_TOP = 1000  # top_users and top_items by default (seed 001), fewer if the file has fewer


def ratings_environment(
    path: str | os.PathLike,
    rng: np.random.Generator,
    *,
    format: str | None = None,
    top_users: int | None = None,
    top_items: int | None = None,
    dim: int = 20,
    n_users: int = 40,
    n_clusters: int = 10,
    items_per_round: int = 200,
    list_len: int | None = None,
    binary: bool = True,
    reward: str = "bernoulli",
) -> LinearUsersEnv | CascadeEnv:
    """A clustered world built from a rating file (defaults: seed 001's Yelp setting).

    top_users x top_items: the matrix factored by SVD into `dim` dimensions
    (default: 1,000 each, reduced with a warning to what the file has; a
    value given and larger than the file is a DataError naming it);
    n_users: users sampled (without replacement, with `rng`) from the top
    users; n_clusters: k-means clusters of their vectors, each user's theta
    being its cluster center; items_per_round: K items per round from the
    top items; list_len: None for one item per round (`LinearUsersEnv`,
    Bernoulli or Gaussian rewards), or the cascade list length (`CascadeEnv`).
    """
    ratings = read_ratings(path, format)
    clamp = (top_users is None, top_items is None)
    matrix, _, _ = top_matrix(
        ratings, DEFAULT_TOP if top_users is None else top_users,
        DEFAULT_TOP if top_items is None else top_items, binary=binary, clamp=clamp,
        names=("top_users", "top_items"))
    for key, kept, default in zip(("top_users", "top_items"), matrix.shape, clamp, strict=True):
        if default and kept < DEFAULT_TOP:
            warnings.warn(f"{ratings.source} has {kept} < {DEFAULT_TOP} active "
                          f"{key[4:]}: using {key}={kept}", stacklevel=2)
    users, items = svd_features(matrix, dim)
    n_users = check_dim("n_users", n_users)
    if n_users > users.shape[0]:
        raise DataError(f"n_users={n_users} exceeds the top_users={users.shape[0]} kept; "
                        f"set n_users <= {users.shape[0]} (the key 'users' in a study)")
    chosen = np.sort(rng.choice(users.shape[0], size=n_users, replace=False))
    centers, labels = kmeans(users[chosen], n_clusters, rng)
    theta = centers[labels]
    source = PoolItems(items, items_per_round, bound=1.0)
    name = f"ratings:{infer_format(path) if format is None else format}"
    if list_len is None:
        return LinearUsersEnv(theta, source, reward=reward, clusters=labels, name=name)
    return CascadeEnv(theta, source, list_len, clusters=labels, name=name)
