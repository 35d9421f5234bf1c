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
from .algorithm1 import _check_threshold
from .errors import HorizonTooShortError, assumption_error
from .runtime import ElicitingProtocol, Elicitor, Timeline, check_env, private_ledger


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

    def protocol(self, env: AnonymousBanditEnv | None = None) -> ExploreThenCommitProtocol:
        """This algorithm as a protocol of the run loop (`privbandit.runtime.play_algorithm`;
        all randomness from the run's `rng`); `env` is checked when the run starts."""
        return ExploreThenCommitProtocol(self)


class ExploreThenCommitProtocol(ElicitingProtocol):
    """Algorithm 2 as a protocol of the run loop: the exploration phases, then the commitment.

    Users have no leader until they commit, so the detection error is measured
    once, after the commitment.
    """

    name = "anonymous-etc"

    def __init__(self, algorithm: AnonymousExploreThenCommit) -> None:
        self.alg = algorithm

    def start(self, env: AnonymousBanditEnv, horizon: int, rng: np.random.Generator) -> None:
        super().start(env, horizon, rng)
        alg = self.alg
        check_env(env, alg.n_users, alg.n_arms, alg.threshold)
        self._ledger = private_ledger(env, alg.horizon)
        self.elicitor = Elicitor(env, rng.spawn(1)[0], self._ledger)
        self.timeline = Timeline(alg.horizon)
        self.committed: np.ndarray | None = None
        self._explored = 0.0

    def step(self, env: AnonymousBanditEnv, t: int, rng: np.random.Generator
             ) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """Every exploration phase at once, then every user's best estimate to the horizon."""
        if t == 0:
            runs = self._explore(env)
            if runs:
                return runs
        timeline = self.timeline
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(self._counts > 0, self._sums / np.maximum(self._counts, 1), -np.inf)
        self.committed = np.argmax(means, axis=1)
        timeline.play(env, self.committed[None, :], np.array([timeline.remaining]))
        return timeline.take_runs()

    def _explore(self, env: AnonymousBanditEnv) -> list[tuple[np.ndarray, np.ndarray, int]]:
        alg, started = self.alg, time.perf_counter()
        self._sums = np.zeros((alg.n_users, alg.n_arms))
        self._counts = np.zeros((alg.n_users, alg.n_arms), dtype=np.int64)
        arms = np.arange(1, alg.phases + 1) % alg.n_arms  # phase r plays arm r mod K
        plays = np.repeat(arms[:, None], alg.n_users, axis=1)
        self.timeline.play(env, plays, np.full(alg.phases, self.elicitor.rounds))
        for assignment in plays:  # played first: only played rounds are released
            self.elicitor.elicit(assignment, self._sums, self._counts)
        self._explored = time.perf_counter() - started
        return self.timeline.take_runs()

    # -- reporting ----------------------------------------------------------------------
    def cluster_labels(self) -> np.ndarray | None:
        """Each user's committed arm (None while exploring)."""
        return self.committed

    def params(self) -> dict:
        return self.alg.params()

    def timings(self) -> dict[str, float]:
        return {"explore": self._explored}
