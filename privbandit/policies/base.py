"""The one policy interface every bandit algorithm implements, and its input checks.

A round, as the run loop (`privbandit.run`) plays it:

    items = round's observation        # linear envs: (K, d) float64, one row per item
    action = policy.select(items, user, t, rng)
    feedback = env's answer            # linear envs: float reward of the chosen item;
                                       # cascade: first-click position (len(list) = none)
    policy.update(items, user, action, feedback, t)

`action` is an int (index into the K items) for single-item environments and an
int array of distinct indices (a ranked list) for the cascade environment.
Policies never see an environment's hidden parameters; all randomness of a
decision comes from the `rng` passed to `select`, so the same seed gives the
same decisions bit for bit.  Ties between equal scores go to the lowest index.

Optional hooks with defaults: `params()`, `comm` (a `CommLog` or None),
`ledgers()` (privacy ledgers), `cluster_labels()` (detected clusters, for the
cluster-detection error), `privacy()` (the stated guarantee).
`CheckedItemsPolicy` adds the round's input checks that LinUCB, LinTS, CLUB
and SCLUB share.
"""
from __future__ import annotations

import math
import weakref
from abc import ABC, abstractmethod
from typing import Any, ClassVar

import numpy as np

from privbandit.accounting.ledger import Ledger
from privbandit.accounting.validation import check_positive

from ..comm import CommLog
from ..errors import NormBoundError, RewardError, ShapeError, config_error

# Relative slack for the declared norm bound, so rounding of normalised vectors passes.
_NORM_SLACK = 1e-9

# Blocks of items validated once, when they were generated (see `mark_validated`):
# id(block) -> (weak reference to the block, largest row norm).
_VALIDATED: dict[int, tuple[weakref.ref, float]] = {}


class Policy(ABC):
    """Base class of bandit policies (see the module docstring for the round protocol)."""

    name: ClassVar[str] = "policy"

    @abstractmethod
    def select(
        self, items: np.ndarray, user: int, t: int, rng: np.random.Generator
    ) -> int | np.ndarray:
        """Choose an action for `user` at round `t` among `items` ((K, d) for linear envs)."""

    @abstractmethod
    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        """Learn from the feedback to `action` (same `items` and `user` as `select`)."""

    def params(self) -> dict[str, Any]:
        """The algorithm's parameters, JSON-serialisable (recorded in the run result)."""
        return {}

    @property
    def comm(self) -> CommLog | None:
        """The communication log of a federated algorithm; None for centralised ones."""
        return None

    def ledgers(self) -> list[Ledger]:
        """Privacy ledgers charged by this algorithm (empty for non-private ones)."""
        return []

    def cluster_labels(self) -> np.ndarray | None:
        """Detected cluster label of each user, (n_users,), or None if it does not cluster."""
        return None

    def privacy(self) -> dict[str, Any]:
        """The stated privacy guarantee (neighbouring relation, measure, parameters)."""
        return {"guarantee": "none", "note": "non-private algorithm"}


def check_dim(name: str, value: object) -> int:
    """A positive integer dimension, number of users or items."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise config_error(name, value, "an integer >= 1")
    return int(value)


def _check_index(name: str, value: object, size: int) -> int:
    """An index in [0, size): the full check behind `check_user` and `check_action`."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not (
        0 <= value < size
    ):
        raise config_error(name, value, f"an integer in [0, {size})")
    return int(value)


def check_user(user: object, n_users: int) -> int:
    """A user index in [0, n_users)."""
    if type(user) is int and 0 <= user < n_users:  # fast path of the per-round check
        return user
    return _check_index("user", user, n_users)


def mark_validated(block: np.ndarray, max_norm: float) -> np.ndarray:
    """Freeze `block` (..., K, d) and record that all its rows are finite with norm <= max_norm.

    For item sources that have just established this for a whole block in one
    vectorized pass: `check_items` then accepts read-only views of the block
    (a round's items, a column slice of them) without computing row norms
    again.  `max_norm` must be the measured largest row norm, or a value the
    norms exceed only by rounding (far inside the check's 1e-9 relative slack),
    never a merely declared bound: a policy whose bound is below `max_norm`
    runs the full per-round check, so items are accepted or refused exactly as
    without the record.  Only arrays that own their data are recorded; the
    record is ignored while the block is writeable and dropped when the block
    is garbage-collected.  Returns `block`.
    """
    block.flags.writeable = False
    if block.base is None and block.ndim >= 2 and math.isfinite(max_norm):
        key = id(block)

        def forget(ref: weakref.ref, key: int = key) -> None:
            if _VALIDATED.get(key, (None,))[0] is ref:
                del _VALIDATED[key]

        _VALIDATED[key] = (weakref.ref(block, forget), float(max_norm))
    return block


def _validated_view(items: np.ndarray, bound: float | None) -> bool:
    """True if `items` is a row-major view of a recorded, still read-only block whose
    largest row norm is within `bound` (None: finiteness only)."""
    base = items.base
    if base is None:
        return False
    entry = _VALIDATED.get(id(base))
    return (
        entry is not None
        and entry[0]() is base
        and not base.flags.writeable
        # same element type and row/column steps: each row of `items` lies within one
        # row of the block (basic indexing and slicing keep these; reshapes do not)
        and items.dtype == base.dtype
        and items.strides == base.strides[-2:]
        and (bound is None or entry[1] <= bound)
    )


def check_items(items: object, dim: int, bound: float | None) -> np.ndarray:
    """A (K, dim) finite float array with K >= 1 whose rows have norm <= bound.

    One vectorized pass (row norms); `bound=None` skips the norm check.  Items
    from a block an item source validated when it drew it (`mark_validated`)
    skip the pass: their norms are already known.
    """
    if not isinstance(items, np.ndarray) or items.ndim != 2 or items.shape[1] != dim:
        shape = getattr(items, "shape", type(items).__name__)
        raise ShapeError(f"items must be a (K, {dim}) array of contexts; got {shape}")
    if items.shape[0] == 0:
        raise ShapeError(f"items must hold at least one item; got shape {items.shape}")
    if _validated_view(items, bound):
        return items
    sq = np.einsum("kd,kd->k", items, items)
    worst = float(sq.max())
    if not math.isfinite(worst):
        raise NormBoundError(f"items must be finite; got a NaN or infinite entry in {items.shape}")
    if bound is not None and worst > bound * bound * (1 + _NORM_SLACK):
        raise NormBoundError(
            f"items must have L2 norm <= {bound:g} (the declared item_bound); "
            f"got an item of norm {math.sqrt(worst):.6g}"
        )
    return items


def check_action(action: object, n_items: int) -> int:
    """A single item index in [0, n_items)."""
    if type(action) is int and 0 <= action < n_items:  # fast path of the per-round check
        return action
    return _check_index("action", action, n_items)


def check_reward(reward: object) -> float:
    """A finite real reward (NaN and infinities refused)."""
    try:
        r = float(reward)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise RewardError(f"reward must be a finite real number; got {reward!r}") from None
    if not math.isfinite(r):
        raise RewardError(f"reward must be a finite real number; got {reward!r}")
    return r


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
        self._checked = None
        return items[check_action(action, items.shape[0])], check_reward(feedback)
