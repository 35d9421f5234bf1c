"""The tree-based (binary counting) privatizer for continual release of prefix sums.

Streams of increments of one fixed shape (a scalar, a vector, a symmetric
(d+1) x (d+1) Gram-and-moment matrix) are released as noisy prefix sums after
every step.  Binary mechanism of Chan, Shi & Song (2011); used for private
linear bandits by Shariff & Sheffet (2018) and Dubey & Pentland (2020); seed
000 Algorithm 5 (privatizer PVT) for FCLUB-CDP.
"""
from __future__ import annotations

import math

import numpy as np

from privbandit.accounting import calibration as calib
from privbandit.accounting.events import GaussianEvent, TreeAggregationEvent
from privbandit.accounting.validation import check_count

from ._checks import check_choice
from .streaming import ContinualRelease, gamma


def float_sensitivity_factor(horizon: int, entries: int, records: int = 1) -> float:
    """Relative growth of the sensitivity caused by the tree's float arithmetic.

    A node at level i is computed as (sum of the i lower nodes) + increment, so
    each increment passes through at most L(L+1)/2 roundings (L = top level),
    and a node holds at most 2**L increments of norm <= clip_norm; Higham's
    bound then moves each node by at most gamma * 2**L * clip_norm, on both
    neighbours.  Computing the clipping norm over `entries` values multiplies
    by 1 + gamma_(entries + 4).  Tiny (2e-8 relative at a horizon of 1e6) but counted.
    The same bound covers Honaker's tree, whose nodes are pairwise sums (L
    roundings per increment).  With `records` records per increment, nodes hold
    `records` times more, and summing them adds 2 records gamma_records.
    """
    top = max(horizon.bit_length() - 1, 0)
    batch = 2.0 * records * gamma(records) if records > 1 else 0.0
    nodes = 2.0 * 2**top * records * gamma(top * (top + 1) // 2)
    return (1.0 + nodes + batch) * (1.0 + gamma(entries + 4))


def psd_bound(sigma: float, dim: int, horizon: int, alpha: float) -> float:
    """Shariff & Sheffet's (2018, Sec. 4.2) high-probability bound Upsilon on ||noise||_op.

    With probability >= 1 - alpha, every prefix noise of a tree whose nodes
    are symmetric Gaussians (Z + Z.T) / sqrt(2), Z_pq ~ N(0, sigma**2), has
    operator norm <= sigma sqrt(2 nu) (4 sqrt(dim) + 2 ln(2 horizon / alpha)),
    nu = ceil(log2 horizon) + 1 nodes per prefix.  Kept for TreePrivatizer's
    default shift; `noise_bounds.symmetric_noise_norm_bound` on the tree's
    own prefix variance is about 2.9 times smaller and also valid.
    """
    nu = calib.tree_nodes_per_record(horizon)
    return sigma * math.sqrt(2 * nu) * (4 * math.sqrt(dim) + 2 * math.log(2 * horizon / alpha))


def set_bits(horizon: int) -> np.ndarray:
    """(levels, horizon) booleans: bit i of t, for t = 1 ... horizon (vectorised popcount)."""
    steps = np.arange(1, horizon + 1)
    levels = np.arange(max(horizon.bit_length(), 1))[:, None]
    return (steps >> levels) & 1 == 1


def prefix_nodes(step: int) -> int:
    """How many noisy nodes prefix `step` sums: popcount(step)."""
    return bin(check_count("step", step)).count("1")


class TreeNoise:
    """The binary tree's prefix-noise structure (`_horizon`), in units of one node's variance:
    prefix t sums popcount(t) node noises (shared by the central and the secure trees)."""

    def _variance_units(self, step: int) -> float:
        return float(prefix_nodes(step))

    def _variance_units_all(self) -> np.ndarray:
        return set_bits(self._horizon).sum(axis=0, dtype=np.float64)

    def _max_variance_units(self) -> float:
        return float((self._horizon + 1).bit_length() - 1)  # most set bits of any t <= horizon


class TreePrivatizer(TreeNoise, ContinualRelease):
    """Noisy prefix sums of a stream of increments, one Gaussian draw per tree node.

    Time t = 1, 2, ... completes the dyadic node at level i = (index of the
    lowest set bit of t): its exact sum (the i lower nodes plus the new
    increment) gets fresh noise once, and that noisy node is reused by every
    later prefix it covers.  Prefix t is the sum of the noisy nodes at the set
    bits of t, so its noise is the sum of popcount(t) independent node noises:
    per-entry variance popcount(t) sigma**2 (symmetric matrices: off-diagonal
    popcount(t) sigma**2, diagonal 2 popcount(t) sigma**2).

    Parameters
    ----------
    shape : shape of every increment (() for scalars).
    horizon : the most `add` calls allowed; one more raises HorizonExceededError.
    sigma : per-entry node noise standard deviation; or give `epsilon` and
        `delta` and it is calibrated over ceil(log2 horizon) + 1 nodes per
        record, tightly with the exact Gaussian accountant
        (`calibration="tight"`, accounting.calibrate_gaussian_sigma) or with a
        paper's formula (`calibration="paper"`, accounting.paper_tree_sigma,
        `paper_formula` "seed000" or "shariff-sheffet").
    l2_sensitivity : bound on the L2 (Frobenius for matrices) norm of the
        difference between two neighbouring streams' increments.
    clip_norm : every increment is brought to norm <= clip_norm (default
        l2_sensitivity; must not exceed it).  Increments above it are scaled
        down (`on_excess="clip"`, counted in `.clipped`) or refused with
        OutOfBoundsError (`"reject"`).
    symmetric : increments are symmetric square matrices and get symmetric
        noise (Z + Z.T) / sqrt(2) (seed 000 Algorithm 5).
    psd_shift : add 2 * Upsilon * I to every release (symmetric only; failure
        probability `psd_alpha`), Shariff & Sheffet's shift: with probability
        >= 1 - psd_alpha the noise plus shift has all eigenvalues in
        [Upsilon, 3 Upsilon] at every step, so a noisy Gram matrix stays
        positive definite and acts as a ridge regulariser between those two
        values.  Data-independent, hence free of privacy cost.
    shift_bound : which Upsilon: "shariff-sheffet" (default, `psd_bound`, the
        paper's worst case over the tree) or "covariance"
        (`noise_bounds.symmetric_noise_norm_bound` on this tree's largest
        prefix variance, failure probability psd_alpha / horizon per step;
        about 2.9 times smaller; what `continual_release("tree")` uses).
    sampler : None (the float-safe grid sampler) or e.g. `samplers.FAST`.
    accountant : the accountant tight calibration certifies with
        ("exact-gaussian", the default; or the ledger's own, by name or as a
        fresh instance, so that ledger accepts the tree at exactly its budget).

    Prefix noise: `prefix_variance(step)` = popcount(step) sigma**2 per entry
    (off-diagonal), `max_prefix_variance()` = floor(log2(horizon + 1)) sigma**2.

    Privacy guarantee
    -----------------
    Neighbouring relation: record-level -- two streams that differ in one
    increment, where the difference of the two increments has norm <=
    l2_sensitivity.  With the default clip_norm = l2_sensitivity this covers
    adding or removing one record (one increment replaced by zero); for
    replace-one neighbours pass clip_norm = l2_sensitivity / 2 (any
    increments) or l2_sensitivity / sqrt(2) (positive semi-definite increments
    such as x x.T, whose difference has Frobenius norm <= sqrt(2) clip_norm).
    Norm: L2 over all entries (Frobenius).  Mechanism: one record enters at
    most ceil(log2 horizon) + 1 nodes, each released once with Gaussian noise
    of per-entry std sigma; every prefix is post-processing of the nodes.
    Event: TreeAggregationEvent(GaussianEvent(sigma, s), nodes_per_record),
    where s = l2_sensitivity inflated by the float-arithmetic factor
    (`float_sensitivity_factor`) plus the sampler's grid slack over the
    released entries.  For symmetric noise the event is conservative: the
    released upper triangle is exactly a Gaussian mechanism with GDP mu =
    s / (sqrt(2) sigma), the event claims s / sigma.  Privacy measure:
    (epsilon, delta)-DP via the exact Gaussian (GDP) accountant, or zCDP/RDP.
    Assumptions: the horizon (counted in releases, i.e. `add` calls) is
    fixed in advance; each record enters one increment (event level).  A
    unit contributing k increments (a user's whole stream) is charged
    `user_level_event(k)`: node sensitivity k s, by the triangle inequality.
    Sources: Chan, Shi & Song (2011) binary mechanism; Shariff &
    Sheffet (2018) Sec. 4.2 (symmetric noise, PSD shift); seed 000 Algorithm 5
    and Section 3 (node noise (N + N.T) / sqrt(2)).
    """

    kind = "tree"
    paper_calibration = True

    def __init__(self, shape: object, horizon: int, *, shift_bound: str = "shariff-sheffet",
                 **options) -> None:
        self._shift_bound = check_choice("shift_bound", shift_bound,
                                         ("shariff-sheffet", "covariance"))
        super().__init__(shape, horizon, **options)

    # -- structure ------------------------------------------------------------------
    def _setup(self) -> None:
        self._nodes = calib.tree_nodes_per_record(self._horizon)
        levels = max(self._horizon.bit_length(), 1)
        # per level: the exact sum of its latest node, and the prefix released
        # when that node was completed (its noise is drawn once, reused after)
        self._exact = np.zeros((levels, *self._shape))
        self._released = np.zeros((levels, *self._shape))

    def _effective_sensitivity(self) -> float:
        factor = float_sensitivity_factor(self._horizon, self._entries(), self._records)
        return self._core_sensitivity() * factor + self._sampler.l2_slack(
            self._released_entries())

    def _event_for(self, sigma: float, sensitivity: float) -> TreeAggregationEvent:
        return TreeAggregationEvent(GaussianEvent(sigma, sensitivity), self._nodes)

    def _shift_for(self, alpha: float) -> float:
        if self._shift_bound == "covariance":
            return super()._shift_for(alpha)
        return 2.0 * psd_bound(self._sigma, self._shape[0], self._horizon, alpha)

    def _state_arrays(self) -> tuple[np.ndarray, ...]:
        return (self._exact, self._released)

    # -- the stream -----------------------------------------------------------------
    def _advance(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        t = self._steps + 1
        level = (t & -t).bit_length() - 1
        node = self._exact[:level].sum(axis=0) + x if level else x
        noisy = self._noisy(node, rng)
        # Prefix t = the noisy nodes at the set bits of t.  Those above `level`
        # are exactly the nodes of the prefix released when the next set bit
        # `above` was completed, so reuse that release instead of re-summing.
        higher = t >> (level + 1)
        if higher:
            above = level + (higher & -higher).bit_length()
            out = np.asarray(self._released[above] + noisy)
        else:
            out = np.array(noisy, dtype=np.float64)
        self._exact[level] = node
        self._released[level] = out
        return out

    # -- read-only view -------------------------------------------------------------
    @staticmethod
    def nodes_in_prefix(step: int) -> int:
        """How many noisy nodes prefix `step` sums: popcount(step)."""
        return prefix_nodes(step)

    @property
    def event(self) -> TreeAggregationEvent:
        """The whole tree's privacy event for one record (charge it once per tree)."""
        return self._event

    @property
    def shift_bound(self) -> str:
        return self._shift_bound
