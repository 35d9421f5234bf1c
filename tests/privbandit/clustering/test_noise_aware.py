"""Noise-aware clustering: right partitions when the data speak, apart when noise dominates."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.clustering import NoiseAwareClustering, clique_labels
from privbandit.errors import ConfigError
from privbandit.private import NoisyRidge

D = 5


def world(rng, n_per, centers, n_obs, variance):
    units = []
    for c in centers:
        for _ in range(n_per):
            x = rng.normal(size=(n_obs, D)) / math.sqrt(D)
            y = x @ c + rng.normal(0.0, 0.5, n_obs)
            z = np.c_[x, y]
            noise = rng.normal(0.0, math.sqrt(variance), (D + 1, D + 1))
            units.append(z.T @ z + (noise + noise.T) / math.sqrt(2.0))
    n = len(units)
    return np.array(units), np.full(n, variance), np.full(n, n_obs)


def clustering(**kw):
    return NoiseAwareClustering(NoisyRidge(D, 1.0, 0.5, 1.0, 0.05, 1e-4), **kw)


def centers(rng, m):
    c = rng.normal(size=(m, D))
    return c / np.linalg.norm(c, axis=1, keepdims=True)


def test_separated_clusters_are_found():
    rng = np.random.default_rng(0)
    stats, var, counts = world(rng, 4, centers(rng, 3), 4000, 1.0)
    labels = clustering().labels(stats, var, counts)
    assert labels.tolist() == [0] * 4 + [4] * 4 + [8] * 4


def test_noise_keeps_units_apart():
    rng = np.random.default_rng(1)
    stats, var, counts = world(rng, 4, centers(rng, 2), 200, 5e4)
    assert clustering().labels(stats, var, counts).tolist() == list(range(8))


def test_power_requirement_decides_when_units_may_join():
    rng = np.random.default_rng(2)
    stats, var, counts = world(rng, 3, centers(rng, 1), 300, 1.0)
    coarse, fine = clustering(resolution=0.5), clustering(resolution=0.02)
    assert len(set(coarse.labels(stats, var, counts))) == 1
    assert len(set(fine.labels(stats, var, counts))) == 3


def test_units_without_data_stay_alone():
    rng = np.random.default_rng(3)
    stats, var, counts = world(rng, 3, centers(rng, 1), 4000, 1.0)
    counts[1] = 0
    labels = clustering().labels(stats, var, counts)
    assert labels[1] == 1 and labels[0] == labels[2] == 0


def test_chains_do_not_merge_clusters():
    links = np.eye(3, dtype=bool)
    links[0, 1] = links[1, 0] = links[1, 2] = links[2, 1] = True
    assert len(set(clique_labels(links))) == 2


@given(st.integers(1, 12), st.data())
def test_every_group_is_a_clique_of_links(n, data):
    upper = data.draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))
    links = np.array(upper).reshape(n, n)
    links = links | links.T | np.eye(n, dtype=bool)
    labels = clique_labels(links)
    for label in set(labels):
        group = np.flatnonzero(labels == label)
        assert links[np.ix_(group, group)].all() and label == group.min()


@pytest.mark.parametrize("kw, match", [
    ({"resolution": 0.0}, "resolution must be"), ({"level": 1.0}, "level must be"),
    ({"miss": 0.0}, "miss must be"),
])
def test_bad_settings_are_refused(kw, match):
    with pytest.raises((ConfigError, ValueError), match=match):
        clustering(**kw)


def test_differs_proves_separate_clusters_apart_and_never_noise_alone():
    false_splits = 0
    for seed in range(100):
        rng = np.random.default_rng(seed)
        stats, var, counts = world(rng, 2, centers(rng, 2), 4000, 1.0)
        far = clustering().differs(stats, var, counts)
        assert far[:2, 2:].all()  # different clusters: proven different
        false_splits += int(far[0, 1]) + int(far[2, 3])
    assert false_splits <= 6  # the test's level is 0.99: about 2 of 200 same-cluster pairs
    noisy = world(rng, 2, centers(rng, 2), 200, 5e4)
    assert not clustering().differs(*noisy).any()  # noise hides the gap: no proof, no split


@given(st.integers(0, 2**32 - 1), st.floats(1e-2, 1e4), st.integers(20, 2000))
def test_a_pair_is_never_both_linked_and_proven_different(seed, variance, n_obs):
    rng = np.random.default_rng(seed)
    stats, var, counts = world(rng, 2, centers(rng, 2), n_obs, variance)
    counts[rng.integers(4)] = 0  # a unit without data is neither
    tests = clustering()
    links, far = tests.links(stats, var, counts), tests.differs(stats, var, counts)
    assert not (links & far).any()
    assert not far.diagonal().any() and (far == far.T).all()
    assert not far[counts == 0].any()


def test_powered_units_can_tell_themselves_from_the_rest_of_their_group():
    """`powered`: a unit with data against the pooled rest of its group has the power to see
    the resolution when data dominate noise, not when noise does; a unit alone, or beside
    units without data, never has it."""
    rng = np.random.default_rng(4)
    stats, var, counts = world(rng, 3, centers(rng, 1), 4000, 1.0)
    together, apart = [np.arange(3)], [np.array([0, 1]), np.array([2])]
    assert clustering(resolution=0.5).powered(stats, var, counts, together).all()
    assert clustering(resolution=0.5).powered(stats, var, counts, apart).tolist() == [
        True, True, False]
    assert not clustering(resolution=0.01).powered(stats, var, counts, together).any()
    noisy = clustering(resolution=0.5).powered(stats, np.full(3, 1e9), counts, together)
    assert not noisy.any()
    counts[1] = 0
    assert clustering(resolution=0.5).powered(stats, var, counts, together).tolist() == [
        False, False, False]
