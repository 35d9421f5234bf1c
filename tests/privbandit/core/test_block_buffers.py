"""Blocks drawn into reused buffers: the same rounds bit for bit; waves of independent rounds."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.envs import BiasedSphereItems, LinearUsersEnv, PoolItems, SphereItems
from privbandit.envs.lockstep import StackedRounds
from privbandit.errors import ConfigError, NormBoundError
from privbandit.policies import LinUCB
from privbandit.runtime import run, seed_streams
from privbandit.runtime.lockstep import run_lockstep, waves
from privbandit.validation import check_items, validated_norm

POOL = np.random.default_rng(0).standard_normal((30, 4)) * 0.3
SOURCES = [lambda: SphereItems(4, 6), lambda: BiasedSphereItems(4, 6), lambda: PoolItems(POOL, 6)]


@pytest.mark.parametrize("make", SOURCES)
def test_fill_draws_the_values_of_draw_and_leaves_the_generator_alike(make):
    source = make()
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    drawn = source.draw(7, a)
    out = np.full((7, 6, 4), np.nan)
    norm = source.fill(out, b)
    assert np.array_equal(out, drawn) and norm == validated_norm(drawn) < math.inf
    assert a.random() == b.random()


def test_a_source_that_only_draws_fills_through_draw_with_its_norm_unknown():
    class Copied(SphereItems):
        def draw(self, rounds, rng):
            return super().draw(rounds, rng).copy()  # fresh, unrecorded

    out = np.empty((3, 6, 4))
    assert Copied(4, 6).fill(out, np.random.default_rng(1)) == math.inf
    assert np.array_equal(out, SphereItems(4, 6).draw(3, np.random.default_rng(1)))


@pytest.mark.parametrize("reward", ["bernoulli", "gaussian"])
@pytest.mark.parametrize("prefetch", [False, True])
def test_blocks_drawn_into_buffers_are_the_fresh_blocks(reward, prefetch):
    def world():
        env = LinearUsersEnv(np.full((3, 4), 0.2), SphereItems(4, 6), reward=reward, block=5)
        env.prefetch = prefetch
        env.reset(np.random.default_rng(9))
        return env

    fresh, reused = world(), world()
    sets = [{k: np.empty(shape, dtype) for k, (shape, dtype) in reused.block_layout().items()}
            for _ in range(2)]
    reused.draw_into(sets)
    for t in range(0, 25, 5):
        a, b = fresh.next_block(t), reused.next_block(t)
        assert a.keys() == b.keys()
        for key in a:
            assert np.array_equal(a[key], b[key]) and not b[key].flags.writeable
        assert b["items"].base is sets[t // 5 % 2]["items"]  # no allocation: the sets in turn


def test_prefetch_into_a_single_buffer_set_is_refused():
    env = LinearUsersEnv(np.full((1, 4), 0.2), SphereItems(4, 6), block=5)
    env.prefetch = True
    env.reset(np.random.default_rng(1))
    env.draw_into([{k: np.empty(s, d) for k, (s, d) in env.block_layout().items()}])
    with pytest.raises(ConfigError, match="at least two buffer sets"):
        env.next_block(0)


def test_stacked_items_skip_the_check_only_when_every_world_measured_its_norms():
    class Unmeasured(SphereItems):
        def fill(self, out, rng):
            super().fill(out, rng)
            out *= 3.0  # norms 3 > the policy's bound 1, and not measured
            return math.inf

    def stacked(sources):
        rounds = StackedRounds([LinearUsersEnv(np.full((1, 4), 0.2), s, block=4)
                                for s in sources])
        rounds.reset([np.random.default_rng(i) for i in range(len(sources))])
        return rounds

    def check(items):
        check_items(items, 4, 1.0)

    rounds = stacked([SphereItems(4, 6), SphereItems(4, 6)])
    block = rounds.block(0, check)
    assert validated_norm(block["items"]) == 1.0
    with pytest.raises(NormBoundError, match="item_bound"):
        stacked([SphereItems(4, 6), Unmeasured(4, 6)]).block(0, check)
    rounds.release()
    assert all(not env._ring for env in rounds.envs)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4), st.integers(1, 30), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_waves_play_each_round_once_after_every_earlier_round_of_its_user(reps, width, users,
                                                                          seed):
    arrivals = np.random.default_rng(seed).integers(users, size=(reps, width))
    schedule = waves(arrivals)
    wave_of = np.full((reps, width), -1)
    for k, (r, i) in enumerate(schedule):
        pairs = list(zip(r.tolist(), arrivals[r, i].tolist(), strict=True))
        assert len(set(pairs)) == len(pairs)  # one round per (replicate, user) a wave
        assert (wave_of[r, i] == -1).all()
        wave_of[r, i] = k
    assert (wave_of >= 0).all()
    for r in range(reps):
        for u in range(users):
            mine = wave_of[r, arrivals[r] == u]
            assert np.array_equal(mine, np.arange(mine.size))  # in order, no gap


def test_lockstep_in_waves_stops_where_the_observers_ask():
    seeds = [np.random.SeedSequence(5, spawn_key=(i,)) for i in range(3)]

    def world(seed):
        theta = seed_streams(seed)["world"].normal(size=(4, 5)) / 4
        return LinearUsersEnv(theta, SphereItems(5, 8), block=64)

    separate = [run(LinUCB(5, 4), world(s), 300, s, cluster_every=7) for s in seeds]
    envs = [world(s) for s in seeds]
    together = run_lockstep([LinUCB(5, 4) for _ in envs], envs, 300, seeds, cluster_every=7)
    for a, b in zip(separate, together, strict=True):
        np.testing.assert_allclose(b.regret, a.regret, rtol=1e-12, atol=0)
        np.testing.assert_allclose(b.reward, a.reward, rtol=1e-12, atol=0)


def test_a_pickled_world_draws_its_own_arrays_and_the_same_rounds():
    import pickle

    env = LinearUsersEnv(np.full((2, 4), 0.2), SphereItems(4, 6), block=5)
    env.reset(np.random.default_rng(4))
    sets = [{k: np.empty(s, d) for k, (s, d) in env.block_layout().items()}]
    env.draw_into(sets)
    env.next_block(0)
    copy = pickle.loads(pickle.dumps(env))
    assert not copy._ring
    a, b = env.next_block(5), copy.next_block(5)
    assert b["items"].base is not sets[0]["items"]
    assert all(np.array_equal(a[k], b[k]) for k in a)
