"""The one run loop: a protocol against an environment for T rounds -> `RunResult`.

`play(protocol, env, horizon, rng=..., rounds_rng=...)` resets the
environment's round stream, lets the protocol play step after step (a
policy's steps are single rounds; an epoch engine's span many), and builds
the run's `RunResult` -- the only place one is built.  Observers watch the
loop: detection-error checkpoints, the trace of ledger spending over rounds,
the communication log, optionally a progress line, and any the caller adds
(`runtime.observers`).

Randomness: `run(protocol, env, horizon, seed)` fixes a run by one seed (an
int or a `numpy.random.SeedSequence`).  `seed_streams(seed)` is the one
derivation of a run's generators, the same for every family: "world" (the
hidden world is built from it), "rounds" (the environment's round stream),
"policy" (the `rng` passed to every step: the algorithm's coins and its
privacy noise) and "secrets" (what a protocol holds secretly from the start,
such as a mask).  Same seed, same result, bit for bit.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..envs.base import Environment
from ..errors import BanditError, config_error
from ..protocol import Protocol
from ..result import RunResult
from ..validation import check_dim
from .observers import Checkpoints, Communication, LedgerTrace, Observer, RunState, ShowProgress

STREAMS = ("world", "rounds", "policy", "secrets")


def seed_sequence(seed: int | np.random.SeedSequence | None) -> np.random.SeedSequence:
    """A fresh SeedSequence for `seed` (an int >= 0, or a copy of a SeedSequence)."""
    if isinstance(seed, np.random.SeedSequence):
        # a fresh copy: spawning mutates a SeedSequence's child counter
        return np.random.SeedSequence(
            seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size
        )
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise config_error("seed", seed, "an integer >= 0 or a numpy.random.SeedSequence")
    return np.random.SeedSequence(int(seed))


def seed_streams(seed: int | np.random.SeedSequence) -> dict[str, np.random.Generator]:
    """Independent generators "world", "rounds", "policy", "secrets" derived from `seed`
    (children 0..3 of its SeedSequence, in that order)."""
    children = seed_sequence(seed).spawn(len(STREAMS))
    return {name: np.random.default_rng(c) for name, c in zip(STREAMS, children, strict=True)}


def seed_int(seed: Any) -> int | None:
    """The integer a result records for `seed` (None for a SeedSequence without one)."""
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.entropy) if isinstance(seed.entropy, (int, np.integer)) else None
    return None if seed is None else int(seed)


def run(
    protocol: Protocol,
    env: Environment,
    horizon: int,
    seed: int | np.random.SeedSequence,
    **options: Any,
) -> RunResult:
    """Play `horizon` rounds with the "rounds" and "policy" streams of `seed`
    (`seed_streams`); `options` as for `play`."""
    streams = seed_streams(seed)
    return play(protocol, env, horizon, rng=streams["policy"], rounds_rng=streams["rounds"],
                seed=seed_int(seed), **options)


def play(
    protocol: Protocol,
    env: Environment,
    horizon: int,
    *,
    rng: np.random.Generator,
    rounds_rng: np.random.Generator | None = None,
    cluster_every: int | None = None,
    observers: Sequence[Observer] = (),
    progress: bool = False,
    algorithm: str | None = None,
    params: dict[str, Any] | None = None,
    seed: int | None = None,
) -> RunResult:
    """Play `horizon` rounds of `protocol` on `env` and build the run's `RunResult`.

    rng: the protocol's generator (every step gets it); rounds_rng: the
    environment's round stream (None leaves the environment as it is, for
    protocols that never observe rounds); cluster_every: rounds between
    detection-error checkpoints and ledger-trace points (default:
    `protocol.checkpoint_every(horizon)`); observers: more observers;
    progress: a progress line on stderr; algorithm: the name recorded
    (default `protocol.name`); params: recorded besides `protocol.params()`
    (settings of the run around the protocol); seed: the seed recorded.
    """
    if not isinstance(protocol, Protocol):
        raise config_error("protocol", protocol, "a Protocol (a Policy, or a multi-round one)")
    if not isinstance(env, Environment):
        raise config_error("env", env, "an Environment (envs.base)")
    if not isinstance(rng, np.random.Generator):
        raise config_error("rng", rng, "a numpy.random.Generator")
    horizon = check_dim("horizon", horizon)
    watching = watchers(protocol, horizon, cluster_every, observers)
    if progress:
        watching.append(ShowProgress(horizon))
    if rounds_rng is not None:
        env.reset(rounds_rng)
    protocol.start(env, horizon, rng)
    state = RunState(protocol, env, horizon)
    for observer in watching:
        observer.start(state)
    regret = np.empty(horizon)
    reward = np.empty(horizon)
    started = time.perf_counter()
    t = 0
    while t < horizon:
        stop = horizon
        for observer in watching:
            wanted = observer.next_stop(t)
            if wanted is not None and wanted < stop:
                stop = wanted
        played = protocol.advance(env, t, regret[t:stop], reward[t:stop], rng)
        if not 1 <= played <= stop - t:
            raise BanditError(f"{type(protocol).__name__}.advance must play between 1 and "
                              f"{stop - t} rounds from round {t}; it reported {played!r}")
        t += played
        for observer in watching:
            observer.after_step(state, t)
    elapsed = time.perf_counter() - started
    return build_result(state, watching, regret, reward, elapsed, algorithm, params, seed)


def watchers(protocol: Protocol, horizon: int, cluster_every: int | None,
             observers: Sequence[Observer] = ()) -> list[Observer]:
    """The loop's observers of one run: checkpoints, ledger trace, communication, `observers`."""
    every = (protocol.checkpoint_every(horizon) if cluster_every is None
             else check_dim("cluster_every", cluster_every))
    return [Checkpoints(every), LedgerTrace(every), Communication(), *observers]


def build_result(state: RunState, watching: Sequence[Observer], regret: np.ndarray,
                 reward: np.ndarray, elapsed: float, algorithm: str | None,
                 params: dict[str, Any] | None, seed: int | None) -> RunResult:
    """The run's `RunResult` once its last step is played (`elapsed` seconds)."""
    protocol, horizon = state.protocol, state.horizon
    fields: dict[str, Any] = {}
    for observer in watching:
        observer.finish(state, fields)
    return RunResult(
        algorithm=algorithm or protocol.name,
        params={**protocol.params(), **(params or {})},
        regret=regret,
        reward=reward,
        ledgers=[ledger.summary() for ledger in protocol.ledgers()],
        privacy=protocol.privacy(),
        timings={"simulate": elapsed, "rounds_per_second": horizon / max(elapsed, 1e-12),
                 **protocol.timings()},
        seed=seed,
        environment=state.env.describe(),
        **fields,
    )
