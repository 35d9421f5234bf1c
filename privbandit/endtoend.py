"""End-to-end privacy audits of registry entries on neighbouring environments.

The interactive relation (`Relation.INTERACTIVE`): two environments that hold
the same world, arrivals, contexts and random streams and differ in ONE
user-round's reward.  `FlippedReward` is that neighbour: it changes the
feedback of one round (per-round worlds) or one agent's reward sum in one
epoch (the federated MAB's epoch draws) to the other end of its range, the
change the sensitivity allows at most.  `audit_entry` runs an entry on a
world and on such neighbours, with every release of the neighbour forced to
the first run's output (`privbandit.audits.audit_pairs`), and checks the
entry's claim when its statement holds under the interactive relation.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privbandit.accounting.statement import Relation
from privbandit.audits.environment import EnvironmentAuditReport, audit_pairs

from .registry import get_algorithm
from .runtime import play_setup, seed_int, seed_sequence, seed_streams


class FlippedReward:
    """Makes `env` the neighbour whose reward of round (or epoch) `at` moved to the other end
    of its range (the world itself is patched, so its type and every other method stay).

    Per-round worlds: a scalar reward y becomes 0 if y >= 1/2 else 1 (rewards
    are clipped to [0, 1] by the algorithms); a cascade's first-click position
    becomes "no click" if there was one, else a click on the first item.
    Epoch worlds (`draw_sums`): agent `agent`'s sum of its first arm's rewards
    moves by one.  Anonymous worlds (rewards drawn by their aggregator when a
    group sum is released): the `at`-th reward drawn of user `agent` moves to
    the other end of [0, 1].  `flipped` records who was hit, for the report.
    """

    def __init__(self, env: Any, at: int, agent: int = 0) -> None:
        self.env, self.at, self.agent = env, int(at), int(agent)
        self._user: int | None = None
        self._epochs = 0
        self.flipped: dict[str, Any] = {}
        self._observe, self._act = env.observe, env.act
        env.observe, env.act = self.observe, self.act
        if hasattr(env, "draw_sums"):
            self._draw_sums = env.draw_sums
            env.draw_sums = self.draw_sums
        aggregator = getattr(env, "aggregator", None)
        if aggregator is not None:  # rewards drawn when an anonymous aggregate is released
            self._drawn, self._source = 0, aggregator.reward_source
            aggregator.reward_source = self.anonymous_draw

    def observe(self, t: int):
        got = self._observe(t)
        if t == self.at:
            self._user = int(got[1])
        return got

    def act(self, t: int, action: Any):
        out = self._act(t, action)
        if t != self.at:
            return out
        feedback = out.feedback
        list_len = getattr(self.env, "list_len", None)
        if list_len is not None:  # a cascade: first-click position in [0, list_len]
            other = list_len if int(feedback) < list_len else 0
            reward = 1.0 if other < list_len else 0.0
        elif np.ndim(feedback) == 0:
            other = reward = 0.0 if float(feedback) >= 0.5 else 1.0
        else:  # one agent's reward of a vector of per-agent rewards
            other = np.array(feedback, dtype=float)
            a = self.agent % other.size
            other[a] = 0.0 if other[a] >= 0.5 else 1.0
            reward = float(other.sum())
        self.flipped = {"round": t, "user": self._user, "feedback": feedback}
        return out._replace(feedback=other, reward=reward)

    def anonymous_draw(self, users: np.ndarray, arms: np.ndarray, rng: np.random.Generator
                       ) -> np.ndarray:
        rewards = self._source(users, arms, rng)
        mine = np.flatnonzero(np.asarray(users) == self.agent)
        if self._drawn <= self.at < self._drawn + mine.size:
            i = mine[self.at - self._drawn]
            rewards = np.array(rewards, dtype=float)
            rewards[i] = 0.0 if rewards[i] >= 0.5 else 1.0
            self.flipped = {"draw": self.at, "user": self.agent, "arm": int(np.asarray(arms)[i])}
        self._drawn += mine.size
        return rewards

    def draw_sums(self, arms: np.ndarray, pulls: int, rng: np.random.Generator) -> np.ndarray:
        sums = self._draw_sums(arms, pulls, rng)
        epoch, self._epochs = self._epochs, self._epochs + 1
        if epoch == self.at and pulls > 0 and sums.size:
            a = self.agent % sums.shape[0]
            sums = sums.copy()
            sums[a, 0] += -1 if sums[a, 0] > 0 else 1
            self.flipped = {"epoch": epoch, "user": a, "arm": int(np.asarray(arms)[0])}
        return sums


def setup(name: str, config: dict[str, Any], seed: Any, coins: int | None = None
          ) -> tuple[Any, Callable[[Any], Any]]:
    """(world, play) of entry `name`'s run on `config` and `seed`: `play(world)` plays the
    run on `world`, which a caller may patch first (a neighbour, planted rewards).
    `coins` (an int) replaces the run's "policy" stream -- the algorithm's coins and
    privacy noise -- while the world and the round stream stay those of `seed`."""
    streams = seed_streams(seed)
    if coins is not None:
        streams["policy"] = np.random.default_rng(seed_sequence(coins))
    built = get_algorithm(name).setup(config, seed, streams)
    return built.env, lambda world: play_setup(built.on(world), streams, seed_int(seed))


def neighbour_pair(name: str, config: dict[str, Any], seed: Any, at: int,
                   agent: int = 0) -> tuple[Callable[[int], Any], list[dict[str, Any]]]:
    """`run(which)`: entry `name` on its world (0) or the neighbour flipped at `at` (1),
    each built afresh from the same seed; and a list that receives what was flipped."""
    get_algorithm(name)  # fails early on an unknown name
    hits: list[dict[str, Any]] = []

    def run(which: int) -> Any:
        env, play = setup(name, config, seed)
        if which:
            flip = FlippedReward(env, at, agent)
            result = play(env)
            hits.append(flip.flipped)
            return result
        return play(env)

    return run, hits


def claimed(name: str, config: dict[str, Any], seed: Any) -> tuple[float | None, float, Any]:
    """(epsilon claimed under the interactive relation or None, delta, statement)."""
    env, play = setup(name, config, seed)
    statement = play(env).privacy
    eps = statement.epsilon if statement.relation is Relation.INTERACTIVE else None
    return eps, statement.delta or 1e-5, statement


def audit_entry(name: str, config: dict[str, Any], seed: Any, flips: Sequence[int],
                agents: Sequence[int] = (0,)) -> EnvironmentAuditReport:
    """Forced-replay audit of entry `name` (a full run config: horizon, environment and
    parameters) on neighbours flipped at each round (or epoch) in `flips`, for each agent
    index in `agents` (epoch worlds)."""
    eps, delta, _ = claimed(name, config, seed)
    pairs = {}
    for at in flips:
        for agent in agents:
            run, _ = neighbour_pair(name, config, seed, at, agent)
            label = f"flip at {at}" + (f", agent {agent}" if len(agents) > 1 else "")
            pairs[label] = run
    return audit_pairs(pairs, delta, eps)


# Small worlds for auditing every private entry (two runs per pair): horizon, and the rounds
# (epochs, for the federated MAB) flipped -- early flips move the most records.
AUDIT_SIZES = {"cdp-fclub-dc": 1024, "cdp-fclub-dc+": 1024, "cdp-fedc3ucb-h": 512,
               "cdp-fedc3ucb-h+": 512, "cdp-mab": 20000, "ddp-mab": 20000, "hdp-mab": 20000,
               "anonymous-base-laplace": 2000}
EPOCH_FLIPS = (0, 2)
EPOCH_ENTRIES = ("cdp-mab", "ddp-mab", "hdp-mab")  # their worlds draw rewards per epoch
# worlds whose rewards are drawn when released: flips count a user's draws
DRAW_ENTRIES = ("anonymous-base-laplace",)
DRAW_FLIPS = (0, 5)


def small_config(name: str, epsilon: float, **params: Any) -> dict[str, Any]:
    """Entry `name` at its defaults (and `params`) on its default world, audit-sized."""
    from .schema import defaults

    entry = get_algorithm(name)
    return {**entry.defaults, **params, "epsilon": epsilon, "horizon": AUDIT_SIZES[name],
            "environment": defaults(entry.environment)}


def audit_registry(epsilon: float = 1.0, seed: int = 3) -> dict[str, EnvironmentAuditReport]:
    """Every private entry that builds its run, audited at `epsilon` on small worlds."""
    out = {}
    for name in AUDIT_SIZES:
        flips, agents = flips_tried(name)
        out[name] = audit_entry(name, small_config(name, epsilon), seed, flips, agents)
    return out


def flips_tried(name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(flips, agents) the registry audit tries for entry `name`: rounds early and late,
    epochs 0 and 2 for agents 0 and 1, or a user's first and sixth drawn rewards."""
    if name in EPOCH_ENTRIES:
        return EPOCH_FLIPS, (0, 1)
    if name in DRAW_ENTRIES:
        return DRAW_FLIPS, (0, 7)
    return (5, AUDIT_SIZES[name] - 2), (0,)
