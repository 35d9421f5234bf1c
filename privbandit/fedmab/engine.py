"""The epoch-level protocol shared by CDP-, DDP- and HDP-MAB.

Within an epoch every agent pulls each active arm n_r times round-robin (the
active arms in increasing order, cycled n_r times), so the epoch is simulated
at once: one binomial reward sum per agent and arm, one batched Laplace
release, one exchange.  Regret follows from the arms played, which are known
exactly without per-round work: a run is a short list of segments, each a
block of per-round arm choices (L, M) repeated `reps` times, handed to the
run loop as runs of per-round regret and reward (`protocol.StepProtocol`).

`EpochProtocol` is played by the one run loop (`privbandit.runtime.play`, or a
registry entry's run; `FedMABRun.of(protocol, result)` adds what the protocol
kept): each of
its steps is one epoch (exploration, release, exchange and the local
exploitation while the exchange lasts) and returns that epoch's per-round
regret and reward; the last step plays the committed arm to the horizon.
What the exchange computes from the releases (the exchanged means, the arms
left active) is published (`publication`: public values an end-to-end audit
compares).
Per epoch the Python work is O(M) (the M ledger charges); everything else is
vectorised over agents and arms.

Randomness: the run's generator is split with `spawn` into independent
streams for rewards, Laplace noise and the protocol (partial participation),
so a round-level re-implementation that makes the same calls in the same
order reproduces the run bit for bit.  When the run hands the world a round
stream (the runner always does: the seed's "rounds" stream), the rewards are
drawn from it instead: they are the environment's, fixed by the seed whatever
the algorithm's coins, as a black-box audit needs.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.mechanisms.publication import Publication

from ..comm import CommLog
from ..envs.multi_agent_mab import MultiAgentBernoulliMAB
from ..errors import config_error
from ..private.plan import ReleasePlan
from ..protocol import StepProtocol
from ..result import RunResult
from .privacy import UNIT, AgentLedgers, charge_all, epoch_plan
from .schedule import EpochSchedule, warn_below_bound


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

    @classmethod
    def of(cls, protocol: EpochProtocol, result: RunResult) -> FedMABRun:
        """The run of `protocol` once the run loop has played it and returned `result`."""
        if not isinstance(protocol, EpochProtocol) or not hasattr(protocol, "state"):
            raise config_error("protocol", protocol, "an EpochProtocol the run loop has played")
        state = protocol.state
        return cls(result, state.pulls, tuple(protocol.records), state.committed,
                   state.segments)

    def round_arms(self) -> np.ndarray:
        """(T, M) the arm every agent played in every round (small runs only)."""
        return np.concatenate([np.tile(s.arms, (s.reps, 1)) for s in self.segments])


class EpochProtocol(StepProtocol):
    """The epochs of a seed-002 algorithm on `network` (see the module docstring)."""

    def __init__(self, network, *, epsilon: float, horizon: int, rounds: int | None,
                 sampler, name: str, params: dict[str, Any]) -> None:
        self.network, self.epsilon, self.horizon = network, epsilon, horizon
        self.rounds, self.sampler, self.name, self._params = rounds, sampler, name, params

    def start(self, env: MultiAgentBernoulliMAB, horizon: int, rng: np.random.Generator
              ) -> None:
        super().start(env, horizon, rng)
        if not isinstance(env, MultiAgentBernoulliMAB):
            raise config_error("env", env, "a MultiAgentBernoulliMAB")
        if env.n_users != self.network.n_users:
            raise config_error(
                "env", env, f"an environment with {self.network.n_users} agents (the network's)"
            )
        m, k = env.n_users, env.n_arms
        warn_below_bound(self.rounds, horizon, m)
        self.schedule = EpochSchedule.build(self.epsilon, k, horizon, self.network.n_uploaders,
                                            self.rounds)
        self._reward_rng, self._noise_rng, self._protocol_rng = rng.spawn(3)
        if env.round_stream() is not None:  # the rewards are the environment's (the runner's
            self._reward_rng = env.round_stream()  # "rounds" stream), not the protocol's coins
        self.state = _State(env, horizon)
        self.plan = epoch_plan(self.epsilon, self.sampler, horizon)
        self._ledgers = [AgentLedgers(i, self.plan) for i in range(m)]
        for ledger in self._ledgers:
            ledger.declare(self.plan.statement(
                Relation.AGENT, ledger.unit, f"{self.epsilon:g}-DP (pure) for one reward of "
                "the agent"))
        self._log = CommLog()
        self.publication = Publication("federation")  # exchanged means, active arms
        self._ybar = np.zeros((m, k))  # running private means (eq. 6)
        self._active = np.arange(k)
        self.records: list[EpochRecord] = []
        self._prev, self._best, self._epoch = 0, 0, 0
        self._exploring = True

    def step(self, env: MultiAgentBernoulliMAB, t: int, rng: np.random.Generator
             ) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """One epoch, or the commitment to the horizon once exploration is over."""
        state = self.state
        first = len(state.segments)
        if self._exploring:
            self._epoch_step(env)
        else:  # one arm left, or the last epoch spent: play the empirical best to T
            active = self._active
            state.commit(int(active[0]) if active.size == 1 else self._best)
        return state.runs(first)

    def _epoch_step(self, env: MultiAgentBernoulliMAB) -> None:
        state, active, r = self.state, self._active, self._epoch + 1
        self._epoch = r
        size = self.schedule.sizes[r - 1]
        n = size - self._prev
        if not state.explore(active, n):
            self._exploring = False  # the horizon ended inside this epoch: nothing is released
            return
        sums = env.draw_sums(active, n, self._reward_rng)
        mechanism = self.plan.laplace_means(n)  # the epoch means of n rewards in [0, 1]
        charge_all(self._ledgers, r, mechanism.event)  # before the release
        yhat = mechanism.release_means(sums / n, self._noise_rng)
        ybar = self._ybar
        ybar[:, active] = (self._prev / size) * ybar[:, active] + (n / size) * yhat
        self._prev = size
        if state.done:
            self._exploring = False  # no time left to use what would be exchanged
            return
        at = state.t  # the round the epoch's exchange starts: it labels its messages
        ex = self.network.exchange(ybar[:, active], at, self._protocol_rng, self._log)
        # while the exchange lasts each agent plays the best arm of its own running private
        # means: released values only, as every pull must be (the interactive statement)
        local_best = active[np.argmax(ybar[:, active], axis=1)]
        state.play(local_best, ex.delay)
        radius = self.schedule.radii[r - 1]
        keep = ex.mean.max() - ex.mean < 2.0 * radius
        self.records.append(EpochRecord(r, size, n, active.size, radius, ex.delay, ex.cost,
                                        int(active.size - keep.sum())))
        self._best = int(active[np.argmax(ex.mean)])
        self._active = active[keep]
        self.publication.value("exchanged means", ex.mean)
        self.publication.value("active arms", self._active)
        self.network.announce(self._active, at, self._log)
        if self._active.size == 1 or r == self.rounds or r == len(self.schedule.sizes):
            self._exploring = False

    # -- reporting ----------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        return dict(self._params)

    @property
    def comm(self) -> CommLog:
        return self._log

    def comm_details(self) -> dict[str, Any]:
        return {
            **self.network.describe(),
            "cost": float(sum(rec.cost for rec in self.records)),
            "communication_rounds": len(self.records),
            "epochs": [vars(rec) for rec in self.records],
        }

    def ledgers(self) -> list[AgentLedgers]:
        return list(self._ledgers)

    def privacy(self) -> PrivacyStatement:
        return _privacy(self.plan, self._ledgers)


class _State:
    """The clock, the pull counts and the segments of arms played."""

    def __init__(self, env: MultiAgentBernoulliMAB, horizon: int) -> None:
        self.env, self.horizon, self.t = env, horizon, 0
        self.pulls = np.zeros((env.n_users, env.n_arms), dtype=np.int64)
        self.segments: list[Segment] = []
        self.committed: int | None = None

    @property
    def done(self) -> bool:
        return self.t >= self.horizon

    def explore(self, active: np.ndarray, n: int) -> bool:
        """Round-robin n passes over `active`; False if the horizon cuts the epoch short."""
        m, a = self.env.n_users, active.size
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
        self._add(np.full((1, self.env.n_users), arm), self.horizon - self.t)

    def _add(self, arms: np.ndarray, reps: int) -> None:
        if reps <= 0 or arms.shape[0] == 0:
            return
        self.segments.append(Segment(arms, reps))
        np.add.at(self.pulls, (np.arange(self.env.n_users), arms), reps)
        self.t += arms.shape[0] * reps

    def runs(self, first: int) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """The segments from index `first` on as runs of rounds: (per-round regret,
        per-round expected reward, repetitions)."""
        env = self.env
        return [(env.regret(s.arms), env.expected_reward(s.arms), s.reps)
                for s in self.segments[first:]]



def _privacy(plan: ReleasePlan, ledgers: list[AgentLedgers]) -> PrivacyStatement:
    spent = [led.epsilon_spent() for led in ledgers]
    # Interactive: which arms an epoch pulls follows the active set, computed from released
    # means only, so one changed reward moves one epoch's release (audited end to end).
    return plan.statement(
        Relation.INTERACTIVE, UNIT,
        summary=f"{plan.epsilon:g}-DP for each agent (pure) under the interactive relation: "
                "Laplace epoch means, parallel composition over disjoint epochs; the arms "
                "pulled follow released means only, uploads are post-processing",
        details={
            "mechanism": "Laplace epoch means, scale 1/(epsilon n_r), L1 sensitivity 1/n_r",
            "per_agent_epsilon": spent, "max_agent_epsilon": max(spent, default=0.0),
            "source": "Li & Song, seed 002, Alg. 1 line 7 and Theorem 1",
        })
