"""Checks of the bandit layer's inputs, shared by environments, data loaders and policies.

Sizes (`check_dim`), the round's inputs (`check_user`, `check_items`,
`check_action`, `check_reward`) and the record of item blocks an item source
validated as a whole when it drew them (`mark_validated`), so that a policy
skips the per-round norm pass for views of such a block.  Each raises the
errors of `privbandit.errors` with the parameter, the value received and what
is allowed.
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from privbandit.accounting.validation import as_array, check_positive

from .errors import NormBoundError, RewardError, ShapeError, config_error

# Relative slack for the declared norm bound, so rounding of normalised vectors passes.
_NORM_SLACK = 1e-9
# Relative slack on a record's norm bound where a sensitivity is declared from it: covers
# the norm check's slack above, so a record that passes never exceeds the sensitivity.
BOUND_SLACK = 1e-8

# Blocks of items validated once, when they were generated (see `mark_validated`):
# id(block) -> (weak reference to the block, largest row norm).
_VALIDATED: dict[int, tuple[weakref.ref, float]] = {}


def real_array(name: str, value: object) -> np.ndarray:
    """`value` as a new float64 array: ragged nesting, strings, booleans and objects refused."""
    array = as_array(name, value)
    if array.dtype.kind not in "fiu":
        raise ShapeError(
            f"{name} must hold real numbers (float or integer dtype); got dtype {array.dtype}"
        )
    return np.array(array, dtype=np.float64)


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


def validated_norm(block: np.ndarray) -> float:
    """The largest row norm recorded for `block` by `mark_validated` (math.inf if none:
    the block is not recorded, or writeable again)."""
    entry = _VALIDATED.get(id(block))
    if entry is None or entry[0]() is not block or block.flags.writeable:
        return math.inf
    return entry[1]


def check_items(items: object, dim: int, bound: float | None) -> np.ndarray:
    """A (K, dim) finite float array with K >= 1 whose rows have norm <= bound.

    One vectorized pass (row norms); `bound=None` skips the norm check.  Items
    from a block an item source validated when it drew it (`mark_validated`)
    skip the pass: their norms are already known.
    """
    if not isinstance(items, np.ndarray) or items.ndim != 2 or items.shape[1] != dim:
        shape = getattr(items, "shape", type(items).__name__)
        raise ShapeError(f"items must be a (K, {dim}) array of contexts; got {shape}")
    if items.dtype.kind not in "fiu":
        raise ShapeError(f"items must hold real numbers (float or integer); "
                         f"got dtype {items.dtype}")
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


# Types float() converts but that are not rewards: text, and truth values.
_NOT_REWARDS = (str, bytes, bytearray, bool, np.bool_)


def check_reward(reward: object) -> float:
    """A finite real reward (NaN and infinities, text and booleans refused)."""
    if type(reward) is float and math.isfinite(reward):  # fast path of the per-round check
        return reward
    if isinstance(reward, _NOT_REWARDS) or (
        isinstance(reward, np.ndarray) and reward.dtype.kind not in "fiu"
    ):
        raise RewardError(
            f"reward must be a finite real number; got {reward!r} ({type(reward).__name__})"
        )
    try:
        r = float(reward)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise RewardError(f"reward must be a finite real number; got {reward!r}") from None
    if not math.isfinite(r):
        raise RewardError(f"reward must be a finite real number; got {reward!r}")
    return r


def check_probability(name: str, value: object) -> float:
    """A probability in the open interval (0, 1)."""
    x = check_positive(name, value)
    if not x < 1.0:
        raise config_error(name, value, "a probability in (0, 1)")
    return x


def checked_observation(items: object, checked: np.ndarray | None, dim: int,
                        bound: float | None, action: object, feedback: object
                        ) -> tuple[np.ndarray, np.ndarray, float]:
    """(items, the chosen item's features, the reward) of a round's feedback, the items
    checked again unless they are the block `select` already checked (`checked`)."""
    if items is not checked:
        items = check_items(items, dim, bound)
    return items, items[check_action(action, items.shape[0])], check_reward(feedback)
