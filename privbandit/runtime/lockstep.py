"""Replicates in lockstep: R seeds of one configuration played in one vectorized pass.

`run_lockstep(policies, envs, horizon, seeds)` plays policy r on world r
with the "rounds" and "policy" streams of seed r (`seed_streams`), exactly
the generators `run(policies[r], envs[r], horizon, seeds[r])` uses, and
returns the R `RunResult`s that R separate runs return: the same actions,
regret, detected clusters and ledgers (values to rounding).  Per round, one
call of the batched policy (the policy class's registered twin) scores,
chooses and updates all replicates; the worlds' blocks are stacked
(`envs.lockstep.StackedRounds`) and their outcomes computed in one call.
A batched policy whose rounds touch only their user's model and draw nothing
(`plays_waves`: LinUCB with a model per user) plays the rounds between two
stops in waves (`waves`): each wave, every replicate's rounds whose users'
earlier rounds are all played, in one call.
The observers of each replicate (checkpoints, ledger trace, communication)
run at the loop's stops, as in `play`.

Batched versions are accelerators, registered by class in one place:
`register_batched(PolicyClass, build)` names `build(policies)` (a
`policies.lockstep.BatchedPolicy` class, or a function choosing one by the
replicates' configuration) as the twin of exactly that class; no policy
class imports its twin.  The twins of `policies` (LinUCB, LinTS, CLUB,
SCLUB) are registered below; a family's lockstep module registers its own
when its package is imported (`fclub.lockstep`).  `supports_lockstep(policy)`
says whether a policy's class has a twin and its configuration is one the
twin plays (`Policy.lockstep_ready`); the study runner (`studies.runner`)
uses lockstep for every cell whose algorithm supports it.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..envs.lockstep import StackedRounds, stackable
from ..errors import config_error
from ..policies.base import Policy
from ..policies.club import CLUB, BatchedCLUB
from ..policies.linear import LinTS, LinUCB
from ..policies.lockstep import BatchedLinTS, BatchedLinUCB, BatchedPolicy
from ..policies.sclub import SCLUB, BatchedSCLUB
from ..result import RunResult
from ..validation import check_dim
from .loop import build_result, run, seed_int, seed_streams, watchers
from .observers import RunState

# policy class -> build(policies) -> its batched twin (`register_batched`)
_BATCHED: dict[type, Callable[[Sequence[Policy]], BatchedPolicy]] = {}


def register_batched(policy_class: type,
                     build: Callable[[Sequence[Policy]], BatchedPolicy]) -> None:
    """Make `build(policies)` the batched twin of `policy_class` (that class only, not its
    subclasses); registering a class again replaces its twin."""
    if not (isinstance(policy_class, type) and issubclass(policy_class, Policy)):
        raise config_error("policy_class", policy_class, "a subclass of policies.base.Policy")
    if not callable(build):
        raise config_error("build", build, "a callable: policies -> a BatchedPolicy")
    _BATCHED[policy_class] = build


def batched(policies: Sequence[Policy]) -> BatchedPolicy:
    """The registered twin of the replicates' class, playing `policies`."""
    kind = type(policies[0])
    if kind not in _BATCHED:
        raise config_error("policies", kind.__name__,
                           "policies of a class with a registered batched twin "
                           "(runtime.lockstep.register_batched)")
    return _BATCHED[kind](policies)


def supports_lockstep(policy: object) -> bool:
    """True when `policy`'s class has a batched twin that plays its configuration."""
    return type(policy) in _BATCHED and policy.lockstep_ready


def can_lockstep(policies: Sequence[object], envs: Sequence[object]) -> bool:
    """True when `play_lockstep` can play these replicates: policies of one class with a
    lockstep version, worlds that stack (`envs.lockstep.stackable`)."""
    return (bool(policies) and all(supports_lockstep(p) for p in policies)
            and all(type(p) is type(policies[0]) for p in policies) and stackable(envs))


def run_replicates(policies: Sequence[Policy], envs: Sequence[Any], horizon: int,
                   seeds: Sequence[int | np.random.SeedSequence], **options: Any
                   ) -> list[RunResult]:
    """The runs of replicates r: in lockstep when `can_lockstep`, else one after the other
    with `run` (the same results either way)."""
    if can_lockstep(policies, envs):
        return run_lockstep(policies, envs, horizon, seeds, **options)
    return [run(p, e, horizon, s, **options) for p, e, s in zip(policies, envs, seeds,
                                                                strict=True)]


def run_lockstep(
    policies: Sequence[Policy],
    envs: Sequence[Any],
    horizon: int,
    seeds: Sequence[int | np.random.SeedSequence],
    **options: Any,
) -> list[RunResult]:
    """Play replicate r with the "rounds" and "policy" streams of seeds[r]; `options`
    as for `play_lockstep`."""
    streams = [seed_streams(seed) for seed in seeds]
    return play_lockstep(
        policies, envs, horizon, rngs=[s["policy"] for s in streams],
        rounds_rngs=[s["rounds"] for s in streams], seeds=[seed_int(s) for s in seeds],
        **options)


def play_lockstep(
    policies: Sequence[Policy],
    envs: Sequence[Any],
    horizon: int,
    *,
    rngs: Sequence[np.random.Generator],
    rounds_rngs: Sequence[np.random.Generator],
    seeds: Sequence[int | None] | None = None,
    cluster_every: int | None = None,
    algorithm: str | None = None,
    params: dict[str, Any] | None = None,
) -> list[RunResult]:
    """The `RunResult`s of replicates r = 0..R-1: policies[r] on envs[r] with the
    policy generator rngs[r] and the round generator rounds_rngs[r] (see `play`)."""
    horizon = check_dim("horizon", horizon)
    if not policies or not all(supports_lockstep(p) for p in policies):
        raise config_error("policies", [type(p).__name__ for p in policies],
                           "policies of a class with a batched twin that plays their "
                           "configuration (runtime.lockstep.register_batched)")
    n = len(policies)
    if not len(envs) == len(rngs) == n or (seeds is not None and len(seeds) != n):
        raise config_error("replicates", (n, len(envs), len(rngs)),
                           "as many worlds, generators and seeds as policies")
    if not all(isinstance(rng, np.random.Generator) for rng in rngs):
        raise config_error("rngs", rngs, "numpy.random.Generator objects")
    rounds = StackedRounds(envs)
    twin = batched(policies)
    watching = [watchers(p, horizon, cluster_every) for p in policies]
    rounds.reset(rounds_rngs)
    states = [RunState(p, env, horizon) for p, env in zip(policies, envs, strict=True)]
    for policy, env, rng, state, mine in zip(policies, envs, rngs, states, watching,
                                             strict=True):
        policy.start(env, horizon, rng)
        for observer in mine:
            observer.start(state)
    regret = np.empty((horizon, n))  # round-major: a round's values are contiguous
    reward = np.empty((horizon, n))
    started = time.perf_counter()
    try:
        _play(twin, rounds, watching, states, horizon, rngs, regret, reward)
    finally:
        rounds.release()
    twin.finish()
    share = (time.perf_counter() - started) / n  # each replicate's share of the pass
    results = []
    for r, (state, mine) in enumerate(zip(states, watching, strict=True)):
        result = build_result(state, mine, regret[:, r].copy(), reward[:, r].copy(), share,
                              algorithm, params, None if seeds is None else seeds[r])
        result.timings["lockstep_replicates"] = n
        results.append(result)
    return results


def _play(batched, rounds, watching, states, horizon, rngs, regret, reward) -> None:
    """Every round of every replicate, block by block, the observers at their stops."""
    t, block_end, block = 0, 0, {}
    while t < horizon:
        if t == block_end:
            block = rounds.block(t, batched.check_items)
            block_end = t + rounds.size
        stop = min(horizon, block_end, *(
            s for mine in watching for obs in mine
            if (s := obs.next_stop(t)) is not None))
        _play_rows(batched, rounds, block, t, stop, block_end - rounds.size, rngs,
                   regret, reward)
        t = stop
        for state, mine in zip(states, watching, strict=True):
            for observer in mine:
                observer.after_step(state, t)


def waves(users: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (replicate, row) pairs of users (R, W) in waves: wave k holds, for every
    replicate, the rounds that are the (k+1)-th arrival of their user in the window.

    A round depends only on the earlier rounds of its user in its replicate (when the
    policy `plays_waves`), all in earlier waves; within a wave, each (replicate, user)
    appears once.  Returns one (replicates, rows) pair of arrays per wave.
    """
    n_rep, width = users.shape
    key = (np.arange(n_rep)[:, None] * (int(users.max()) + 1) + users).ravel()
    order = np.argsort(key, kind="stable")  # by (replicate, user), then by round
    new_group = np.empty(key.size, dtype=bool)
    new_group[0] = True
    np.not_equal(key[order][1:], key[order][:-1], out=new_group[1:])
    position = np.arange(key.size)
    level = np.empty(key.size, dtype=np.intp)
    level[order] = position - np.maximum.accumulate(np.where(new_group, position, 0))
    by_wave = np.argsort(level, kind="stable")
    ends = np.cumsum(np.bincount(level))
    return [(by_wave[a:b] // width, by_wave[a:b] % width)
            for a, b in zip(np.r_[0, ends[:-1]], ends, strict=True)]


def _play_waves(batched, rounds, block, schedule, start, regret, reward) -> None:
    """The rounds of `schedule` (`waves`, rows counted from round `start`), wave by wave."""
    users, items = block["users"], block["items"]
    for reps, rows in schedule:
        x = items[reps, rows]
        actions = batched.select_pairs(x, reps, users[reps, rows])
        won, lost = rounds.pair_outcomes(reps, rows, actions)
        reward[rows + start, reps] = won
        regret[rows + start, reps] = lost
        batched.update_pairs(x, actions, won)


def _play_rows(batched, rounds, block, t, stop, start, rngs, regret, reward) -> None:
    """Rounds t .. stop - 1 of every replicate (all within the block starting at `start`)."""
    if batched.plays_waves and stop - t > 1:
        schedule = waves(block["users"][:, t - start:stop - start])
        if len(schedule) < stop - t:  # else one round a wave, as below
            for _, rows in schedule:
                rows += t - start
            _play_waves(batched, rounds, block, schedule, start, regret, reward)
            return
    users, items = block["users"], block["items"]
    select, update, outcomes = batched.select, batched.update, rounds.outcomes
    for s in range(t, stop):
        i = s - start
        x, u = items[:, i], users[:, i]
        actions = select(x, u, s, rngs)
        won = reward[s]
        outcomes(i, actions, won, regret[s])
        update(x, u, actions, won, s)


for _policy, _twin in ((LinUCB, BatchedLinUCB), (LinTS, BatchedLinTS), (CLUB, BatchedCLUB),
                       (SCLUB, BatchedSCLUB)):
    register_batched(_policy, _twin)
