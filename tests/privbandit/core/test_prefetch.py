"""Block prefetching (`env.prefetch`): the same rounds, bit for bit, drawn one block ahead."""
from __future__ import annotations

import gc
import pickle
import threading
from typing import Any

import numpy as np
import pytest

from privbandit.envs import CascadeEnv, LinearUsersEnv, SphereItems, clustered_preferences
from privbandit.envs.base import Environment, Outcome
from privbandit.envs.blocks import BlockRounds
from privbandit.envs.vertical import ActivePartyView
from privbandit.errors import ConfigError
from privbandit.policies import LinUCB
from privbandit.runtime import run


def linear_env(block: int = 16, horizon: int | None = None) -> LinearUsersEnv:
    theta, labels = clustered_preferences(6, 2, 5, np.random.default_rng(1), gap=0.5)
    return LinearUsersEnv(theta, SphereItems(5, 8), clusters=labels, block=block, horizon=horizon)


def rounds_of(env: Environment, count: int, start: int = 0, action: Any = 0) -> list:
    """(user, items, reward of `action`) of rounds start .. start + count - 1."""
    out = []
    for t in range(start, start + count):
        rnd = env.observe(t)
        out.append((rnd.user, rnd.items.copy(), env.act(t, action).reward))
    return out


def assert_same_rounds(a: list, b: list) -> None:
    assert len(a) == len(b)
    for (ua, xa, ra), (ub, xb, rb) in zip(a, b, strict=True):
        assert ua == ub and ra == rb
        np.testing.assert_array_equal(xa, xb)


def cascade_env() -> CascadeEnv:
    theta = clustered_preferences(4, 2, 5, np.random.default_rng(2), gap=0.5)[0]
    return CascadeEnv(theta, SphereItems(5, 8), 3, block=16)


@pytest.mark.parametrize("build, action", [
    (linear_env, 0),
    (cascade_env, np.arange(3)),
    (lambda: ActivePartyView(linear_env(), (3, 2)), 1),
], ids=["linear", "cascade", "vertical-view"])
def test_prefetch_serves_the_same_rounds_bit_for_bit(build, action):
    plain, piped = build(), build()
    piped.prefetch = True
    assert piped.prefetch and not plain.prefetch
    plain.reset(np.random.default_rng(9))
    piped.reset(np.random.default_rng(9))
    assert_same_rounds(rounds_of(plain, 70, action=action), rounds_of(piped, 70, action=action))


def test_prefetch_gives_the_same_run_result():
    plain, piped = linear_env(), linear_env()
    piped.prefetch = True
    a = run(LinUCB(5, 6, beta=0.3), plain, 300, 5)
    b = run(LinUCB(5, 6, beta=0.3), piped, 300, 5)
    np.testing.assert_array_equal(a.regret, b.regret)
    np.testing.assert_array_equal(a.reward, b.reward)
    np.testing.assert_array_equal(a.cluster_error, b.cluster_error)


def test_no_block_is_drawn_past_a_known_horizon():
    plain, piped = linear_env(horizon=64), linear_env(horizon=64)
    piped.prefetch = True
    rngs = np.random.default_rng(3), np.random.default_rng(3)
    for env, rng in zip((plain, piped), rngs, strict=True):
        env.reset(rng)
        rounds_of(env, 64)
    assert rngs[0].bit_generator.state == rngs[1].bit_generator.state


def test_reset_discards_the_prefetched_block():
    env, fresh = linear_env(), linear_env()
    env.prefetch = True
    env.reset(np.random.default_rng(4))
    rounds_of(env, 20)  # a second block is being drawn ahead now
    env.reset(np.random.default_rng(5))
    fresh.reset(np.random.default_rng(5))
    assert_same_rounds(rounds_of(env, 40), rounds_of(fresh, 40))


def test_a_pickled_environment_continues_with_the_same_rounds():
    plain, piped = linear_env(), linear_env()
    piped.prefetch = True
    plain.reset(np.random.default_rng(6))
    piped.reset(np.random.default_rng(6))
    rounds_of(plain, 20)
    rounds_of(piped, 20)  # the block of rounds 32..47 is prefetched or in flight
    copy = pickle.loads(pickle.dumps(piped))
    assert copy.prefetch
    expected = rounds_of(plain, 50, start=20)
    assert_same_rounds(rounds_of(copy, 50, start=20), expected)


@pytest.mark.parametrize("value", [1, "yes", None, np.bool_(True)])
def test_prefetch_must_be_a_bool(value):
    env = linear_env()
    with pytest.raises(ConfigError, match="prefetch"):
        env.prefetch = value
    assert env.prefetch is False


class FailingEnv(BlockRounds, Environment):
    """Blocks of 4 rounds; drawing the block of rounds 8..11 fails."""

    n_users, dim, n_items = 1, 2, 3

    def __init__(self) -> None:
        super().__init__(4)
        self.blocks = 0

    def _draw_block(self, size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        self.blocks += 1
        if self.blocks == 3:
            raise RuntimeError("third block failed")
        return {"users": np.zeros(size, dtype=np.int64), "items": rng.random((size, 3, 2))}

    def act(self, t: int, action: Any) -> Outcome:
        return Outcome(0.0, 0.0, 0.0, 0.0)

    def describe(self) -> dict[str, Any]:
        return {"name": "failing"}


def test_a_failed_draw_is_raised_at_the_round_that_needs_it():
    env = FailingEnv()
    env.prefetch = True
    env.reset(np.random.default_rng(0))
    for t in range(8):  # the failing block is drawn ahead, during rounds 4..7
        env.observe(t)
    with pytest.raises(RuntimeError, match="third block failed"):
        env.observe(8)


def test_the_worker_thread_ends_with_its_environment():
    def workers() -> set[threading.Thread]:
        return {th for th in threading.enumerate() if th.name.startswith("privbandit-blocks")}

    before = workers()
    env = linear_env()
    env.prefetch = True
    env.reset(np.random.default_rng(0))
    rounds_of(env, 20)
    (worker,) = workers() - before
    del env
    gc.collect()
    worker.join(timeout=10)
    assert not worker.is_alive()
