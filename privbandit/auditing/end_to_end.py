"""End-to-end privacy audits of registry entries on neighbouring environments.

The interactive relation (`Relation.INTERACTIVE`): two environments that hold
the same world, arrivals, contexts and random streams and differ in ONE
user-round's reward.  `FlippedReward` is that neighbour: it changes the
feedback of one round (per-round worlds) or one agent's reward sum in one
epoch (the federated MAB's epoch draws) to the other end of its range, the
change the sensitivity allows at most.  `audit_entry` records an entry's run
on a world once (`privbandit.audits.record`) and replays such neighbours
against it, every release forced to the recorded output
(`privbandit.audits.audit_replays`), and checks the entry's claim when its
statement holds under the interactive relation.

Flips that reach releases.  A flip whose record is never released tests
nothing, so the flips are chosen from the recorded run: every record that
enters a release is declared where it enters (`mechanisms.tape.feeds`;
`private.PartyStreams.observe` declares each record, `private.Billboard` adds
whether the unit's released cluster spans other parties, `merged`), stamped
with the round being played (the world's `observe` marks the tape).  The
audit flips the first, the middle and the last round whose record was
released, the first and the last of a merged unit, and one local round (a
round whose record was never released: it must move nothing), `choose_flips`.
An entry that declares nothing (its every round may feed a release) is
flipped early, mid-run and late.  The report counts the flips that moved a
release; none is `inconclusive`.  Epoch worlds flip epochs 0 and 2 of two
agents, anonymous worlds a user's first and sixth drawn rewards.

The registry audit (`audit_registry`) runs every private entry on a small
world (`AUDIT_WORLDS`): the guarded entries share half their rounds, without a
cap, on a world of 4 units in dimension 2 with a coarse merge resolution, so
that records are released early and units merge within a few hundred rounds
at epsilon 1 and 8; CDP-FCLUB-DC (every record released) runs on the same
world with a coarse resolution, so that users of both servers merge (rate,
cap and resolution are utility knobs: the privacy
argument holds for every value, and the statement is the same).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.statement import Relation
from privbandit.audits.environment import (
    EnvironmentAuditReport,
    PairFinding,
    audit_replays,
    record,
)
from privbandit.mechanisms.tape import Entry, PublicValue, Tape, active, recording

from ..registry import get_algorithm
from ..runtime import play_setup, seed_int, seed_sequence, seed_streams


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


def marked(world: Any) -> Any:
    """Patch `world.observe` so that the active tape, if any, is marked with each round
    (`Tape.mark`: releases and declarations are stamped with it); returns `world`."""
    observe = world.observe

    def observed(t: int):
        tape = active()
        if tape is not None:
            tape.mark(t)
        return observe(t)

    world.observe = observed
    return world


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
    each built afresh from the same seed (rounds marked on the tape); and a list that
    receives what was flipped."""
    get_algorithm(name)  # fails early on an unknown name
    hits: list[dict[str, Any]] = []

    def run(which: int) -> Any:
        env, play = setup(name, config, seed)
        marked(env)
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
    return _claim(play(env).privacy)


def _claim(statement: Any) -> tuple[float | None, float, Any]:
    eps = statement.epsilon if statement.relation is Relation.INTERACTIVE else None
    return eps, statement.delta or 1e-5, statement


@dataclass(frozen=True)
class Flip:
    """One neighbour: the round (epoch, draw) `at` of agent `agent` flipped; `kind` says
    what the recorded run declared of it: "released" (its record reached a release),
    "released, merged" (of a unit whose released cluster spans other parties), "local"
    (never released), "undeclared" (the entry declares nothing), "epoch" or "draw"."""

    at: int
    agent: int = 0
    kind: str = "undeclared"

    def label(self, agents: bool = False) -> str:
        who = f", agent {self.agent}" if agents else ""
        return f"flip at {self.at}{who}" + (f" ({self.kind})" if self.kind else "")


def choose_flips(name: str, tape: Tape, horizon: int) -> tuple[Flip, ...]:
    """The flips the audit tries on entry `name`, read from its recorded run's `tape` (see
    the module docstring)."""
    if name in EPOCH_ENTRIES:
        return tuple(Flip(e, a, "epoch") for e in EPOCH_FLIPS for a in (0, 1))
    if name in DRAW_ENTRIES:
        return tuple(Flip(d, a, "draw") for d in DRAW_FLIPS for a in (0, 7))
    if not tape.declared:
        return tuple(Flip(t, 0, "undeclared") for t in (5, horizon // 2, horizon - 2))
    return classify(tape, _spread(tape, horizon))


def declared_rounds(tape: Tape) -> tuple[list[int], list[int]]:
    """(rounds whose record reached a release, those of a merged unit), as a recorded run's
    `tape` declares them (`mechanisms.tape.feeds`; both empty when it declares nothing)."""
    feeds = [f for f in tape.released_feeds() if f.round is not None]
    return (sorted({f.round for f in feeds}),
            sorted({f.round for f in feeds if f.facts.get("merged")}))


def _spread(tape: Tape, horizon: int) -> list[int]:
    released, merged = declared_rounds(tape)
    declared = {f.round for f in tape.declared}
    first = released[0] if released else 0
    local = next((t for t in range(first + 1, horizon) if t not in declared), None)
    picks = [*released[:1], *released[len(released) // 2:][:1], *released[-1:],
             *merged[:1], *merged[-1:], *([] if local is None else [local])]
    return sorted(dict.fromkeys(picks))


def classify(tape: Tape, rounds: Sequence[int]) -> tuple[Flip, ...]:
    """Each round of `rounds` as a Flip, with what the recorded `tape` declared of it (kind
    "" when it declared nothing)."""
    released, merged = map(set, declared_rounds(tape))
    out = []
    for t in rounds:
        if not tape.declared:
            kind = ""
        elif t in released:
            kind = "released, merged" if t in merged else "released"
        else:
            kind = "local"
        out.append(Flip(int(t), 0, kind))
    return tuple(out)


def released_rounds(name: str, config: dict[str, Any], seed: Any) -> tuple[list[int], list[int]]:
    """`declared_rounds` of entry `name`'s run on `config` and `seed` (one recorded run)."""
    env, play = setup(name, config, seed)
    marked(env)
    return declared_rounds(record(lambda: play(env)).tape)


def player(name: str, config: dict[str, Any], seed: Any, flip: Flip | None
           ) -> Callable[[], Any]:
    """A thunk that plays entry `name`'s run on its world, rounds marked on the tape, or on
    the neighbour `flip` describes."""
    def go() -> Any:
        env, run = setup(name, config, seed)
        marked(env)
        if flip is not None:
            FlippedReward(env, flip.at, flip.agent)
        return run(env)
    return go


def audit_entry(name: str, config: dict[str, Any], seed: Any,
                flips: Sequence[int] | None = None, agents: Sequence[int] = (0,)
                ) -> EnvironmentAuditReport:
    """Forced-replay audit of entry `name` (a full run config: horizon, environment and
    parameters): its run on the world is recorded once, then replayed on the neighbours
    flipped at each round (or epoch) in `flips`, for each agent index in `agents` (epoch
    and anonymous worlds) -- or, `flips` None, at the flips chosen from the recorded run
    (`choose_flips`).  The report's `scope` line says what the run released and which
    kinds of flips were tried."""
    get_algorithm(name)  # fails early on an unknown name
    recorded = record(player(name, config, seed, None))
    eps, delta, statement = _claim(recorded.result.privacy)
    unrecorded = recorded.unrecorded or _unpaid(recorded, statement)
    if unrecorded:  # the audit cannot see, or account for, every release: fail closed
        return EnvironmentAuditReport(eps, delta, (PairFinding(
            "recorded run", math.inf, math.inf, math.inf, len(recorded.tape.entries), 0,
            f"unrecorded: {unrecorded}"),))
    if flips is None:
        chosen = choose_flips(name, recorded.tape, int(config["horizon"]))
    else:
        fixed = {n: k for names, k in ((EPOCH_ENTRIES, "epoch"), (DRAW_ENTRIES, "draw"))
                 for n in names}
        chosen = tuple(Flip(f.at, a, fixed.get(name, f.kind))
                       for f in classify(recorded.tape, flips) for a in agents)
    many = len({f.agent for f in chosen}) > 1
    neighbours = {f.label(many): player(name, config, seed, f) for f in chosen}
    return audit_replays(recorded, neighbours, delta, eps, scope(recorded.tape, chosen))


def differing_releases(name: str, config: dict[str, Any], seed: Any, at: int,
                       agent: int = 0) -> list[tuple[Entry, Entry]]:
    """The releases whose pre-noise inputs differ between entry `name`'s run and the
    neighbour flipped at round `at` (agent `agent`), replayed with every release forced:
    (recorded entry, replayed entry) pairs in tape order.  What they hold says which parts
    of a released statistic the flip reaches (docs/cascade.md reads a cascade's Gram
    block this way)."""
    first = record(player(name, config, seed, None)).tape
    second = Tape(forced=first)
    with recording(second):
        player(name, config, seed, Flip(at, agent))()
    return [(a, b) for a, b in zip(first.entries, second.entries, strict=True)
            if not np.array_equal(np.asarray(a.value), np.asarray(b.value))]


def _unpaid(recorded: Any, statement: Any) -> str:
    """Why a DP-claiming run's noised releases went unpaid ("" when they did not): a private
    entry's run must charge its ledgers (the audit layer cannot require it of a toy)."""
    noised = [e for e in recorded.tape.entries if not isinstance(e.mechanism, PublicValue)]
    if statement.epsilon is None or recorded.charges or not noised:
        return ""
    return (f"the run states {statement.epsilon:g}-DP and made {len(noised)} noised releases "
            "but charged no ledger")


def scope(tape: Tape, flips: Sequence[Flip]) -> str:
    """One line: what the recorded run declared released, and the kinds of flips tried
    ("" when it declared nothing)."""
    kinds: dict[str, int] = {}
    for f in flips:
        kinds[f.kind] = kinds.get(f.kind, 0) + 1
    tried = ", ".join(f"{n} {k}" for k, n in kinds.items())
    if not tape.declared:  # the labels say what each flip is
        return ""
    released, merged = declared_rounds(tape)
    return (f"records released from {len(released)} rounds ({len(merged)} of a merged unit); "
            f"flips tried: {tried}")


# Small worlds for auditing every private entry: the horizon, and the parameters and world
# settings that differ from the entry's defaults (see the module docstring).
_SHARING = {"rate": 0.5, "cap": 10**6, "resolution": 20.0}
AUDIT_WORLDS: dict[str, tuple[int, dict[str, Any], dict[str, Any]]] = {
    "cdp-fclub-dc": (1024, {"resolution": 5.0}, {"dim": 2, "users": 4, "clusters": 1,
                                                  "servers": 2}),
    "cdp-fclub-dc+": (512, _SHARING, {"dim": 2, "users": 4, "clusters": 1, "servers": 2}),
    "cdp-fedc3ucb-h": (512, {}, {}),
    "cdp-fedc3ucb-h+": (512, _SHARING, {"dim": 2, "users": 4, "clusters": 1, "items": 10,
                                        "list_len": 2}),
    "cdp-fedc3ucb-sets": (512, {"resolution": 3.0}, {"dim": 2, "users": 4, "clusters": 1,
                                                    "items": 10, "list_len": 2}),
    "cdp-mab": (20000, {}, {}), "ddp-mab": (20000, {}, {}), "hdp-mab": (20000, {}, {}),
    "anonymous-base-laplace": (2000, {}, {}),
}
AUDIT_SIZES = {name: world[0] for name, world in AUDIT_WORLDS.items()}
EPOCH_FLIPS = (0, 2)
EPOCH_ENTRIES = ("cdp-mab", "ddp-mab", "hdp-mab")  # their worlds draw rewards per epoch
# worlds whose rewards are drawn when released: flips count a user's draws
DRAW_ENTRIES = ("anonymous-base-laplace",)
DRAW_FLIPS = (0, 5)


def small_config(name: str, epsilon: float, **params: Any) -> dict[str, Any]:
    """Entry `name` at its defaults (and `params`) on its default world, at its
    AUDIT_SIZES horizon."""
    from ..schema import defaults

    entry = get_algorithm(name)
    return {**entry.defaults, **params, "epsilon": epsilon, "horizon": AUDIT_SIZES[name],
            "environment": defaults(entry.environment)}


def audit_config(name: str, epsilon: float, **params: Any) -> dict[str, Any]:
    """Entry `name` on its AUDIT_WORLDS world (and `params`), at `epsilon`."""
    _, changed, world = AUDIT_WORLDS[name]
    config = small_config(name, epsilon, **{**changed, **params})
    config["environment"] = {**config["environment"], **world}
    return config


def audit_registry(epsilon: float = 1.0, seed: int = 3) -> dict[str, EnvironmentAuditReport]:
    """Every private entry that builds its run, audited at `epsilon` on its AUDIT_WORLDS
    world, at the flips chosen from its recorded run."""
    return {name: audit_entry(name, audit_config(name, epsilon), seed) for name in AUDIT_WORLDS}
