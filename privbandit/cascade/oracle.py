"""The exact top-K oracle of the cascade model and the value of a ranked list.

A list a = (a_1, ..., a_K) of distinct items is worth f(a, w) = 1 - prod_k (1 - w(a_k))
(seed 001, eq. 3).  f does not depend on the order and grows with every
w(a_k) in [0, 1], so the K items of largest weight maximise it: the oracle is
exact (alpha = 1).  Items are listed by decreasing weight, which is the order
that examines the most promising items first (the feedback of the cascade
reveals the items before the first click).
"""
from __future__ import annotations

import numpy as np

from ..errors import RewardError, config_error


def top_k_list(weights: np.ndarray, k: int) -> np.ndarray:
    """The k items of largest weight in decreasing order, ties to the lowest index, (k,).

    weights: (I,) with I >= k.  Equal to a stable argsort of -weights cut at k
    (`envs.cascade.top_k`), in O(I) instead of O(I log I): one partition, then
    a sort of the k chosen items.  Ties matter because optimistic scores are
    capped at 1 and many items can share the cap early in a run.
    """
    n = weights.shape[0]
    part = np.argpartition(weights, n - k)
    kth = weights[part[n - k]]
    if np.count_nonzero(weights >= kth) == k:  # no tie at the cut: the partition is exact
        # order the k chosen by (weight down, index up); k is small, so in Python
        ranked = sorted(part[n - k:].tolist(), key=lambda i: (-weights[i], i))
        return np.array(ranked, dtype=np.intp)
    above = np.flatnonzero(weights > kth)
    ties = np.flatnonzero(weights == kth)[: k - above.size]
    chosen = np.concatenate((above, ties))
    return chosen[np.argsort(-weights[chosen], kind="stable")]


def list_value(weights: np.ndarray, ranking: np.ndarray) -> float:
    """f(a, w) = 1 - prod_k (1 - w(a_k)) for the ranked list `ranking` (seed 001, eq. 3)."""
    return float(1.0 - np.prod(1.0 - weights[ranking]))


def check_list_length(list_len: object, n_items: int) -> int:
    """K: an integer in [1, n_items] (a list of K distinct items must exist)."""
    if isinstance(list_len, bool) or not isinstance(list_len, (int, np.integer)) or list_len < 1:
        raise config_error("list_len", list_len, "an integer >= 1")
    if list_len > n_items:
        raise config_error(
            "list_len", list_len, f"at most the number of items per round (n_items={n_items})"
        )
    return int(list_len)


def observed_positions(feedback: object, list_len: int) -> int:
    """How many list positions the user examined: first click + 1, or all K if none.

    feedback is the 0-based position of the first click, or K when nothing was
    clicked (`envs.cascade`; seed 001, eq. 1).
    """
    if type(feedback) is int and 0 <= feedback <= list_len:  # per-round fast path
        return feedback + 1 if feedback < list_len else list_len
    if isinstance(feedback, bool) or not isinstance(feedback, (int, np.integer)) or not (
        0 <= feedback <= list_len
    ):
        raise RewardError(
            f"feedback must be the first-click position, an integer in [0, {list_len}] "
            f"({list_len} = no click); got {feedback!r}"
        )
    return int(feedback) + 1 if feedback < list_len else list_len
