"""The epoch-level simulator shared by CDP-, DDP- and HDP-MAB.

Within an epoch every agent pulls each active arm n_r times round-robin (the
active arms in increasing order, cycled n_r times), so the epoch is simulated
at once: one binomial reward sum per agent and arm, one batched Laplace
release, one exchange.  Regret follows from the arms played, which are known
exactly without per-round work: a run is a short list of segments, each a
block of per-round arm choices (L, M) repeated `reps` times; the per-round
regret and reward curves are rebuilt from them with `np.tile`.

Per epoch the Python work is O(M) (the M ledger charges); everything else is
vectorised over agents and arms.

Randomness: the run's generator is split with `spawn` into independent
streams for rewards, Laplace noise and the protocol (partial participation),
so a round-level re-implementation that makes the same calls in the same
order reproduces the run bit for bit.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privbandit.accounting.statement import PrivacyStatement, Relation

from ..comm import CommLog
from ..envs.multi_agent_mab import MultiAgentBernoulliMAB
from ..errors import config_error
from ..privacy import is_float_safe
from ..result import RunResult
from .privacy import UNIT, AgentLedgers, charge_all, epoch_mechanism
from .schedule import EpochSchedule


@dataclass(frozen=True)
class EpochRecord:
    """One completed epoch: S(r), n_r, active arms before elimination, C(r), exchange."""

    epoch: int
    size: int
    pulls: int
    active: int
    radius: float
    delay: int
    cost: float
    eliminated: int


@dataclass
class Segment:
    """`arms` (L, M): the arm of each agent in L consecutive rounds, repeated `reps` times."""

    arms: np.ndarray
    reps: int


@dataclass
class FedMABRun:
    """Everything a run produced: the `RunResult` plus what tests and studies inspect.

    pulls: (M, K) pulls per agent and arm; epochs: completed epochs;
    committed: the arm played to the horizon (None if the horizon ended first).
    """

    result: RunResult
    pulls: np.ndarray
    epochs: tuple[EpochRecord, ...]
    committed: int | None
    segments: list[Segment] = field(repr=False)

    def round_arms(self) -> np.ndarray:
        """(T, M) the arm every agent played in every round (small runs only)."""
        return np.concatenate([np.tile(s.arms, (s.reps, 1)) for s in self.segments])


def simulate(
    env: MultiAgentBernoulliMAB,
    network,
    *,
    epsilon: float,
    horizon: int,
    rounds: int | None,
    sampler,
    rng: np.random.Generator,
    algorithm: str,
    params: dict[str, Any],
) -> FedMABRun:
    """Run one seed-002 algorithm (its `network` says how means are exchanged)."""
    if not isinstance(env, MultiAgentBernoulliMAB):
        raise config_error("env", env, "a MultiAgentBernoulliMAB")
    if env.n_agents != network.n_agents:
        raise config_error(
            "env", env, f"an environment with {network.n_agents} agents (the network's)"
        )
    if not isinstance(rng, np.random.Generator):
        raise config_error("rng", rng, "a numpy.random.Generator")
    started = time.perf_counter()
    m, k = env.n_agents, env.n_arms
    schedule = EpochSchedule.build(epsilon, k, horizon, network.n_uploaders, rounds)
    reward_rng, noise_rng, protocol_rng = rng.spawn(3)
    state = _State(env, horizon)
    ledgers = [AgentLedgers(i, epsilon) for i in range(m)]
    for ledger in ledgers:
        ledger.declare(_unit_statement(epsilon, sampler, ledger.unit))
    log = CommLog()
    ybar = np.zeros((m, k))  # running private means (eq. 6)
    raw = np.zeros((m, k))  # each agent's own reward sums, for local exploitation
    active = np.arange(k)
    records: list[EpochRecord] = []
    prev, best = 0, 0
    for r, size in enumerate(schedule.sizes, start=1):
        n = size - prev
        if not state.explore(active, n):
            break  # the horizon ended inside this epoch: nothing is released
        sums = env.draw_sums(active, n, reward_rng)
        mechanism = epoch_mechanism(epsilon, n, sampler)
        charge_all(ledgers, r, mechanism.event)  # before the release
        yhat = mechanism.release_means(sums / n, noise_rng)
        ybar[:, active] = (prev / size) * ybar[:, active] + (n / size) * yhat
        raw[:, active] += sums
        prev = size
        if state.done:
            break  # no time left to use what would be exchanged
        ex = network.exchange(ybar[:, active], r, protocol_rng, log)
        local_best = active[np.argmax(raw[:, active], axis=1)]
        state.play(local_best, ex.delay)
        keep = ex.mean.max() - ex.mean < 2.0 * schedule.radii[r - 1]
        records.append(EpochRecord(r, size, n, active.size, schedule.radii[r - 1],
                                   ex.delay, ex.cost, int(active.size - keep.sum())))
        best = int(active[np.argmax(ex.mean)])
        active = active[keep]
        network.announce(active, r, log)
        if active.size == 1 or r == rounds:
            break
    if not state.done:  # one arm left, or R epochs spent: play the empirical best to T
        state.commit(int(active[0]) if active.size == 1 else best)
    regret, reward = state.curves()
    elapsed = time.perf_counter() - started
    result = RunResult(
        algorithm=algorithm,
        params=params,
        regret=regret,
        reward=reward,
        comm=_comm_summary(log, records, network),
        ledgers=[led.summary() for led in ledgers],
        privacy=_privacy(epsilon, ledgers, sampler),
        timings={"simulate": elapsed},
        environment=env.describe(),
    )
    return FedMABRun(result, state.pulls, tuple(records), state.committed, state.segments)


class _State:
    """The clock, the pull counts and the segments of arms played."""

    def __init__(self, env: MultiAgentBernoulliMAB, horizon: int) -> None:
        self.env, self.horizon, self.t = env, horizon, 0
        self.pulls = np.zeros((env.n_agents, env.n_arms), dtype=np.int64)
        self.segments: list[Segment] = []
        self.committed: int | None = None

    @property
    def done(self) -> bool:
        return self.t >= self.horizon

    def explore(self, active: np.ndarray, n: int) -> bool:
        """Round-robin n passes over `active`; False if the horizon cuts the epoch short."""
        m, a = self.env.n_agents, active.size
        block = np.ascontiguousarray(np.broadcast_to(active[:, None], (a, m)))
        left = self.horizon - self.t
        if n * a <= left:
            self._add(block, n)
            return True
        full, rest = divmod(left, a)
        self._add(block, full)
        self._add(block[:rest], 1)
        return False

    def play(self, arms: np.ndarray, slots: int) -> None:
        """Each agent i plays arms[i] for `slots` rounds (capped at the horizon)."""
        self._add(arms[None, :], min(slots, self.horizon - self.t))

    def commit(self, arm: int) -> None:
        self.committed = arm
        self._add(np.full((1, self.env.n_agents), arm), self.horizon - self.t)

    def _add(self, arms: np.ndarray, reps: int) -> None:
        if reps <= 0 or arms.shape[0] == 0:
            return
        self.segments.append(Segment(arms, reps))
        np.add.at(self.pulls, (np.arange(self.env.n_agents), arms), reps)
        self.t += arms.shape[0] * reps

    def curves(self) -> tuple[np.ndarray, np.ndarray]:
        env = self.env
        regret = [np.tile(env.regret(s.arms), s.reps) for s in self.segments]
        reward = [np.tile(env.expected_reward(s.arms), s.reps) for s in self.segments]
        return np.concatenate(regret), np.concatenate(reward)


def _comm_summary(log: CommLog, records: list[EpochRecord], network) -> dict[str, Any]:
    out = log.summary()
    out.update(network.describe())
    out["cost"] = float(sum(rec.cost for rec in records))
    out["communication_rounds"] = len(records)
    out["epochs"] = [vars(rec) for rec in records]
    return out


def _unit_statement(epsilon: float, sampler, unit: str) -> PrivacyStatement:
    return PrivacyStatement(Relation.AGENT, epsilon, 0.0, "pure-dp", is_float_safe(sampler),
                            unit=unit, summary=f"{epsilon:g}-DP (pure) for one reward of the agent")


def _privacy(epsilon: float, ledgers: list[AgentLedgers], sampler) -> PrivacyStatement:
    spent = [led.epsilon_spent() for led in ledgers]
    return PrivacyStatement(
        Relation.AGENT, epsilon, 0.0, "pure-dp", is_float_safe(sampler), unit=UNIT,
        summary=f"{epsilon:g}-DP for each agent (pure): Laplace epoch means, parallel "
                "composition over disjoint epochs, uploads are post-processing",
        details={
            "mechanism": "Laplace epoch means, scale 1/(epsilon n_r), L1 sensitivity 1/n_r",
            "per_agent_epsilon": spent, "max_agent_epsilon": max(spent, default=0.0),
            "source": "Li & Song, seed 002, Alg. 1 line 7 and Theorem 1",
        })
