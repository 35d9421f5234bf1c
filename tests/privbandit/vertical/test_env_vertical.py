"""The vertical split of an environment and seed 003's synthetic world."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.envs.vertical import (
    ActivePartyView,
    FeatureSplit,
    VerticalSplit,
    seed003_environment,
)
from privbandit.errors import ConfigError


@given(st.lists(st.integers(1, 6), min_size=1, max_size=6))
def test_split_blocks_concatenate_back_to_the_items(widths):
    split = FeatureSplit(widths)
    items = np.random.default_rng(0).standard_normal((3, 5, split.dim))
    parts = split.split(items)
    assert [p.shape[-1] for p in parts] == list(widths)
    np.testing.assert_array_equal(np.concatenate(parts, axis=-1), items)


@given(st.integers(1, 40), st.integers(1, 8))
def test_equal_split_widths_differ_by_at_most_one(dim, parties):
    if parties > dim:
        with pytest.raises(ConfigError, match="parties"):
            FeatureSplit.equal(dim, parties)
        return
    widths = FeatureSplit.equal(dim, parties).widths
    assert sum(widths) == dim and max(widths) - min(widths) <= 1


@pytest.mark.parametrize("share, expected", [(0.2, (20, 20, 20, 20, 20)), (0.8, (80, 5, 5, 5, 5))])
def test_active_share_gives_the_papers_partial_ratios(share, expected):
    split = FeatureSplit.with_active_share(100, 5, share)
    assert split.widths == expected
    assert split.active_share == share


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: FeatureSplit(()), r"widths must be a non-empty sequence of integers >= 1; "
                                   r"got \(\)"),
        (lambda: FeatureSplit((3, 0)), r"widths must be .*got \(3, 0\)"),
        (lambda: FeatureSplit((2.5, 1)), r"widths must be .*got \(2\.5, 1\)"),
        (lambda: FeatureSplit(5), r"widths must be a sequence of integers >= 1; got 5"),
        (lambda: FeatureSplit.with_active_share(10, 5, 1.0), r"share must be .*4 passive"),
        (lambda: FeatureSplit.with_active_share(10, 2, 0.01), r"share must be .*got 0\.01"),
        (lambda: FeatureSplit((2, 2)).columns(2), r"j must be a party index in \[0, 2\); got 2"),
    ],
)
def test_bad_splits_are_refused_with_their_values(call, match):
    with pytest.raises(ConfigError, match=match):
        call()


def test_widths_must_sum_to_the_environments_dimension(world):
    with pytest.raises(ConfigError, match=r"summing to the environment's dimension d=10 "
                                          r"\(they sum to 9\); got \(4, 3, 2\)"):
        VerticalSplit(world, (4, 3, 2))
    with pytest.raises(ConfigError, match="widths"):
        ActivePartyView(world, (4, 3, 4))


def test_each_party_sees_only_its_columns_read_only(world):
    split = VerticalSplit(world, (4, 3, 3))
    split.reset(np.random.default_rng(5))
    world_copy = seed003_environment(10, 8, rng=np.random.default_rng(2024))
    world_copy.reset(np.random.default_rng(5))
    for t in range(3):
        rnd, full = split.observe(t), world_copy.observe(t)
        np.testing.assert_array_equal(np.concatenate(rnd.items, axis=1), full.items)
        assert all(not p.flags.writeable for p in rnd.items)
        assert split.act(t, 2) == world_copy.act(t, 2)


def test_active_view_has_the_same_world_on_fewer_columns(world):
    view = ActivePartyView(world, (4, 3, 3))
    assert view.dim == 4 and view.describe()["active_share"] == 0.4
    view.reset(np.random.default_rng(5))
    other = seed003_environment(10, 8, rng=np.random.default_rng(2024))
    other.reset(np.random.default_rng(5))
    for t in range(3):
        np.testing.assert_array_equal(view.observe(t).items, other.observe(t).items[:, :4])
        assert view.act(t, 1) == other.act(t, 1)


def test_seed003_world_matches_the_papers_synthetic_setting():
    env = seed003_environment(30, 6, rng=np.random.default_rng(1))
    theta = env._theta[0]
    assert np.isclose(np.linalg.norm(theta), 1.0)
    env.reset(np.random.default_rng(2))
    items, rewards, means, regrets = [], [], [], []
    for t in range(3000):
        rnd = env.observe(t)
        out = env.act(t, 0)
        items.append(rnd.items)
        rewards.append(out.reward)
        means.append(out.expected)
        regrets.append(out.regret)
    x = np.stack(items)
    np.testing.assert_allclose(np.linalg.norm(x, axis=-1), 1.0)
    np.testing.assert_allclose(np.array(means), x[:, 0] @ theta)
    noise = np.array(rewards) - np.array(means)
    # noise N(0, 0.05): variance within 10% at n = 3000 (sd of the estimate is 2.6%)
    assert abs(noise.var() / 0.05 - 1) < 0.1
    assert min(regrets) >= 0.0
    np.testing.assert_allclose(np.array(regrets), (x @ theta).max(axis=1) - np.array(means))


def test_seed003_world_refuses_a_missing_generator():
    with pytest.raises(ConfigError, match="rng must be a numpy.random.Generator; got 3"):
        seed003_environment(10, 4, rng=3)
