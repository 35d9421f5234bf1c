"""A registry entry prepared for auditing: found once, its profile, a checked config, its runs.

    target = AuditTarget.of(name, epsilon=1.0)          # the profile's first audit world
    target = AuditTarget.of(name, config)               # a run config of the caller's
    result = target.play(seed, flip=Flip(5))            # the neighbour flipped at round 5

The registry is visited once, when the target is made (`get_algorithm` and
the entry's check of the config); every run is then built by the entry's own
`build` from the seed's streams and played here.  The world a run plays is the
entry's own, its neighbour (`Environment.neighbour(flip)`) or a copy holding
canaries (`Environment.planted`): the world makes them, nothing is patched from
outside.  `coins` replaces the run's "policy" stream (the algorithm's coins and
its privacy noise) while the world and the round stream stay the seed's.
Rounds are marked on the audit's tape by an observer of the run loop
(`TapeRounds`), so every release and declaration is stamped with the round
being played.  `variant` replaces what the entry builds, for controls (a
deliberately broken protocol audited with the entry's world and flips).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.statement import Relation
from privbandit.mechanisms.tape import active

from ..envs.neighbours import Flip
from ..errors import config_error
from ..registry import AlgorithmEntry, AuditProfile, AuditWorld, get_algorithm
from ..result import RunResult
from ..runtime import Setup, play_setup, seed_int, seed_sequence, seed_streams
from ..runtime.observers import Observer, RunState
from ..schema import CheckedConfig, defaults

DEFAULT_DELTA = 1e-5  # the delta of a statement that states none (pure DP)


class TapeRounds(Observer):
    """Marks each round on the active tape as it is played (one round per step)."""

    def start(self, run: RunState) -> None:
        self._mark(0)

    def next_stop(self, t: int) -> int | None:
        return t + 1

    def after_step(self, run: RunState, t: int) -> None:
        self._mark(t)

    @staticmethod
    def _mark(t: int) -> None:
        tape = active()
        if tape is not None:
            tape.mark(t)


def profile_of(entry: AlgorithmEntry) -> AuditProfile:
    """The entry's audit profile; a ConfigError naming the entry when it declares none."""
    if entry.audit is None:
        raise config_error(f"audit profile of {entry.name!r}", None,
                           "an AuditProfile declared with the entry (AlgorithmEntry.audit): "
                           "every private entry is audited, none is skipped")
    return entry.audit


def world_config(entry: AlgorithmEntry, world: AuditWorld, epsilon: float,
                 **params: Any) -> dict[str, Any]:
    """Entry `entry` at its defaults on its default world, with `world`'s changes, at
    `epsilon` (and `params` over everything)."""
    return {**entry.defaults, **world.params, **params, "epsilon": epsilon,
            "horizon": world.horizon,
            "environment": {**defaults(entry.environment), **world.environment}}


@dataclass(frozen=True)
class AuditTarget:
    """One private entry's runs as an audit plays them (see the module docstring)."""

    name: str
    entry: AlgorithmEntry
    config: CheckedConfig
    variant: Callable[[Setup], Setup] | None = None

    @classmethod
    def of(cls, name: str, config: dict[str, Any] | None = None, *, epsilon: float = 1.0,
           world: int = 0, variant: Callable[[Setup], Setup] | None = None,
           **params: Any) -> AuditTarget:
        """Entry `name` on `config`, or (config None) on its profile's audit world number
        `world` at `epsilon`, `params` changed."""
        entry = get_algorithm(name)
        if config is None:
            worlds = profile_of(entry).worlds
            if not 0 <= world < len(worlds):
                raise config_error("world", world, f"an index of {name}'s {len(worlds)} "
                                   "audit worlds")
            config = world_config(entry, worlds[world], epsilon, **params)
        elif params:
            config = {**config, **params}
        return cls(name, entry, entry.check(config), variant)

    @property
    def profile(self) -> AuditProfile:
        return profile_of(self.entry)

    @property
    def horizon(self) -> int:
        return int(self.config["horizon"])

    def with_horizon(self, horizon: int) -> AuditTarget:
        """The same entry and config over `horizon` rounds."""
        return AuditTarget(self.name, self.entry, CheckedConfig({**self.config,
                                                                 "horizon": horizon}),
                           self.variant)

    def setup(self, seed: Any, coins: int | None = None
              ) -> tuple[Setup, dict[str, np.random.Generator]]:
        """The built run of `seed` and its streams (`coins`: a fresh "policy" stream)."""
        streams = seed_streams(seed)
        if coins is not None:
            streams["policy"] = np.random.default_rng(seed_sequence(coins))
        built = self.entry.build(dict(self.config), streams)
        if not isinstance(built, Setup):
            raise config_error(f"{self.name}'s build", built, "a runtime.Setup")
        return (built if self.variant is None else self.variant(built)), streams

    def play(self, seed: Any, *, flip: Flip | None = None,
             planted: tuple[Sequence[int], Sequence[bool]] | None = None,
             coins: int | None = None) -> RunResult:
        """Play the run of `seed` on the entry's world, its neighbour `flip`, or a copy with
        canaries `planted` = (rounds, included); rounds marked on the active tape."""
        built, streams = self.setup(seed, coins)
        world = built.env
        if planted is not None:
            world = world.planted(*planted)
        if flip is not None:
            world = world.neighbour(flip)
        return play_setup(built.on(world), streams, seed_int(seed), observers=[TapeRounds()])

    def world(self, seed: Any) -> Any:
        """The world the run of `seed` plays (built afresh)."""
        return self.setup(seed)[0].env


def measured(statement: Any) -> str:
    """Why an audit under the interactive relation only measures `statement`'s entry."""
    return (f"its statement holds under the {statement.relation.value} relation, not the "
            "interactive one: the bound is measured, not judged")


def claim_of(result: RunResult) -> tuple[float | None, float, Any]:
    """(epsilon claimed under the interactive relation or None, delta, the statement)."""
    statement = result.privacy
    eps = statement.epsilon if statement.relation is Relation.INTERACTIVE else None
    return eps, statement.delta or DEFAULT_DELTA, statement
