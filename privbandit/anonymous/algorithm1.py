"""Algorithm 1 of seed 004: one BaSE per user, batches served by C-anonymous decompositions.

Every user runs BaSE (`batched_elimination.BatchedElimination`) with horizon
T' = T / (alpha (2C + 2)) and B batches on a shared static grid.  In batch b < B
the users' active sets A_{i,b} and the batch length D_b form a batched graph;
if it is not U-batched the algorithm aborts (an optimal arm was eliminated: the
paper's abort, after which users commit to their current leaders).  Otherwise a
decomposition (greedy, randomized or LP) gives assignments, each played for 2C + 2
rounds through the feedback-eliciting sub-algorithm; users left free by a
pattern play an arm of their active set: a random one by default (fill="random",
which keeps their samples spread), their current leader with fill="leader".
Each assignment is played before its rounds are elicited: the environment's
aggregator releases only rounds that were played, once each.  The estimates go
to each user's BaSE, which eliminates arms.  In the last batch (Gao et al.'s BaSE
commits) every user plays its empirically best arm until T; no feedback is asked
for, so nothing is released.

Privacy guarantee
-----------------
Observations are C-anonymous (seed 004, §2.1): every number the learner sees is
a sum of the rewards of >= C users on one arm in one round
(`privbandit.mechanisms.anonymous.KAnonymousAggregator`).  Not differential privacy: the
elicitation differences sums by design.  With the environment's Laplace option,
each round's group sums are epsilon-DP for one user's reward in that round
(record level, L1 sensitivity hi - lo of rewards clipped to [lo, hi]); a user
grouped in r rounds spends r * epsilon (basic composition), which the run's
user-level ledger reports.  Source: Esfandiari, Mirrokni, Schneider, "Anonymous
bandits for multi-user systems", Algorithm 1, Theorem 1; BaSE: Gao et al. 2019.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from privbandit.accounting.validation import check_count, check_positive

from ..envs.anonymous import AnonymousBanditEnv
from ..errors import config_error
from .batched_elimination import BatchedElimination
from .decompositions import (
    DECOMPOSITIONS,
    is_u_batched,
    random_active_arms,
    verify_decomposition,
)
from .errors import HorizonTooShortError, assumption_error
from .grids import GRIDS, default_batches, make_grid
from .runtime import (
    ElicitingProtocol,
    Elicitor,
    Timeline,
    check_env,
    estimate_variance,
    private_ledger,
)

FILLS = ("random", "leader")


def approximation_ratio(method: str, n_arms: int, threshold: int, cluster_size: int) -> int:
    """alpha(C, U) used for T': K for greedy; max(1, ceil(K (C + 1) / U)) otherwise (§3.4)."""
    if method == "greedy":
        return n_arms
    return max(1, math.ceil(n_arms * (threshold + 1) / cluster_size))


@dataclass(frozen=True)
class AnonymousBaSE:
    """Algorithm 1 for N users, K arms, anonymity C, user-cluster bound U, horizon T.

    decomposition: "greedy", "randomized" or "lp"; grid: "minimax" or "geometric";
    batches: B (default ceil(log2 log2 T), at least 2); gamma: BaSE's elimination
    constant, applied to the estimates' variance proxy (see `batched_elimination`);
    fill: what users a pattern leaves free play, "random" (a uniformly random arm of
    their active set, the default) or "leader" (their empirically best active arm).
    """

    n_users: int
    n_arms: int
    threshold: int
    cluster_size: int
    horizon: int
    decomposition: str = "lp"
    grid: str = "minimax"
    batches: int | None = None
    gamma: float = 0.25
    fill: str = "random"

    def __post_init__(self) -> None:
        c = _check_threshold(self.threshold)
        n = check_count("n_users", self.n_users)
        k = check_count("n_arms", self.n_arms)
        if n <= c:
            raise assumption_error("Algorithm 1 assumes N > C", "n_users", n, f"> C = {c}")
        u = check_count("cluster_size", self.cluster_size)
        if u < c + 1:
            raise assumption_error(
                "user-cluster assumption U >= C + 1 (each arm optimal for > C users)",
                "cluster_size", u, f">= C + 1 = {c + 1}",
            )
        if u * k > n:
            raise assumption_error(
                "user-cluster assumption (each of K arms optimal for U distinct users)",
                "cluster_size", u, f"<= N / K = {n // k}",
            )
        if self.decomposition not in DECOMPOSITIONS:
            raise config_error(
                "decomposition", self.decomposition, f"one of {tuple(DECOMPOSITIONS)}"
            )
        if self.grid not in GRIDS:
            raise config_error("grid", self.grid, f"one of {GRIDS}")
        horizon = check_count("horizon", self.horizon, minimum=2)
        batches = default_batches(horizon) if self.batches is None else self.batches
        object.__setattr__(self, "batches", check_count("batches", batches, minimum=2))
        check_positive("gamma", self.gamma)
        if self.fill not in FILLS:
            raise config_error("fill", self.fill, f"one of {FILLS}")
        self._check_first_batch()

    @property
    def alpha(self) -> int:
        return approximation_ratio(self.decomposition, self.n_arms, self.threshold,
                                   self.cluster_size)

    @property
    def base_horizon(self) -> int:
        """T' = floor(T / (alpha (2C + 2))): samples per user over all of BaSE's batches."""
        return self.horizon // (self.alpha * (2 * self.threshold + 2))

    def base_grid(self) -> np.ndarray:
        """BaSE's batch end points over T' (samples per user), (B,)."""
        return make_grid(self.grid, self.base_horizon, self.batches)

    def _check_first_batch(self) -> None:
        if not _first_batch_fits(self.grid, self.base_horizon, self.batches, self.n_arms):
            per = self.alpha * (2 * self.threshold + 2)
            t_min = next(
                t for t in _candidates(self.n_arms, self.batches)
                if _first_batch_fits(self.grid, t, self.batches, self.n_arms)
            )
            raise HorizonTooShortError(
                f"horizon T={self.horizon} too short for one batch: BaSE's horizon "
                f"T' = T / (alpha (2C + 2)) = {self.base_horizon} (alpha={self.alpha}) must give "
                f"each user one sample of each of K={self.n_arms} arms in the first of "
                f"{self.batches} {self.grid} batches; need T of about {per * t_min} or more"
            )

    def params(self) -> dict:
        return {
            "n_users": self.n_users, "n_arms": self.n_arms, "threshold": self.threshold,
            "cluster_size": self.cluster_size, "horizon": self.horizon,
            "decomposition": self.decomposition, "grid": self.grid, "batches": self.batches,
            "gamma": self.gamma, "fill": self.fill, "alpha": self.alpha,
            "base_horizon": self.base_horizon,
        }

    def protocol(self, env: AnonymousBanditEnv | None = None) -> BaSEProtocol:
        """This algorithm as a protocol of the run loop (`privbandit.runtime.play_algorithm`;
        all randomness from the run's `rng`); `env` is checked when the run starts."""
        return BaSEProtocol(self)


class BaSEProtocol(ElicitingProtocol):
    """Algorithm 1 as a protocol of the run loop: one step per batch, then the commitment.

    After each batch the loop measures the detection error of the users'
    leaders (`AnonymousBanditEnv.detection_error`).
    """

    def __init__(self, algorithm: AnonymousBaSE) -> None:
        self.alg = algorithm
        self.name = f"anonymous-base-{algorithm.decomposition}"

    def start(self, env: AnonymousBanditEnv, horizon: int, rng: np.random.Generator) -> None:
        super().start(env, horizon, rng)
        alg = self.alg
        check_env(env, alg.n_users, alg.n_arms, alg.threshold)
        self._decompose_rng, elicit_rng = rng.spawn(2)
        self.base = BatchedElimination(
            alg.n_users, alg.n_arms, alg.base_horizon, alg.batches, grid=alg.grid,
            gamma=alg.gamma, variance=estimate_variance(env),
        )
        self._ledger = private_ledger(env, alg.horizon)
        self.elicitor = Elicitor(env, elicit_rng, self._ledger)
        self.timeline = Timeline(alg.horizon)
        self.diag = {"sizes": [], "alphas": [], "topped_up": [], "aborted_batch": None}
        self._spent = {"decompose": 0.0, "elicit": 0.0}
        self._exploring = True

    def step(self, env: AnonymousBanditEnv, t: int, rng: np.random.Generator
             ) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """The next batch of elicitations, or every user's leader to the horizon."""
        timeline = self.timeline
        while self._exploring and self.base.exploring and timeline.remaining > 0:
            self._batch(env)
            runs = timeline.take_runs()
            if runs:
                return runs
        self._exploring = False
        timeline.play(env, self.base.leader()[None, :], np.array([timeline.remaining]))
        return timeline.take_runs()

    def _batch(self, env: AnonymousBanditEnv) -> None:
        alg, base, rng = self.alg, self.base, self._decompose_rng
        active = base.active.copy()
        if not is_u_batched(active, alg.cluster_size):
            self.diag["aborted_batch"] = base.batch
            self._exploring = False
            return
        t0 = time.perf_counter()
        dec = DECOMPOSITIONS[alg.decomposition](active, base.demand(), alg.threshold, rng)
        verify_decomposition(dec, active, base.demand(), alg.threshold)
        fill = (base.leader() if alg.fill == "leader"
                else random_active_arms(active, len(dec.patterns), rng))
        dec = dec.filled(active, fill)
        t1 = time.perf_counter()
        self.diag["sizes"].append(dec.size)
        self.diag["alphas"].append(dec.details.get("alpha"))
        self.diag["topped_up"].append(dec.details.get("topped_up", 0))
        sums, counts = self._elicit_batch(dec, env)
        self._spent["decompose"] += t1 - t0
        self._spent["elicit"] += time.perf_counter() - t1
        base.record(sums, counts)
        base.end_batch()

    def _elicit_batch(self, dec, env: AnonymousBanditEnv) -> tuple[np.ndarray, np.ndarray]:
        """Play every assignment of `dec` (2C + 2 rounds each) while the horizon lasts."""
        elicitor, timeline = self.elicitor, self.timeline
        sums = np.zeros((self.alg.n_users, self.alg.n_arms))
        counts = np.zeros((self.alg.n_users, self.alg.n_arms), dtype=np.int64)
        fits = min(dec.size, timeline.remaining // elicitor.rounds)
        rounds = np.full(fits, elicitor.rounds)
        if fits < dec.size:  # the horizon ends inside this batch: last partial block
            rounds = np.r_[rounds, timeline.remaining - fits * elicitor.rounds]
        # played first: the aggregator releases only rounds that were played
        timeline.play(env, dec.assignments()[: rounds.size], rounds)
        for assignment in dec.assignments()[:fits]:
            elicitor.elicit(assignment, sums, counts)
        return sums, counts

    # -- reporting ----------------------------------------------------------------------
    def cluster_labels(self) -> np.ndarray:
        """Each user's leader: the arm it currently believes optimal."""
        return self.base.leader()

    def params(self) -> dict:
        return {**self.alg.params(), "diagnostics": self.diag}

    def timings(self) -> dict[str, float]:
        return dict(self._spent)


def _first_batch_fits(grid: str, base_horizon: int, batches: int, n_arms: int) -> bool:
    """Does the grid over T' exist with a first batch of at least K samples?"""
    if base_horizon < batches:
        return False
    try:
        return bool(make_grid(grid, base_horizon, batches)[0] >= n_arms)
    except HorizonTooShortError:
        return False


def _candidates(n_arms: int, batches: int):
    """T' = max(K, B), max(K, B) + 1, ... (a grid's first point grows with T')."""
    t = max(n_arms, batches)
    while True:
        yield t
        t = t + 1 if t < 64 else int(t * 1.01) + 1


def _check_threshold(threshold: object) -> int:
    if isinstance(threshold, (int, np.integer)) and not isinstance(threshold, bool) and (
        threshold < 1
    ):
        raise assumption_error("anonymity parameter C >= 1", "threshold", threshold,
                               "an integer >= 1")
    return check_count("threshold", threshold)
