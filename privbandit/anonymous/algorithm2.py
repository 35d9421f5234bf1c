"""Algorithm 2 of seed 004: explore-then-commit without a user-cluster assumption (N > C).

Exploration: ceil(T_exp / (2C + 2)) phases with
T_exp = c C^(2/3) K^(1/3) T^(2/3) (log N K T)^(1/3) (the paper's c = 10).  In
phase r every user is put on arm r mod K; the feedback-eliciting sub-algorithm
splits the N users into groups of C + 1 .. 2C + 1 and gives each user an unbiased
estimate of its mean on that arm.  Then every user commits to its arm of best
average estimate for the remaining rounds.  Regret O~(N C^(2/3) K^(1/3) T^(2/3))
(Theorem 2).  The paper's c = 10 explores for the whole horizon unless
T > (10 C^(2/3) K^(1/3) (log NKT)^(1/3))^3 (about 2.4e6 at C = K = 5): studies at
smaller T set `explore_constant` lower and say so.

Privacy guarantee
-----------------
As Algorithm 1 (`algorithm1`): C-anonymous observations, not differential
privacy; with the environment's Laplace option each round is epsilon-DP for one
user's reward in that round (record level), and the user-level ledger reports
r * epsilon over the r rounds released.  Source: Esfandiari, Mirrokni, Schneider,
Algorithm 2, Theorem 2.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from privbandit.accounting.validation import check_count, check_positive

from ..envs.anonymous import AnonymousBanditEnv
from ..result import RunResult
from .algorithm1 import _check_threshold
from .errors import HorizonTooShortError, assumption_error
from .runtime import Elicitor, Timeline, check_env, privacy_statement, private_ledger


@dataclass(frozen=True)
class AnonymousExploreThenCommit:
    """Algorithm 2 for N users, K arms, anonymity C, horizon T (needs only N > C)."""

    n_users: int
    n_arms: int
    threshold: int
    horizon: int
    explore_constant: float = 10.0

    def __post_init__(self) -> None:
        c = _check_threshold(self.threshold)
        n = check_count("n_users", self.n_users)
        check_count("n_arms", self.n_arms)
        if n <= c:
            raise assumption_error("Algorithm 2 assumes N > C (Theorem 5: N = C can force "
                                   "linear regret)", "n_users", n, f"> C = {c}")
        check_count("horizon", self.horizon)
        check_positive("explore_constant", self.explore_constant)
        if self.horizon < 2 * c + 2:
            raise HorizonTooShortError(
                f"horizon T={self.horizon} too short for one batch: one elicitation "
                f"takes 2C + 2 = {2 * c + 2} rounds"
            )

    @property
    def exploration_rounds(self) -> int:
        """T_exp (before rounding up to whole phases and capping at T)."""
        c, k, n, t = self.threshold, self.n_arms, self.n_users, self.horizon
        return math.ceil(
            self.explore_constant * c ** (2 / 3) * k ** (1 / 3) * t ** (2 / 3)
            * math.log(n * k * t) ** (1 / 3)
        )

    @property
    def phases(self) -> int:
        """Exploration phases of 2C + 2 rounds that fit in T."""
        per = 2 * self.threshold + 2
        return min(-(-self.exploration_rounds // per), self.horizon // per)

    def params(self) -> dict:
        return {
            "n_users": self.n_users, "n_arms": self.n_arms, "threshold": self.threshold,
            "horizon": self.horizon, "explore_constant": self.explore_constant,
            "exploration_rounds": self.exploration_rounds, "phases": self.phases,
        }

    def run(self, env: AnonymousBanditEnv, rng: np.random.Generator, seed: int | None = None
            ) -> RunResult:
        """Play T rounds on `env`; all randomness from `rng`."""
        env = check_env(env, self.n_users, self.n_arms, self.threshold)
        started = time.perf_counter()
        ledger = private_ledger(env, self.horizon)
        elicitor = Elicitor(env, rng.spawn(1)[0], ledger)
        timeline = Timeline(self.horizon)
        sums = np.zeros((self.n_users, self.n_arms))
        counts = np.zeros((self.n_users, self.n_arms), dtype=np.int64)
        arms = np.arange(1, self.phases + 1) % self.n_arms  # phase r plays arm r mod K
        plays = np.repeat(arms[:, None], self.n_users, axis=1)
        for assignment in plays:
            elicitor.elicit(assignment, sums, counts)
        timeline.play(env, plays, np.full(self.phases, elicitor.rounds))
        explored = time.perf_counter() - started
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, sums / np.maximum(counts, 1), -np.inf)
        committed = np.argmax(means, axis=1)
        timeline.play(env, committed[None, :], np.array([timeline.remaining]))
        regret, reward = timeline.arrays()
        return RunResult(
            algorithm="anonymous-etc", params=self.params(), regret=regret, reward=reward,
            comm=elicitor.comm.summary(), ledgers=[] if ledger is None else [ledger.summary()],
            cluster_error=np.array([env.detection_error(committed)]),
            cluster_error_rounds=np.array([self.horizon]),
            privacy=privacy_statement(env, ledger),
            timings={"explore": explored, "total": time.perf_counter() - started},
            seed=seed, environment=env.describe(),
        )
