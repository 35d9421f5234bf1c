"""`LinearUsersEnv`: users with hidden preference vectors, one item chosen per round.

Round t: a user u_t arrives (uniformly, or with given probabilities), K items
x_{t,1..K} are drawn from an `ItemSource`, the policy picks one item k and
observes its reward:
- "bernoulli": reward ~ Bernoulli(clip(x . theta_u, 0, 1)); expected reward
  clip(x . theta_u, 0, 1) (seed 000's model; seed-clarifications.md);
- "gaussian": reward = x . theta_u + noise_sd * N(0, 1); expected x . theta_u.
Pseudo-regret of round t: max_k E[reward of k] - E[reward of the chosen item].
The users, items and arrivals are `HiddenPreferencesEnv`, shared with `envs.cascade`;
its rounds are drawn in blocks (`envs.blocks.BlockRounds`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.validation import as_array, check_nonnegative

from ..errors import ShapeError, config_error
from ..validation import check_action, real_array, validated_norm
from .base import Environment, Outcome
from .blocks import BlockRounds, block_rounds
from .items import ItemSource
from .neighbours import ROUND

REWARD_MODELS = ("bernoulli", "gaussian")


def check_preferences(theta: object, dim: int) -> np.ndarray:
    """A finite (n_users, dim) array with n_users >= 1, copied and made read-only."""
    th = real_array("theta", theta)
    if th.ndim != 2 or th.shape[1] != dim:
        raise ShapeError(f"theta must be an (n_users, {dim}) array; got shape {th.shape}")
    if th.shape[0] == 0:
        raise config_error("n_users", 0, "an integer >= 1 (theta has no rows)")
    if not np.all(np.isfinite(th)):
        raise config_error("theta", "array", "finite values")
    th.flags.writeable = False
    return th


def check_labels(labels: object, n_users: int) -> np.ndarray | None:
    """None or n_users integer cluster labels."""
    if labels is None:
        return None
    lab = np.array(as_array("clusters", labels))
    if lab.shape != (n_users,) or not np.issubdtype(lab.dtype, np.integer):
        raise ShapeError(f"clusters must be {n_users} integer labels; got {lab.dtype} {lab.shape}")
    lab.flags.writeable = False
    return lab


def check_user_probs(user_probs: object, n_users: int) -> np.ndarray | None:
    """None (uniform arrival) or n_users non-negative probabilities summing to 1."""
    if user_probs is None:
        return None
    p = real_array("user_probs", user_probs)
    if p.shape != (n_users,) or not np.all(np.isfinite(p)) or np.any(p < 0):
        raise config_error(
            "user_probs", user_probs, f"{n_users} finite non-negative probabilities"
        )
    if not np.isclose(p.sum(), 1.0, rtol=0, atol=1e-9):
        raise config_error("user_probs", user_probs, "probabilities summing to 1")
    return p / p.sum()


class HiddenPreferencesEnv(BlockRounds, Environment):
    """What the linear and the cascade environments share: users with hidden
    preferences theta (n_users, d), items from an `ItemSource` (fixes d, K and
    the item norm bound), arrivals (uniform, or with `user_probs`) and optional
    true cluster labels (read only by the run loop, for the detection error).
    Neighbours flip one round's feedback (`envs.neighbours`, ROUND).
    """

    flip_kinds = (ROUND,)

    def __init__(
        self,
        theta: np.ndarray,
        items: ItemSource,
        *,
        user_probs: np.ndarray | None,
        clusters: np.ndarray | None,
        block: int | None,
        horizon: int | None,
        name: str,
    ) -> None:
        if not isinstance(items, ItemSource):
            raise config_error("items", items, "an ItemSource")
        self.items = items
        self.dim = items.dim
        self.n_items = items.n_items
        self._theta = check_preferences(theta, self.dim)
        self.n_users = self._theta.shape[0]
        self.user_probs = check_user_probs(user_probs, self.n_users)
        self._clusters = check_labels(clusters, self.n_users)
        self.horizon = horizon
        self.name = name
        super().__init__(block_rounds(self.n_items * self.dim, block))

    def _arrivals(self, size: int, rng: np.random.Generator) -> np.ndarray:
        if self.user_probs is None:
            return rng.integers(self.n_users, size=size)
        return rng.choice(self.n_users, size=size, p=self.user_probs)

    def true_clusters(self) -> np.ndarray | None:
        return self._clusters

    def _world_description(self) -> dict[str, Any]:
        """The shared part of `describe()`: arrivals, true clusters, block and items."""
        return {
            "arrival": "uniform" if self.user_probs is None else "given",
            "n_clusters": None if self._clusters is None else int(np.unique(self._clusters).size),
            "block": self._block_size, **self.items.describe(),
        }


class LinearUsersEnv(HiddenPreferencesEnv):
    """Linear contextual users; see the module docstring for the model.

    theta, items, user_probs, clusters: as in `HiddenPreferencesEnv`; reward:
    one of REWARD_MODELS; noise_sd: the Gaussian model's noise scale.
    """

    def __init__(
        self,
        theta: np.ndarray,
        items: ItemSource,
        *,
        user_probs: np.ndarray | None = None,
        reward: str = "bernoulli",
        noise_sd: float = 0.1,
        clusters: np.ndarray | None = None,
        block: int | None = None,
        horizon: int | None = None,
        name: str = "linear-users",
    ) -> None:
        super().__init__(theta, items, user_probs=user_probs, clusters=clusters, block=block,
                         horizon=horizon, name=name)
        if reward not in REWARD_MODELS:
            raise config_error("reward", reward, f"one of {REWARD_MODELS}")
        self.reward_model = reward
        self.noise_sd = check_nonnegative("noise_sd", noise_sd)

    def _draw_block(self, size: int, rng: np.random.Generator,
                    out: dict[str, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Draw `size` rounds: fresh arrays, or written into `out` (the arrays of
        `block_layout`, reused block after block); the same values either way.
        "item_norm" is the largest item norm the item source measured (inf: none)."""
        users = self._arrivals(size, rng)
        if out is None:
            items = self.items.draw(size, rng)
            out = {"users": users, "items": items, "item_norm": np.array(validated_norm(items)),
                   "means": np.empty((size, self.n_items)), "best": np.empty(size),
                   "noise": np.empty(size)}
        else:
            out = dict(out)
            out["users"][...] = users
            items = out["items"]
            out["item_norm"] = np.array(self.items.fill(items, rng))
        means = out["means"]
        np.matmul(items, self._theta[users][:, :, None], out=means[..., None])
        if self.reward_model == "bernoulli":
            rng.random(out=out["noise"])
            np.clip(means, 0.0, 1.0, out=means)
        else:
            rng.standard_normal(out=out["noise"])
        means.max(axis=1, out=out["best"])
        return out

    def block_layout(self) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
        """Shape and dtype of each array `_draw_block(B, rng, out)` writes into `out`."""
        b, k, d = self._block_size, self.n_items, self.dim
        return {"users": ((b,), np.dtype(np.int64)), "items": ((b, k, d), np.dtype(np.float64)),
                "means": ((b, k), np.dtype(np.float64)), "best": ((b,), np.dtype(np.float64)),
                "noise": ((b,), np.dtype(np.float64))}

    def act(self, t: int, action: Any) -> Outcome:
        """Reward of item `action` (int in [0, K)) at the round just observed."""
        i = self._row(t)
        a = check_action(action, self.n_items)
        mean = float(self._block["means"][i, a])
        noise = float(self._block["noise"][i])
        if self.reward_model == "bernoulli":
            reward = 1.0 if noise < mean else 0.0
        else:
            reward = mean + self.noise_sd * noise
        if self._edit is not None:  # a neighbour's or a canary's round
            reward = self._edit.reward(t, reward, self._users[i])
        return Outcome(reward, reward, float(self._block["best"][i]) - mean, mean)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name, "n_users": self.n_users, "dim": self.dim,
            "n_items": self.n_items, "reward": self.reward_model, "noise_sd": self.noise_sd,
            **self._world_description(),
        }
