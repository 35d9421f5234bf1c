"""The audit layer's mask attacks, run on this protocol's own traffic."""
from __future__ import annotations

import numpy as np
import pytest

from privbandit.audits.attacks.masks import skewed_contexts
from privbandit.envs import LinearUsersEnv, PoolItems
from privbandit.envs.vertical import VerticalSplit
from privbandit.errors import ConfigError
from privbandit.policies import LinUCB
from privbandit.vertical.leakage import (
    gram_error,
    known_plaintext_curve,
    pca_curve,
    population_sample,
)

from .runs import collect_traffic


@pytest.fixture
def traffic(split_world):
    # party 1 holds d_1 = 3 of the d = 10 features; 25 rounds of K = 8 items
    return collect_traffic(LinUCB(10, beta=0.5), split_world, 25, 6, party=1)


def test_the_recorded_traffic_is_the_masked_plaintext(traffic):
    assert traffic.plain.shape == (200, 3) and traffic.masked.shape == (200, 10)
    np.testing.assert_allclose(traffic.masked, traffic.plain @ traffic.block.T, atol=1e-15)


def test_d_j_known_pairs_unmask_the_whole_traffic(traffic):
    short, exact, more = known_plaintext_curve(traffic, [2, 3, 10])
    assert short.block_error > 0.1 and short.context_error > 0.1
    for found in (exact, more):
        assert found.block_error < 1e-9 and found.context_error < 1e-9


def test_lstsq_needs_the_same_number_of_pairs(traffic):
    short, exact = known_plaintext_curve(traffic, [2, 3], method="lstsq")
    assert short.context_error > 0.1 and exact.context_error < 1e-9


def test_norms_and_inner_products_leak_exactly_with_nothing_known(traffic):
    assert gram_error(traffic) < 1e-12


def test_pca_finds_the_span_at_once_but_not_the_block_of_isotropic_features(
    split_world, traffic
):
    sample = population_sample(split_world, 1, 300, np.random.default_rng(1))
    first, last = pca_curve(traffic, [1, 25], sample)
    # K = 8 >= d_1 = 3 masked rows already span Q^1's columns
    assert first.subspace_error < 1e-9 and last.subspace_error < 1e-9
    # sphere-uniform features are symmetric: the rotation inside the span stays hidden
    assert last.block_error > 0.3


def test_pca_recovers_the_block_of_skewed_features_as_rounds_accumulate():
    rng = np.random.default_rng(0)
    pool = skewed_contexts(4000, 12, rng)
    pool /= np.linalg.norm(pool, axis=1, keepdims=True)
    theta = rng.standard_normal((1, 12))
    env = VerticalSplit(
        LinearUsersEnv(theta / np.linalg.norm(theta), PoolItems(pool, 10), reward="gaussian",
                       noise_sd=0.2),
        (6, 3, 3),
    )
    traffic = collect_traffic(LinUCB(12, beta=0.5), env, 200, 3, party=1, seal_traffic=False)
    sample = population_sample(env, 1, 400, np.random.default_rng(9))
    few, many = pca_curve(traffic, [5, 200], sample)
    assert many.observed == 200 and many.block_error < 0.2 < few.block_error


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda env: collect_traffic(LinUCB(10), env, 5, 1, party=0),
         r"party must be a passive party index in \[1, 3\); got 0"),
        (lambda env: collect_traffic(LinUCB(10), "env", 5, 1), "env must be a VerticalSplit"),
    ],
)
def test_bad_traffic_requests_are_refused(split_world, call, match):
    with pytest.raises(ConfigError, match=match):
        call(split_world)


def test_attack_counts_beyond_the_traffic_are_refused(traffic):
    with pytest.raises(ConfigError, match="pairs must be counts below the 200 rows"):
        known_plaintext_curve(traffic, [200])
    with pytest.raises(ConfigError, match="rounds must be counts up to the 25 rounds played"):
        pca_curve(traffic, [26], np.ones((5, 3)))
