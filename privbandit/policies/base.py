"""The per-round policy interface (`Policy`), a protocol whose steps are single rounds.

A round, as a policy's `advance` plays it for the run loop (`privbandit.runtime`):

    _, user, items = env.observe(t)    # linear envs: (K, d) float64, one row per item
    action = policy.select(items, user, t, rng)
    out = env.act(t, action)           # out.feedback -- linear envs: the float reward of the
                                       # chosen item; cascade: first-click position
    policy.update(items, user, action, out.feedback, t)

`action` is an int (index into the K items) for single-item environments and an
int array of distinct indices (a ranked list) for the cascade environment.
Policies never see an environment's hidden parameters; all randomness of a
decision comes from the `rng` passed to `select`, so the same seed gives the
same decisions bit for bit.  Ties between equal scores go to the lowest index.

The reporting hooks (`params()`, `comm`, `ledgers()`, `cluster_labels()`,
`privacy()`, ...) are those of `privbandit.protocol.Protocol`.
`CheckedItemsPolicy` adds the round's input checks that LinUCB, LinTS, CLUB
and SCLUB share.
"""
from __future__ import annotations

from abc import abstractmethod
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_positive

from ..protocol import Protocol
from ..validation import check_action, check_dim, check_items, check_reward

__all__ = [
    "CheckedItemsPolicy", "Policy",
]


class Policy(Protocol):
    """Base class of per-round bandit policies (see the module docstring for a round)."""

    name = "policy"

    @abstractmethod
    def select(
        self, items: np.ndarray, user: int, t: int, rng: np.random.Generator
    ) -> int | np.ndarray:
        """Choose an action for `user` at round `t` among `items` ((K, d) for linear envs)."""

    @abstractmethod
    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Learn from the feedback to `action` (same `items` and `user` as `select`)."""

    @property
    def lockstep_ready(self) -> bool:
        """True when this policy's configuration is one that its class's batched twin, if
        it has one (`runtime.lockstep.register_batched`), plays; a class whose twin plays
        only some configurations says which."""
        return True

    def advance(self, env: Any, t: int, regret: np.ndarray, reward: np.ndarray,
                rng: np.random.Generator) -> int:
        """Play rounds t .. t + len(regret) - 1 one at a time (see the module docstring)."""
        observe, act, select, update = env.observe, env.act, self.select, self.update
        for i in range(regret.shape[0]):
            s = t + i
            _, user, items = observe(s)
            action = select(items, user, s, rng)
            out = act(s, action)
            update(items, user, action, out.feedback, s)
            regret[i] = out.regret
            reward[i] = out.reward
        return regret.shape[0]


class CheckedItemsPolicy(Policy):
    """Base of the policies on (K, dim) item contexts of L2 norm <= item_bound, n_users users.

    The constructor checks the sizes and the bound (None: no norm check).  A
    round's items are checked once: `select` checks them with
    `_check_round_items`, and the `update` of the same round hands them to
    `_observation`, which checks them again only if they are not the array
    `select` checked.
    """

    def __init__(self, dim: int, n_users: int, item_bound: float | None) -> None:
        self.dim = check_dim("dim", dim)
        self.n_users = check_dim("n_users", n_users)
        self.item_bound = None if item_bound is None else check_positive("item_bound", item_bound)
        self._checked: np.ndarray | None = None  # items validated by the pending select()

    def _check_round_items(self, items: object) -> np.ndarray:
        """The round's items, checked (and remembered for the round's update)."""
        self._checked = check_items(items, self.dim, self.item_bound)
        return self._checked

    def _observation(
        self, items: object, action: object, feedback: object
    ) -> tuple[np.ndarray, float]:
        """(context of the chosen item, reward), checked: the update's half of the round check."""
        if items is not self._checked:
            items = check_items(items, self.dim, self.item_bound)
        observed = items[check_action(action, items.shape[0])], check_reward(feedback)
        self._checked = None  # only once all is checked: a refused update changes nothing
        return observed
