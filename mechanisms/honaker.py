"""Honaker's variance-optimal prefix estimate over the nodes of a binary tree, streamed.

Continual release of prefix sums (the interface of `streaming.ContinualRelease`)
through the full dyadic tree: at step t every dyadic node ending at t, levels
0 ... (lowest set bit of t), gets its exact sum released once with Gaussian
noise through the sampler; everything after that is post-processing.

Estimate (Honaker 2015, "Efficient use of differentially private binary
trees", the upward pass).  A node's estimate combines its own noisy sum y
(variance sigma**2) with the sum of its two children's estimates (variance
2 v_(i-1)) by inverse-variance weighting:

    v_0 = 1,   v_i = 2 v_(i-1) / (2 v_(i-1) + 1)     (units of sigma**2),
    est_i = v_i y + (v_i / (2 v_(i-1))) (est_left + est_right).

v_i falls from 1 to 1/2 (2/3, 4/7, 8/15, ...).  The nodes completed by step t
form disjoint complete subtrees whose roots are the dyadic nodes at the set
bits of t (no completed node covers two of them), so the prefix estimate, the
sum of those roots' estimates, is the best linear unbiased estimate of the
prefix from everything released so far; Honaker's downward pass would need
parents that are not complete yet.  Prefix variance at t: sigma**2 times the
sum of v_i over the set bits i of t, against popcount(t) sigma**2 for the
tree.  (The `TreePrivatizer` releases only the node at the lowest set bit of
each t: those T nodes determine the stream exactly, leaving nothing to
combine, which is why this mechanism releases every dyadic node: 2 T - 1 draws
instead of T, the same number of nodes per record.)
"""
from __future__ import annotations

import numpy as np

from privbandit.accounting import calibration as calib
from privbandit.accounting.events import GaussianEvent, TreeAggregationEvent

from .streaming import ContinualRelease
from .tree import float_sensitivity_factor, set_bits


def honaker_variances(levels: int) -> np.ndarray:
    """v_0 ... v_(levels-1): variance of a level-i node's estimate, in units of sigma**2."""
    v = np.empty(max(levels, 1))
    v[0] = 1.0
    for i in range(1, v.size):
        v[i] = 2 * v[i - 1] / (2 * v[i - 1] + 1)
    return v


class HonakerTree(ContinualRelease):
    """Noisy prefix sums by Honaker's estimate over a streamed dyadic tree of Gaussian nodes.

    Same arguments as `TreePrivatizer` (shape, horizon, sigma or epsilon and
    delta, l2_sensitivity, calibration "tight" or "paper", symmetric,
    on_excess, psd_shift, psd_alpha, clip_norm, paper_formula, sampler); the
    PSD shift comes from this mechanism's own largest prefix variance
    (`noise_bounds.psd_shift` at psd_alpha / horizon per step).

    Prefix noise: per-entry (off-diagonal) variance sigma**2 * sum of v_i over
    the set bits i of the step (module docstring); the diagonal of symmetric
    noise has twice that.  At most floor(log2(horizon + 1)) terms, each in
    (1/2, 1]: about half the tree's variance on long streams, 1/sqrt(2) of its
    standard deviation.

    Privacy guarantee
    -----------------
    Neighbouring relation: record-level -- two streams that differ in one
    increment, the difference having L2 (Frobenius) norm <= l2_sensitivity;
    clip_norm as for `TreePrivatizer` (add/remove with the default, replace-one
    with l2_sensitivity / 2).  Mechanism: a record's leaf lies in one dyadic
    node per level, at most ceil(log2 horizon) + 1 nodes, each released once
    with per-entry Gaussian noise sigma by the sampler; every estimate is
    post-processing.  Event: the tree's, TreeAggregationEvent(GaussianEvent(
    sigma, s), nodes_per_record), s = l2_sensitivity times
    `float_sensitivity_factor` (nodes are pairwise float sums) plus the exact
    sampler's grid slack per node; symmetric noise is charged as for the tree
    (conservatively).  Privacy measure: (epsilon, delta)-DP via the exact
    Gaussian accountant (or zCDP, RDP, PLD).  A unit contributing k increments
    is charged `user_level_event(k)` (node sensitivity k s).  Assumptions: the
    horizon counts releases (`add` calls) and is fixed in advance.  Sources:
    Honaker (2015), Sec. 3 (the upward pass); Chan, Shi & Song (2011) and
    Dwork, Naor, Pitassi & Rothblum (2010) for the dyadic tree.
    """

    kind = "honaker"
    paper_calibration = True

    def _setup(self) -> None:
        self._nodes = calib.tree_nodes_per_record(self._horizon)
        levels = max(self._horizon.bit_length(), 1)
        self._v = honaker_variances(levels)
        # per level: exact sum and estimate of its latest node, and the prefix
        # released when a node of that level was the top one completed
        self._exact = np.zeros((levels, *self._shape))
        self._est = np.zeros((levels, *self._shape))
        self._prefix = np.zeros((levels, *self._shape))

    def _effective_sensitivity(self) -> float:
        factor = float_sensitivity_factor(self._horizon, self._entries(), self._records)
        return self._core_sensitivity() * factor + self._sampler.l2_slack(
            self._released_entries())

    def _event_for(self, sigma: float, sensitivity: float) -> TreeAggregationEvent:
        return TreeAggregationEvent(GaussianEvent(sigma, sensitivity), self._nodes)

    def _variance_units(self, step: int) -> float:
        bits = [i for i in range(step.bit_length()) if step >> i & 1]
        return float(self._v[bits].sum())

    def _variance_units_all(self) -> np.ndarray:
        return self._v @ set_bits(self._horizon)

    def _max_variance_units(self) -> float:
        # v decreases with the level, so the lowest bits win: t = 2**m - 1
        return float(self._v[: (self._horizon + 1).bit_length() - 1].sum())

    def _state_arrays(self) -> tuple[np.ndarray, ...]:
        return (self._exact, self._est, self._prefix)

    def _advance(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        t = self._steps + 1
        top = (t & -t).bit_length() - 1
        exact, est = [x], [np.asarray(self._noisy(x, rng), dtype=np.float64)]
        for i in range(1, top + 1):  # node (t - 2**i, t] = stored left child + new right child
            exact.append(self._exact[i - 1] + exact[-1])
            y = self._noisy(exact[-1], rng)
            weight = self._v[i] / (2 * self._v[i - 1])
            est.append(self._v[i] * y + weight * (self._est[i - 1] + est[-1]))
        higher = t >> (top + 1)
        if higher:  # the nodes at the higher set bits: the prefix stored with the next one
            above = top + (higher & -higher).bit_length()
            out = self._prefix[above] + est[-1]
        else:
            out = est[-1].copy()
        self._exact[: top + 1] = exact
        self._est[: top + 1] = est
        self._prefix[top] = out
        return out
