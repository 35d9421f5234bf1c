"""Cascade click model with linear attraction (seed 001, eq. 1-4).

Round t: user u_t arrives, I items x_{t,1..I} are shown to the policy, which
returns a ranked list a = (a_1, ..., a_K) of K distinct item indices.  Each
item's attraction is w(i) = clip(<theta_u, x_i>, 0, 1) (clipped because the
paper's Gaussian features can give negative inner products; decision in
seed-clarifications.md).  The user scans the list and clicks the first
attractive item: position k is clicked with probability w(a_k), independently.

- feedback: the 0-based position of the first click, or K if nothing was
  clicked (eq. 1; positions 0..min(feedback, K-1) were examined);
- reward: 1 if any click, f(a, w_t) = 1 - prod_k (1 - w_t(a_k)) (eq. 3);
- expected reward f(a, w) = 1 - prod_k (1 - w(a_k));
- oracle: f is maximised by the K items of largest w (any order), so the
  oracle is exact (alpha = 1) and the pseudo-regret is f(top-K) - f(a) (eq. 4).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError, config_error
from ..validation import check_dim
from .base import Outcome
from .items import ItemSource
from .linear import HiddenPreferencesEnv


def check_ranking(action: object, n_items: int, list_len: int) -> np.ndarray:
    """A ranked list: `list_len` distinct integer indices in [0, n_items)."""
    a = np.asarray(action)
    if a.shape != (list_len,) or not np.issubdtype(a.dtype, np.integer):
        raise ShapeError(
            f"action must be a ranked list of {list_len} integer item indices; "
            f"got {a.dtype} array of shape {a.shape}"
        )
    ranks = a.tolist()  # a short list: Python's min, max and set beat NumPy's per-call cost
    if min(ranks) < 0 or max(ranks) >= n_items or len(set(ranks)) != list_len:
        raise config_error("action", ranks, f"{list_len} distinct indices in [0, {n_items})")
    return a


def top_k(weights: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest weights in decreasing order (ties: lowest index first)."""
    order = np.argsort(-weights, kind="stable")
    return order[:k]


class CascadeEnv(HiddenPreferencesEnv):
    """Cascading users with linear attraction; see the module docstring.

    theta: (n_users, d); items: item source with I >= list_len items per round;
    list_len: K, the length of the recommended list.
    """

    def __init__(
        self,
        theta: np.ndarray,
        items: ItemSource,
        list_len: int,
        *,
        user_probs: np.ndarray | None = None,
        clusters: np.ndarray | None = None,
        block: int | None = None,
        horizon: int | None = None,
        name: str = "cascade",
    ) -> None:
        super().__init__(theta, items, user_probs=user_probs, clusters=clusters, block=block,
                         horizon=horizon, name=name)
        self.list_len = check_dim("list_len", list_len)
        if self.list_len > self.n_items:
            raise config_error(
                "list_len", list_len, f"at most the number of items per round ({self.n_items})"
            )

    def _draw_block(self, size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        users = self._arrivals(size, rng)
        items = self.items.draw(size, rng)
        weights = np.clip(np.matmul(items, self._theta[users][:, :, None])[..., 0], 0.0, 1.0)
        k = self.list_len
        best_w = -np.partition(-weights, k - 1, axis=1)[:, :k]
        best = 1.0 - np.prod(1.0 - best_w, axis=1)
        return {
            "users": users, "items": items, "weights": weights, "best": best,
            "clicks": rng.random((size, k)),
        }

    def act(self, t: int, action: Any) -> Outcome:
        """Show the ranked list `action` ((K,) distinct ints) at the round just observed."""
        i = self._row(t)
        a = check_ranking(action, self.n_items, self.list_len)
        w = self._block["weights"][i, a]
        clicked = self._block["clicks"][i] < w
        first = int(np.argmax(clicked)) if clicked.any() else self.list_len
        if self._edit is not None:  # a neighbour's or a canary's round
            first = self._edit.click(t, first, self.list_len, self._users[i])
        expected = float(1.0 - np.prod(1.0 - w))
        reward = 1.0 if first < self.list_len else 0.0
        return Outcome(reward, first, float(self._block["best"][i]) - expected, expected)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name, "model": "cascade", "n_users": self.n_users, "dim": self.dim,
            "n_items": self.n_items, "list_len": self.list_len, **self._world_description(),
        }
