"""The run loop: play a policy against an environment for T rounds -> `RunResult`.

Randomness: one seed (an int or a `numpy.random.SeedSequence`) fixes a run.
`seed_streams(seed)` derives three independent generators, always in the
same way: "world" (for the caller to build the hidden world with), "rounds"
(the environment's round stream) and "policy" (the `rng` passed to
`Policy.select`).  Same seed, same result, bit for bit.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..envs.base import Environment
from ..errors import config_error
from ..kernels import cluster_error_rate
from ..policies.base import Policy
from ..result import RunResult
from ..validation import check_dim

STREAMS = ("world", "rounds", "policy")


def _seed_sequence(seed: int | np.random.SeedSequence | None) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        # a fresh copy: spawning mutates a SeedSequence's child counter
        return np.random.SeedSequence(
            seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise config_error("seed", seed, "an integer >= 0 or a numpy.random.SeedSequence")
    return np.random.SeedSequence(int(seed))


def seed_streams(seed: int | np.random.SeedSequence) -> dict[str, np.random.Generator]:
    """Independent generators "world", "rounds", "policy" derived from `seed`."""
    children = _seed_sequence(seed).spawn(len(STREAMS))
    return {name: np.random.default_rng(c) for name, c in zip(STREAMS, children, strict=True)}


def _checkpoints(horizon: int, every: int | None) -> set[int]:
    if every is None:
        every = max(1, horizon // 100)
    every = check_dim("cluster_every", every)
    return set(range(every - 1, horizon, every)) | {horizon - 1}


def run(
    policy: Policy,
    env: Environment,
    horizon: int,
    seed: int | np.random.SeedSequence,
    *,
    cluster_every: int | None = None,
    algorithm: str | None = None,
) -> RunResult:
    """Play `horizon` rounds and collect per-round regret and reward.

    When the environment has true clusters and the policy reports detected
    ones, the cluster-detection error (`kernels.cluster_error_rate`) is
    measured every `cluster_every` rounds (default: 100 points) and at the end.
    """
    if not isinstance(policy, Policy):
        raise config_error("policy", policy, "a Policy")
    if not isinstance(env, Environment):
        raise config_error("env", env, "an Environment")
    horizon = check_dim("horizon", horizon)
    streams = seed_streams(seed)
    env.reset(streams["rounds"])
    rng = streams["policy"]
    truth = env.true_clusters()
    measure = truth is not None and policy.cluster_labels() is not None
    checkpoints = _checkpoints(horizon, cluster_every) if measure else set()
    regret = np.empty(horizon)
    reward = np.empty(horizon)
    err_rounds: list[int] = []
    errors: list[float] = []
    started = time.perf_counter()
    for t in range(horizon):
        _, user, items = env.observe(t)
        action = policy.select(items, user, t, rng)
        out = env.act(t, action)
        policy.update(items, user, action, out.feedback, t)
        regret[t] = out.regret
        reward[t] = out.reward
        if t in checkpoints:
            err_rounds.append(t)
            errors.append(cluster_error_rate(truth, policy.cluster_labels()))
    elapsed = time.perf_counter() - started
    comm = policy.comm
    return RunResult(
        algorithm=algorithm or policy.name,
        params=policy.params(),
        regret=regret,
        reward=reward,
        comm={} if comm is None else comm.summary(),
        comm_rounds=None if comm is None else comm.round_indices(),
        ledgers=[led.summary() for led in policy.ledgers()],
        cluster_error=np.array(errors) if measure else None,
        cluster_error_rounds=np.array(err_rounds) if measure else None,
        privacy=policy.privacy(),
        timings={"simulate": elapsed, "rounds_per_second": horizon / max(elapsed, 1e-12)},
        seed=_seed_int(seed),
        environment=env.describe(),
    )


def _seed_int(seed: Any) -> int | None:
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.entropy) if isinstance(seed.entropy, (int, np.integer)) else None
    return int(seed)
