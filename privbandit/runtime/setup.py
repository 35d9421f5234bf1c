"""What a registry entry builds, and how the runner plays it.

A run is fixed by an entry, a validated config and a seed.  The runner
derives the seed's streams (`seed_streams`, the one derivation), the entry's
`build(config, streams)` returns a `Setup` -- the protocol and the world it
plays, the world drawn from the "world" stream and any secret the protocol
holds from "secrets" -- and the runner plays it: `play_setup` with the
"rounds" and "policy" streams, or `run_setups` for several seeds of one
configuration, in lockstep when the protocols' class has a batched twin that
plays them and the worlds stack (`runtime.lockstep`), else one by one.  The
results are the same either way, and each records its seed.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..envs.base import Environment
from ..errors import config_error
from ..protocol import Protocol
from ..result import RunResult
from ..validation import check_dim
from .lockstep import can_lockstep, play_lockstep
from .loop import play, seed_int, seed_streams


@dataclass(frozen=True)
class Setup:
    """One run, built: `protocol` plays `env` for `horizon` rounds.

    algorithm: the name the result records (default the protocol's);
    params: recorded besides `protocol.params()` (settings around the
    protocol); cluster_every: rounds between detection-error checkpoints
    (default the protocol's).
    """

    protocol: Protocol
    env: Environment
    horizon: int
    algorithm: str | None = None
    params: dict[str, Any] | None = None
    cluster_every: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.protocol, Protocol):
            raise config_error("protocol", self.protocol, "a Protocol (a Policy, or a "
                               "multi-round one)")
        if not isinstance(self.env, Environment):
            raise config_error("env", self.env, "an Environment (envs.base)")
        check_dim("horizon", self.horizon)

    def on(self, env: Environment) -> Setup:
        """The same run on another world (a neighbour, a patched copy)."""
        return replace(self, env=env)

    def options(self) -> dict[str, Any]:
        return {"algorithm": self.algorithm, "params": self.params,
                "cluster_every": self.cluster_every}


def play_setup(setup: Setup, streams: dict[str, np.random.Generator],
               seed: int | None = None, **options: Any) -> RunResult:
    """Play `setup` with the "rounds" and "policy" generators of `streams` (`seed` is
    recorded); `options` as for `loop.play` (observers, progress)."""
    return play(setup.protocol, setup.env, setup.horizon, rng=streams["policy"],
                rounds_rng=streams["rounds"], seed=seed, **setup.options(), **options)


def run_setup(setup: Setup, seed: int | np.random.SeedSequence, **options: Any) -> RunResult:
    """Play `setup` with the "rounds" and "policy" streams of `seed` (`seed_streams`),
    recording the seed; `options` as for `loop.play`."""
    return play_setup(setup, seed_streams(seed), seed_int(seed), **options)


def play_algorithm(algorithm: Any, env: Environment, rng: np.random.Generator,
                   seed: int | None = None) -> RunResult:
    """Play an algorithm object -- one with `horizon` and `protocol(env)`, such as the
    federated MABs and the anonymous bandits -- on `env` with the generator `rng`."""
    if not callable(getattr(algorithm, "protocol", None)):
        raise config_error("algorithm", algorithm, "an object with protocol(env) and horizon")
    return play(algorithm.protocol(env), env, algorithm.horizon, rng=rng, seed=seed)


def run_setups(setups: Sequence[Setup], seeds: Sequence[Any]) -> list[RunResult]:
    """The runs of `setups[r]` on the streams of `seeds[r]`: in lockstep when the
    protocols and worlds allow it (`runs_in_lockstep`), else one after the other."""
    if len(setups) != len(seeds) or not setups:
        raise config_error("setups", len(setups), f"one setup per seed ({len(seeds)})")
    streams = [seed_streams(seed) for seed in seeds]
    if len(setups) > 1 and runs_in_lockstep(setups):
        first = setups[0]
        return play_lockstep(
            [s.protocol for s in setups], [s.env for s in setups], first.horizon,
            rngs=[s["policy"] for s in streams], rounds_rngs=[s["rounds"] for s in streams],
            seeds=[seed_int(seed) for seed in seeds], **first.options())
    return [play_setup(setup, s, seed_int(seed))
            for setup, s, seed in zip(setups, streams, seeds, strict=True)]


def runs_in_lockstep(setups: Sequence[Setup]) -> bool:
    """True when the setups can play in one lockstep pass: one horizon and options, and
    protocols and worlds `runtime.lockstep.can_lockstep` accepts."""
    first = setups[0]
    return (all(s.horizon == first.horizon and s.options() == first.options() for s in setups)
            and can_lockstep([s.protocol for s in setups], [s.env for s in setups]))
