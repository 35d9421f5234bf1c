"""Real-data loaders on small files generated here, in every supported format."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from privbandit.data import kmeans, read_ratings, svd_features, top_matrix
from privbandit.envs import CascadeEnv, LinearUsersEnv, ratings_environment
from privbandit.errors import ConfigError, DataError
from privbandit.policies import LinUCB
from privbandit.runtime import run


def triples(seed: int = 0, users: int = 30, items: int = 40, density: float = 0.4):
    rng = np.random.default_rng(seed)
    mask = rng.random((users, items)) < density
    u, i = np.nonzero(mask)
    stars = rng.integers(1, 6, size=u.size).astype(float)
    return u + 1, i + 1, stars


def write(tmp_path, fmt, u, i, r):
    if fmt == "movielens-100k":
        path = tmp_path / "u.data"
        path.write_text("".join(f"{a}\t{b}\t{c:g}\t881250949\n" for a, b, c in zip(u, i, r,
                                                                                   strict=True)))
    elif fmt == "movielens-1m":
        path = tmp_path / "ratings.dat"
        path.write_text("".join(f"{a}::{b}::{c:g}::978300760\n" for a, b, c in zip(u, i, r,
                                                                                  strict=True)))
    elif fmt == "movielens-csv":
        path = tmp_path / "ratings.csv"
        rows = "".join(f"{a},{b},{c},1112486027\n" for a, b, c in zip(u, i, r, strict=True))
        path.write_text("userId,movieId,rating,timestamp\n" + rows)
    else:
        path = tmp_path / "review.json"
        path.write_text("".join(
            json.dumps({"review_id": f"r{k}", "user_id": f"U{a:03d}", "business_id": f"B{b:03d}",
                        "stars": c, "text": "ok"}) + "\n"
            for k, (a, b, c) in enumerate(zip(u, i, r, strict=True))
        ))
    return path


FORMATS = ["movielens-100k", "movielens-1m", "movielens-csv", "yelp"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_reader_round_trips_a_generated_file(tmp_path, fmt):
    u, i, r = triples()
    got = read_ratings(write(tmp_path, fmt, u, i, r))
    ids_u = got.user_ids[got.users]
    ids_i = got.item_ids[got.items]
    if fmt == "yelp":
        expect_u = np.array([f"U{a:03d}" for a in u])
        expect_i = np.array([f"B{b:03d}" for b in i])
    else:
        expect_u, expect_i = u.astype(str), i.astype(str)
    assert np.array_equal(ids_u, expect_u) and np.array_equal(ids_i, expect_i)
    assert np.array_equal(got.values, r)
    assert got.n_users == np.unique(u).size and len(got) == u.size
    if fmt != "yelp":  # numeric ids are coded in numeric order
        assert np.array_equal(got.user_ids.astype(int), np.unique(u))


@pytest.mark.parametrize("fmt", FORMATS)
def test_environment_from_each_format(tmp_path, fmt):
    path = write(tmp_path, fmt, *triples(seed=1))
    env = ratings_environment(path, np.random.default_rng(0), top_users=25, top_items=30, dim=4,
                              n_users=12, n_clusters=3, items_per_round=8)
    assert isinstance(env, LinearUsersEnv)
    assert (env.n_users, env.dim, env.n_items) == (12, 4, 8)
    assert np.unique(env.true_clusters()).size == 3
    result = run(LinUCB(4, 12), env, 200, 0)
    assert result.horizon == 200 and np.all(result.regret >= -1e-12)
    again = ratings_environment(path, np.random.default_rng(0), top_users=25, top_items=30, dim=4,
                                n_users=12, n_clusters=3, items_per_round=8)
    assert np.array_equal(again._theta, env._theta)  # same rng, same world


def test_cascade_environment_from_ratings(tmp_path):
    path = write(tmp_path, "yelp", *triples(seed=2))
    env = ratings_environment(path, np.random.default_rng(3), top_users=20, top_items=30, dim=5,
                              n_users=10, n_clusters=2, items_per_round=12, list_len=3)
    assert isinstance(env, CascadeEnv) and env.list_len == 3


def test_top_matrix_keeps_the_most_active():
    from privbandit.data.ratings import Ratings

    # item 2 rated by everyone, item 0 by two users, item 1 by one; user 3 rates the most
    users = np.array([0, 1, 2, 3, 3, 3, 0])
    items = np.array([2, 2, 2, 2, 0, 1, 0])
    ratings = Ratings(users, items, np.arange(7.0) + 1, np.arange(4).astype(str),
                      np.arange(3).astype(str))
    matrix, kept_users, kept_items = top_matrix(ratings, 2, 2, binary=False)
    assert kept_items.tolist() == [0, 2] and kept_users.tolist() == [0, 3]
    assert matrix.tolist() == [[7.0, 1.0], [5.0, 4.0]]


def test_svd_features_reconstruct_a_low_rank_matrix():
    rng = np.random.default_rng(0)
    m = rng.random((20, 3)) @ rng.random((3, 15))
    users, items = svd_features(m, 3)
    scale = (m / (users @ items.T))
    assert np.allclose(scale, scale.flat[0])  # exact up to the normalising constants
    assert np.linalg.norm(items, axis=1).max() == pytest.approx(1.0)
    assert np.linalg.norm(users, axis=1).max() == pytest.approx(1.0)


def test_kmeans_agrees_with_scikit_learn_on_separated_blobs():
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    rng = np.random.default_rng(4)
    centers = np.array([[0.0, 0.0], [5.0, 5.0], [0.0, 5.0]])
    points = np.concatenate([c + 0.3 * rng.standard_normal((30, 2)) for c in centers])
    _, labels = kmeans(points, 3, np.random.default_rng(0))
    ref = sklearn_cluster.KMeans(3, n_init=4, random_state=0).fit(points).labels_
    pairs = set(zip(labels.tolist(), ref.tolist(), strict=True))
    assert len(pairs) == 3  # the same partition up to label names


@pytest.mark.parametrize(
    "name, text, match",
    [
        ("u.data", "1\t2\n", "line 1: expected user, item, rating"),
        ("u.data", "1\t2\t5\t9\n1\t3\tfive\t9\n", "line 2: rating must be a number; got 'five'"),
        ("ratings.dat", "1::2::nan::0\n", "line 1: rating must be finite"),
        ("ratings.csv", "user,movie,rating\n1,2,3\n", "line 1: expected a header"),
        ("ratings.csv", "userId,movieId,rating,timestamp\n1,2\n",
         "line 2: expected 4 fields like the first line"),
        ("review.json", '{"user_id": "a", "stars": 4}\n', "line 1: expected a JSON object"),
        ("review.json", "not json\n", "line 1: expected a JSON object"),
        ("u.data", "\n\n", "no ratings found"),
    ],
)
def test_malformed_files_are_named_errors(tmp_path, name, text, match):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(DataError, match=match):
        read_ratings(path)


def test_missing_file_unknown_format_and_requests_too_large(tmp_path):
    with pytest.raises(DataError, match="ratings file not found: .*nothing is downloaded"):
        read_ratings(tmp_path / "u.data")
    with pytest.raises(ConfigError, match="format must be one of"):
        read_ratings(tmp_path / "ratings.parquet")
    path = write(tmp_path, "movielens-100k", *triples(users=10, items=12))
    with pytest.raises(DataError, match="top_items=50 exceeds the 12 items in .*u.data; set "):
        ratings_environment(path, np.random.default_rng(0), top_items=50)
    with pytest.raises(DataError, match="top_users=30 exceeds the 9 users who rated the top 12"):
        ratings_environment(path, np.random.default_rng(0), top_users=30, top_items=12)
    with pytest.raises(DataError, match="n_users=40 exceeds the top_users=8 kept; set n_users"):
        ratings_environment(path, np.random.default_rng(0), top_users=8, top_items=12, dim=3)
    with pytest.raises(ConfigError, match="n_items must be at most the pool's item count 12"):
        ratings_environment(path, np.random.default_rng(0), top_users=8, top_items=12, dim=3,
                            n_users=5, n_clusters=2, items_per_round=20)


def test_default_sizes_fit_a_small_file_with_a_warning(tmp_path):
    path = write(tmp_path, "movielens-100k", *triples(users=10, items=12))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = ratings_environment(path, np.random.default_rng(0), dim=3, n_users=5,
                                  n_clusters=2, items_per_round=4)
    said = sorted(str(w.message).split(": ")[-1] for w in caught)
    assert env.n_users == 5 and said == ["using top_items=12", "using top_users=9"]
