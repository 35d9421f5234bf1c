"""Multi-agent Bernoulli multi-armed bandit (seed 002's setting).

M agents face the same K arms.  Homogeneous: every agent's arm k pays
Bernoulli(mu_k).  Heterogeneous: agent i's arm k pays Bernoulli(mu_{i,k}) and
the target is the global mean mu_k = (1/M) sum_i mu_{i,k} (Li & Song, Sec. VI-D).

Regret is pseudo-regret against the global means in both cases: a round in
which the agents play arms a_1..a_M costs sum_i (max_k mu_k - mu_{a_i}).  The
environment owns the means; algorithms only see reward sums it draws.

Round by round (`envs.base.Environment`): every agent acts in every round,
`act(t, arms)` with arms (M,).  Speed: an epoch-level simulator asks for the
reward *sums* of many pulls at once (`draw_sums`, one binomial per agent and
arm); conditionally on the
counts this is exactly the distribution of the sum of per-round Bernoulli
rewards, so no per-round draw is needed.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.validation import check_count

from ..errors import RewardError, ShapeError, config_error
from ..validation import real_array
from .base import ContextFreeRounds, Environment, Outcome
from .neighbours import EPOCH, ROUND


class MultiAgentBernoulliMAB(ContextFreeRounds, Environment):
    """Bernoulli arms for M agents.

    means: (K,) shared by all agents (homogeneous; `n_users` required) or
    (M, K) one row per agent (heterogeneous).  Means must lie in [0, 1].
    Neighbours flip one agent's reward of one round (`act`) or move its reward sum of
    one epoch draw by one (`draw_sums`) (`envs.neighbours`, ROUND and EPOCH).
    """

    flip_kinds = (ROUND, EPOCH)

    def __init__(self, means: Any, n_users: int | None = None) -> None:
        mu = real_array("means", means)
        if not np.all((mu >= 0.0) & (mu <= 1.0)):
            bad = mu[~((mu >= 0.0) & (mu <= 1.0))]
            raise RewardError(
                f"means must be Bernoulli reward means in [0, 1]; got values {bad[:5].tolist()}"
            )
        if mu.ndim == 1:
            if n_users is None:
                raise config_error("n_users", n_users, "an integer >= 1 when means is (K,)")
            m = check_count("n_users", n_users)
            mu = np.broadcast_to(mu, (m, mu.size)).copy()
            self.heterogeneous = False
        elif mu.ndim == 2:
            if n_users is not None and n_users != mu.shape[0]:
                raise config_error("n_users", n_users, f"None or {mu.shape[0]} (rows of means)")
            self.heterogeneous = not np.all(mu == mu[:1])
        else:
            raise ShapeError(f"means must be (K,) or (M, K); got shape {mu.shape}")
        if mu.shape[0] < 1 or mu.shape[1] < 2:
            raise ShapeError(f"means must have >= 1 agent and >= 2 arms; got shape {mu.shape}")
        mu.setflags(write=False)
        self._means = mu
        self._global = mu.mean(axis=0)
        self._global.setflags(write=False)
        self._gaps = self._global.max() - self._global
        self._gaps.setflags(write=False)

    @classmethod
    def uniform(
        cls, n_users: int, n_arms: int, rng: np.random.Generator, *, heterogeneous: bool = False
    ) -> "MultiAgentBernoulliMAB":
        """Means uniform on [0, 1] (the paper's experiments): one row shared, or
        independent rows per agent when `heterogeneous`."""
        m = check_count("n_users", n_users)
        k = check_count("n_arms", n_arms, minimum=2)
        if heterogeneous:
            return cls(rng.random((m, k)))
        return cls(rng.random(k), n_users=m)

    # -- shape and hidden parameters (for the simulator and for regret) ------
    @property
    def n_users(self) -> int:
        return int(self._means.shape[0])

    @property
    def n_arms(self) -> int:
        return int(self._means.shape[1])

    @property
    def means(self) -> np.ndarray:
        """(M, K) read-only per-agent means."""
        return self._means

    @property
    def global_means(self) -> np.ndarray:
        """(K,) the target means, averaged over agents."""
        return self._global

    @property
    def best_arm(self) -> int:
        return int(np.argmax(self._global))

    @property
    def gaps(self) -> np.ndarray:
        """(K,) global suboptimality gaps max_k mu_k - mu_k."""
        return self._gaps

    # -- rewards ------------------------------------------------------------
    def draw_sums(self, arms: np.ndarray, pulls: int, rng: np.random.Generator) -> np.ndarray:
        """Reward sums of every agent pulling each of `arms` `pulls` times.

        arms: (A,) arm indices; returns (M, A) int64 binomial sums.
        """
        idx = self._arm_indices(arms)
        n = check_count("pulls", pulls, minimum=0)
        sums = rng.binomial(n, self._means[:, idx])
        return sums if self._edit is None else self._edit.sums(idx, n, sums)

    def pull(self, arms: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One round: agent i plays arms[i]; returns (M,) rewards in {0., 1.}."""
        a = self._agent_arms(arms)
        p = self._means[np.arange(self.n_users), a]
        return (rng.random(self.n_users) < p).astype(np.float64)

    def act(self, t: int, action: np.ndarray) -> Outcome:
        """Round t, agent i playing action[i]: reward is the agents' total, feedback their
        (M,) rewards, drawn from the round stream given to `reset`."""
        rng = self._acting(t)
        rewards = self.pull(action, rng)
        if self._edit is not None:  # a neighbour's round
            rewards = self._edit.rewards(t, rewards)
        return Outcome(float(rewards.sum()), rewards, float(self.regret(action)),
                       float(self.expected_reward(action)))

    # -- regret ------------------------------------------------------------
    def regret(self, arms: np.ndarray) -> np.ndarray:
        """Pseudo-regret of rounds in which agent i plays arms[..., i]: shape (...)."""
        return self._gaps[self._agent_arms(arms)].sum(axis=-1)

    def expected_reward(self, arms: np.ndarray) -> np.ndarray:
        """Expected total reward of rounds with arms[..., i] played by agent i: shape (...)."""
        a = self._agent_arms(arms)
        return self._means[np.arange(self.n_users), a].sum(axis=-1)

    def describe(self) -> dict[str, Any]:
        """A JSON-friendly description (means are summarised, not listed)."""
        positive = self._gaps[self._gaps > 0]
        return {
            "environment": "multi-agent-bernoulli-mab",
            "n_users": self.n_users,
            "n_arms": self.n_arms,
            "heterogeneous": self.heterogeneous,
            "best_arm": self.best_arm,
            "best_mean": float(self._global.max()),
            "min_gap": float(positive.min()) if positive.size else None,
        }

    # -- validation ------------------------------------------------------------
    def _arm_indices(self, arms: np.ndarray) -> np.ndarray:
        idx = np.asarray(arms)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise ShapeError(f"arms must be a 1-D integer array; got {idx.dtype} {idx.shape}")
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_arms):
            raise config_error("arms", arms, f"arm indices in [0, {self.n_arms})")
        return idx

    def _agent_arms(self, arms: np.ndarray) -> np.ndarray:
        a = np.asarray(arms)
        if a.ndim < 1 or a.shape[-1] != self.n_users or not np.issubdtype(a.dtype, np.integer):
            raise ShapeError(
                f"arms must be an integer array of shape (..., {self.n_users}); "
                f"got {a.dtype} {a.shape}"
            )
        if a.size and (a.min() < 0 or a.max() >= self.n_arms):
            raise config_error("arms", arms, f"arm indices in [0, {self.n_arms})")
        return a

    def __repr__(self) -> str:
        kind = "heterogeneous" if self.heterogeneous else "homogeneous"
        return f"MultiAgentBernoulliMAB(M={self.n_users}, K={self.n_arms}, {kind})"
