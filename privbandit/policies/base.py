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
`replicate_state()` and `bind_replicate_state(views)` are the contract the
batched twins (`runtime.lockstep`) use to keep a replicate's arrays in
stacked ones; a twin touches no private attribute of the policies it plays.
`CheckedItemsPolicy` adds the round's input checks that LinUCB, LinTS, CLUB
and SCLUB share.
"""
from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_positive

from ..errors import ShapeError, config_error
from ..protocol import Protocol
from ..validation import check_action, check_dim, check_items, check_reward

__all__ = [
    "CheckedItemsPolicy", "Policy", "check_state_views",
]


def check_state_views(state: Mapping[str, np.ndarray], views: Mapping[str, np.ndarray],
                      owner: str) -> None:
    """Refuse views that cannot stand for `state` (name -> array): a name `state` lacks, or
    an array of another shape or dtype than the array it replaces."""
    for name, view in views.items():
        if name not in state:
            raise config_error(f"{owner} replicate state name", name,
                               f"one of {sorted(state)}" if state else "absent (no state)")
        own = state[name]
        if not isinstance(view, np.ndarray) or view.shape != own.shape \
                or view.dtype != own.dtype or not view.flags.writeable:
            got = (type(view).__name__ if not isinstance(view, np.ndarray) else
                   f"shape {view.shape}, dtype {view.dtype}, writeable {view.flags.writeable}")
            raise ShapeError(f"{owner} replicate state {name!r} must be a writeable array of "
                             f"shape {own.shape}, dtype {own.dtype}; got {got}")


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

    # -- the contract of batched twins (`runtime.lockstep`) ------------------------------
    def replicate_state(self) -> dict[str, np.ndarray]:
        """The arrays of this policy's state that a batched twin may stack: name -> array.

        The contract batched twins use (`runtime.lockstep.register_batched`):
        a twin stacks these arrays over its replicates, hands each replicate
        views of its slice (`bind_replicate_state`) and reads and writes the
        stacked arrays; afterwards each replicate's behaviour and state equal
        those of its separate run.  The arrays are the policy's own, as they
        are now (a policy that builds new arrays, e.g. at a phase start,
        names the new ones).  Default: no state to bind.
        """
        return {}

    def bind_replicate_state(self, views: Mapping[str, np.ndarray]) -> None:
        """Adopt `views` (name -> array, some or all names of `replicate_state()`) in
        place of the arrays of those names, to read and write them from now on.

        Each view must have the shape and dtype of the array it replaces
        (ShapeError, ConfigError for an unknown name, naming it); its values
        are the policy's state from now on (a twin copies them in first).
        """
        check_state_views(self.replicate_state(), views, type(self).__name__)
        self._bind_views(dict(views))

    def _bind_views(self, views: dict[str, np.ndarray]) -> None:
        """Adopt checked views (a subclass with state implements this)."""
        if views:
            raise NotImplementedError(f"{type(self).__name__} binds no replicate state")

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
