"""The anonymous multi-user bandit environment of seed 004 (Esfandiari, Mirrokni, Schneider).

N users, K arms, user i's reward on arm j drawn independently each round with
mean mu_ij in [0, 1] (Bernoulli, or Gaussian with a declared standard
deviation).  Feedback is readable *only* through `aggregator`, a
`privbandit.mechanisms.anonymous.KAnonymousAggregator` built here with the hidden draw as
its `reward_source`: a query for a group under C users fails and releases
nothing, so no algorithm can read an individual reward.  The means stay private
to the environment; algorithms get the regret of what they played from
`regret`, never the means.

Round by round (`envs.base.Environment`) every user plays in every round:
`act(t, assignment)` with assignment (N,).  Per-round outcome reported by
`regret` and `expected_reward`: pseudo-regret
sum_i (max_j mu_ij - mu_{i, pi(i)}) and expected reward sum_i mu_{i, pi(i)} of an
assignment pi (every user plays in every round, grouped or not).  Realised
rewards stay inside the aggregator, which is the point of anonymity.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.validation import check_count, check_positive
from privbandit.mechanisms.anonymous import KAnonymousAggregator
from privbandit.mechanisms.samplers import Sampler

from ..errors import ShapeError, config_error
from ..privacy import DEFAULT_SAMPLER, resolve_sampler
from ..validation import real_array
from .base import ContextFreeRounds, Environment, Outcome
from .neighbours import DRAW

REWARDS = ("bernoulli", "gaussian")


class AnonymousBanditEnv(ContextFreeRounds, Environment):
    """N users x K arms with hidden means, observable only through C-anonymous group sums.

    means: (N, K) in [0, 1]; threshold: C; reward: "bernoulli" or "gaussian"
    (with `noise_sd`); laplace_epsilon: if given, every group sum gets Laplace
    noise (rewards clipped to `reward_bounds`, default (0, 1)); sampler: the
    aggregator's noise sampler (`privbandit.privacy.resolve_sampler`; default
    `DEFAULT_SAMPLER`).

    Privacy guarantee
    -----------------
    The aggregator's (`privbandit.mechanisms.anonymous.KAnonymousAggregator`): every
    release is a sum over >= C users on one arm in one round (C-anonymity, seed
    004 §2.1; not differential privacy, differencing across rounds is possible).
    With `laplace_epsilon`, each round's sums are epsilon-DP for one user's
    reward in that round (record level; L1 sensitivity hi - lo of the clipped
    rewards; pure DP; Laplace mechanism).

    Neighbours flip the `at`-th reward the aggregator draws for one user (`envs.neighbours`,
    DRAW): rewards are drawn when a group sum is released.
    """

    flip_kinds = (DRAW,)

    def __init__(
        self,
        means: np.ndarray,
        threshold: int,
        *,
        reward: str = "bernoulli",
        noise_sd: float = 1.0,
        laplace_epsilon: float | None = None,
        reward_bounds: tuple[float, float] = (0.0, 1.0),
        sampler: Sampler | str | None = DEFAULT_SAMPLER,
    ) -> None:
        means = real_array("means", means)
        if means.ndim != 2 or 0 in means.shape:
            raise ShapeError(f"means must be a non-empty (N, K) array; got shape {means.shape}")
        if not np.all((means >= 0) & (means <= 1)):
            raise config_error("means", "entries outside [0, 1]", "means in [0, 1]")
        if reward not in REWARDS:
            raise config_error("reward", reward, f"one of {REWARDS}")
        means.setflags(write=False)
        self._means = means
        self.laplace_epsilon = laplace_epsilon
        self._best = means.max(axis=1)
        self.reward = reward
        self.noise_sd = check_positive("noise_sd", noise_sd)
        self.n_users, self.n_arms = means.shape
        self.sampler = resolve_sampler(sampler)
        self._threshold = check_count("threshold", threshold)
        self._bounds = reward_bounds if laplace_epsilon is not None else None
        self.aggregator = self._aggregator()

    def _aggregator(self) -> KAnonymousAggregator:
        """The aggregator that draws this world's rewards (`_released`) when it releases."""
        return KAnonymousAggregator(
            self._threshold, self._released, laplace_epsilon=self.laplace_epsilon,
            reward_bounds=self._bounds, n_users=self.n_users, n_arms=self.n_arms,
            sampler=self.sampler, require_play=True)

    def _edited(self, edit: Any) -> AnonymousBanditEnv:
        """A neighbour's copy draws through an aggregator of its own."""
        world = super()._edited(edit)
        world.aggregator = world._aggregator()
        return world

    @property
    def threshold(self) -> int:
        """C: released sums cover at least C users."""
        return self.aggregator.threshold

    @property
    def reward_variance(self) -> float:
        """Sub-Gaussian variance proxy of one reward (1/4 Bernoulli, sd^2 Gaussian)."""
        return 0.25 if self.reward == "bernoulli" else self.noise_sd**2

    def _draw(self, users: np.ndarray, arms: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # the rewards are the environment's: from its round stream when the run gave one
        # (the runner always does), else from the caller's generator
        rng = self._rounds_rng if self._rounds_rng is not None else rng
        mu = self._means[users, arms]
        if self.reward == "bernoulli":
            return (rng.random(mu.shape) < mu).astype(np.float64)
        return mu + self.noise_sd * rng.standard_normal(mu.shape)

    def _released(self, users: np.ndarray, arms: np.ndarray, rng: np.random.Generator
                  ) -> np.ndarray:
        """The rewards the aggregator draws to release a group sum (a neighbour's flipped)."""
        rewards = self._draw(users, arms, rng)
        return rewards if self._edit is None else self._edit.draws(users, arms, rewards)

    def act(self, t: int, action: np.ndarray) -> Outcome:
        """Round t, user i on arm action[i]: the users' total realised reward (a sum over all
        N > C users), no feedback (individual rewards are readable only through
        `aggregator`), the pseudo-regret and the expected reward."""
        a = self._check_assignments(np.asarray(action)[None, :])
        drawn = self._draw(np.arange(self.n_users), a[0], self._acting(t))
        self.aggregator.grant(a, np.ones(1, dtype=np.int64))
        return Outcome(float(drawn.sum()), None, float(self.regret(a)[0]),
                       float(self.expected_reward(a)[0]))

    def play(self, assignments: np.ndarray, rounds: np.ndarray) -> None:
        """Assignment p of (P, N) is played for rounds[p] rounds: the aggregator may then
        release those rounds' group sums, once each (`KAnonymousAggregator.grant`)."""
        self.aggregator.grant(self._check_assignments(assignments), rounds)

    def _check_assignments(self, assignments: np.ndarray) -> np.ndarray:
        a = np.asarray(assignments)
        if a.dtype.kind not in "iu" or a.ndim != 2 or a.shape[1] != self.n_users:
            raise ShapeError(
                f"assignments must be an integer (R, N={self.n_users}) array; "
                f"got dtype {a.dtype}, shape {a.shape}"
            )
        if a.size and (a.min() < 0 or a.max() >= self.n_arms):
            raise config_error("assignments", "an arm outside [0, K)",
                               f"every user on an arm in [0, {self.n_arms})")
        return a

    def regret(self, assignments: np.ndarray) -> np.ndarray:
        """Pseudo-regret of each assignment (R, N) -> (R,) summed over users."""
        a = self._check_assignments(assignments)
        gaps = self._best[:, None] - self._means
        return np.take_along_axis(gaps.T, a, axis=0).sum(axis=1) if a.size else np.zeros(len(a))

    def expected_reward(self, assignments: np.ndarray) -> np.ndarray:
        """Expected total reward of each assignment (R, N) -> (R,)."""
        a = self._check_assignments(assignments)
        if not a.size:
            return np.zeros(len(a))
        return np.take_along_axis(self._means.T, a, axis=0).sum(axis=1)

    def detection_error(self, labels: np.ndarray | None) -> float | None:
        """Fraction of users whose arm in `labels` (N,) -- the arm an algorithm believes
        optimal for them -- is not one of their optimal arms (users with one optimal arm
        form a cluster); None without labels."""
        if labels is None:
            return None
        a = self._check_assignments(np.asarray(labels)[None, :])[0]
        return float(np.mean(self._means[np.arange(self.n_users), a] < self._best))

    def cluster_size(self) -> int:
        """U of this instance: the fewest users any arm is optimal for (oracle information)."""
        best = np.argmax(self._means, axis=1)
        return int(np.bincount(best, minlength=self.n_arms).min())

    def describe(self) -> dict[str, Any]:
        """JSON-serialisable description (no hidden means)."""
        return {
            "name": "anonymous-mab",
            "n_users": self.n_users,
            "n_arms": self.n_arms,
            "threshold": self.threshold,
            "reward": self.reward,
            "noise_sd": self.noise_sd if self.reward == "gaussian" else None,
            "laplace_epsilon": self.laplace_epsilon,
            "cluster_size": self.cluster_size(),
        }


def clustered_means(
    n_users: int, n_arms: int, cluster_size: int, rng: np.random.Generator
) -> np.ndarray:
    """Random means (N, K) where every arm is optimal for at least `cluster_size` users.

    Each user's K means are i.i.d. uniform on [0, 1]; the largest is moved to the
    user's planted optimal arm.  The first U * K users (in a random order) are
    planted U per arm, the rest uniformly at random.
    """
    n_users = check_count("n_users", n_users)
    n_arms = check_count("n_arms", n_arms)
    cluster_size = check_count("cluster_size", cluster_size)
    if cluster_size * n_arms > n_users:
        raise config_error(
            "cluster_size", cluster_size,
            f"at most n_users / n_arms = {n_users // n_arms} (each arm optimal for U users)",
        )
    planted = np.r_[
        np.repeat(np.arange(n_arms), cluster_size),
        rng.integers(0, n_arms, n_users - cluster_size * n_arms),
    ]
    planted = planted[rng.permutation(n_users)]
    means = rng.random((n_users, n_arms))
    top = np.argmax(means, axis=1)
    rows = np.arange(n_users)
    means[rows, top], means[rows, planted] = means[rows, planted], means[rows, top]
    return means
