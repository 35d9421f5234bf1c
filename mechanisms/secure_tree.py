"""The binary tree over secure sums: every node's sum over the parties is one secure sum.

Step t completes the dyadic node at level i = (lowest set bit of t).  Each
party keeps its own exact node sums (levels x entries, every party at once)
and computes its share of the node, (the i lower nodes) + its increment; one
`secure_sum.SecureAggregation` releases the node's sum over the surviving
parties with the noise of one node (any min_survivors - collusion shares
carry it).  The aggregator keeps the prefix released when each level's node
was completed and returns, at t, the released nodes at the set bits of t
(`tree.TreePrivatizer`'s schedule, Chan, Shi & Song 2011).
"""
from __future__ import annotations

import numpy as np

from privbandit.accounting import calibration as calib
from privbandit.accounting.events import SecureSumEvent, TreeAggregationEvent

from .secure_stream import SecureStream
from .tree import TreeNoise, float_sensitivity_factor


class SecureTree(TreeNoise, SecureStream):
    """Noisy prefix sums over parties, one secure sum per tree node (module docstring).

    Arguments: `secure_stream.SecureStream`'s.  Prefix noise per entry: popcount(t)
    node noises (`prefix_variance`), each the sum of the surviving parties' shares.

    Privacy guarantee
    -----------------
    Neighbouring relation: record-level -- one party's increment at one step
    differs, by at most l2_sensitivity in L2 (after clipping to clip_norm;
    with records_per_step R, one record of one party's step).  Observer: the
    aggregator with up to `collusion` colluding parties (`SecureSum`'s trust
    model).  Mechanism: a record enters at most ceil(log2 horizon) + 1
    nodes, each released once by a secure sum; prefixes are post-processing.
    Node sensitivity in value units: l2_sensitivity x `tree.float_sensitivity_factor`
    (the parties' float node sums, the clipping); on the grid: / scale +
    sqrt(entries) (stochastic rounding, `integer_grid`).  Event:
    TreeAggregationEvent(SecureSumEvent(share sigma, min_survivors -
    collusion, that sensitivity, entries, sqrt(entries), wrap per release),
    nodes_per_record), accounted by zCDP or RDP (Kairouz, Liu & Steinke 2021,
    Theorem 1).  `user_level_event(k)`: k x the value sensitivity.
    Assumptions: the horizon counts releases and is fixed in advance; the
    party set is fixed for the stream's life; dropouts are public.  Sources:
    Chan, Shi & Song (2011); Kairouz, Liu & Steinke (2021); Bonawitz et al.
    (2017); Chowdhury & Zhou (2022) for the tree over secure sums in bandits.
    """

    kind = "tree"

    def _setup(self) -> None:
        self._nodes = calib.tree_nodes_per_record(self._horizon)
        self._levels = max(self._horizon.bit_length(), 1)
        self._exact = np.zeros((self._levels, self._parties, self._entries))
        self._released = np.zeros((self._levels, self._entries))

    def _value_sensitivity(self) -> float:
        return float_sensitivity_factor(self._horizon, self._entries, self._records)

    def _released_dimension(self) -> int:
        return self._entries

    def _signal_bound(self) -> float:
        return float(2 ** (self._levels - 1) * self._records)  # the top node's increments

    def _event_for(self, release_event: SecureSumEvent) -> TreeAggregationEvent:
        return TreeAggregationEvent(release_event, self._nodes)

    def _party_values(self, x: np.ndarray) -> np.ndarray:
        t = self._steps + 1
        self._level = (t & -t).bit_length() - 1
        self._node = self._exact[: self._level].sum(axis=0) + x if self._level else x
        return self._node

    def _advance(self, noisy: np.ndarray) -> np.ndarray:
        t, level = self._steps + 1, self._level
        higher = t >> (level + 1)
        if higher:  # the released nodes above `level`: the prefix stored with the next one
            out = self._released[level + (higher & -higher).bit_length()] + noisy
        else:
            out = noisy.copy()
        self._exact[level] = self._node
        self._released[level] = out
        return out

    def _state_arrays(self) -> tuple[np.ndarray, ...]:
        return (self._exact, self._released)
