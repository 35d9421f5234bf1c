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
from privbandit.accounting.errors import invalid
from privbandit.accounting.events import GaussianEvent, TreeAggregationEvent
from privbandit.accounting.validation import check_count, check_delta, check_positive

from ._checks import check_choice, check_rng, check_shape, real_array
from .errors import HorizonExceededError, OutOfBoundsError
from .samplers import Sampler, resolve_sampler

_UNIT_ROUNDOFF = 2.0**-53
# relative asymmetry tolerated (and removed) in symmetric increments
_SYMMETRY_TOL = 1e-9


def _gamma(n: int) -> float:
    """Higham's gamma_n = n u / (1 - n u): relative error bound of n float operations."""
    return n * _UNIT_ROUNDOFF / (1 - n * _UNIT_ROUNDOFF)


def float_sensitivity_factor(horizon: int, entries: int) -> float:
    """Relative growth of the sensitivity caused by the tree's float arithmetic.

    A node at level i is computed as (sum of the i lower nodes) + increment, so
    each increment passes through at most L(L+1)/2 roundings (L = top level),
    and a node holds at most 2**L increments of norm <= clip_norm; Higham's
    bound then moves each node by at most gamma * 2**L * clip_norm, on both
    neighbours.  Computing the clipping norm over `entries` values multiplies
    by 1 + gamma_(entries + 4).  Tiny (2e-8 relative at a horizon of 1e6) but counted.
    """
    top = max(horizon.bit_length() - 1, 0)
    return (1.0 + 2.0 * 2**top * _gamma(top * (top + 1) // 2)) * (1.0 + _gamma(entries + 4))


def psd_bound(sigma: float, dim: int, horizon: int, alpha: float) -> float:
    """Shariff & Sheffet's (2018, Sec. 4.2) high-probability bound Upsilon on ||noise||_op.

    With probability >= 1 - alpha, every prefix noise of a tree whose nodes
    are symmetric Gaussians (Z + Z.T) / sqrt(2), Z_pq ~ N(0, sigma**2), has
    operator norm <= sigma sqrt(2 nu) (4 sqrt(dim) + 2 ln(2 horizon / alpha)),
    nu = ceil(log2 horizon) + 1 nodes per prefix.
    """
    nu = calib.tree_nodes_per_record(horizon)
    return sigma * math.sqrt(2 * nu) * (4 * math.sqrt(dim) + 2 * math.log(2 * horizon / alpha))


class TreePrivatizer:
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
    psd_shift : add 2 * Upsilon * I to every release (symmetric only; see
        `psd_bound`, failure probability `psd_alpha`), Shariff & Sheffet's shift:
        with probability >= 1 - psd_alpha the noise plus shift has all
        eigenvalues in [Upsilon, 3 Upsilon], so a noisy Gram matrix stays
        positive definite and acts as a ridge regulariser between those two
        values.  Data-independent, hence free of privacy cost.
    sampler : None (exact OpenDP sampler) or e.g. `samplers.FAST`.

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
    (`float_sensitivity_factor`) plus the exact sampler's grid slack over the
    released entries.  For symmetric noise the event is conservative: the
    released upper triangle is exactly a Gaussian mechanism with GDP mu =
    s / (sqrt(2) sigma), the event claims s / sigma.  Privacy measure:
    (epsilon, delta)-DP via the exact Gaussian (GDP) accountant, or zCDP/RDP.
    Assumptions: the horizon is fixed in advance; each record enters one
    increment.  Sources: Chan, Shi & Song (2011) binary mechanism; Shariff &
    Sheffet (2018) Sec. 4.2 (symmetric noise, PSD shift); seed 000 Algorithm 5
    and Section 3 (node noise (N + N.T) / sqrt(2)).
    """

    def __init__(
        self,
        shape: object,
        horizon: int,
        *,
        sigma: float | None = None,
        epsilon: float | None = None,
        delta: float | None = None,
        l2_sensitivity: float = 1.0,
        calibration: str = "tight",
        symmetric: bool = False,
        on_excess: str = "clip",
        psd_shift: bool = False,
        psd_alpha: float = 0.05,
        clip_norm: float | None = None,
        paper_formula: str = "seed000",
        sampler: Sampler | None = None,
    ) -> None:
        self._shape = check_shape("shape", shape)
        self._horizon = check_count("horizon", horizon)
        self._sensitivity = check_positive("l2_sensitivity", l2_sensitivity)
        self._clip = self._sensitivity if clip_norm is None else check_positive(
            "clip_norm", clip_norm)
        if self._clip > self._sensitivity:
            raise invalid("clip_norm", clip_norm, f"<= l2_sensitivity = {self._sensitivity:g}")
        self._symmetric = _check_flag("symmetric", symmetric)
        if self._symmetric and (len(self._shape) != 2 or self._shape[0] != self._shape[1]):
            raise invalid("shape", shape, "a square (D, D) shape when symmetric=True")
        self._on_excess = check_choice("on_excess", on_excess, ("clip", "reject"))
        self._sampler = resolve_sampler(sampler)
        self._nodes = calib.tree_nodes_per_record(self._horizon)
        self._event_sensitivity = self._effective_sensitivity()
        self._sigma = self._resolve_sigma(
            sigma, epsilon, delta, check_choice("calibration", calibration, ("tight", "paper")),
            paper_formula)
        self._shift = self._resolve_shift(_check_flag("psd_shift", psd_shift), psd_alpha)
        self._event = TreeAggregationEvent(
            GaussianEvent(self._sigma, self._event_sensitivity), self._nodes)
        levels = max(self._horizon.bit_length(), 1)
        # per level: the exact sum of its latest node, and the prefix released
        # when that node was completed (its noise is drawn once, reused after)
        self._exact = np.zeros((levels, *self._shape))
        self._released = np.zeros((levels, *self._shape))
        self._steps = 0
        self._clipped = 0

    # -- construction helpers -------------------------------------------------------
    def _released_entries(self) -> int:
        if self._symmetric:
            dim = self._shape[0]
            return dim * (dim + 1) // 2
        return math.prod(self._shape)

    def _effective_sensitivity(self) -> float:
        entries = max(math.prod(self._shape), 1)
        factor = float_sensitivity_factor(self._horizon, entries)
        return self._sensitivity * factor + self._sampler.l2_slack(self._released_entries())

    def _resolve_sigma(self, sigma, epsilon, delta, how, paper_formula) -> float:
        if sigma is not None:
            if epsilon is not None or delta is not None:
                raise invalid("sigma", sigma, "None when epsilon and delta are given (not both)")
            if how != "tight":
                raise invalid("calibration", how, "'tight' (unused) when sigma is given")
            return check_positive("sigma", sigma)
        if epsilon is None or delta is None:
            raise invalid("(sigma, epsilon, delta)", (sigma, epsilon, delta),
                          "either sigma, or both epsilon and delta")
        epsilon, delta = check_positive("epsilon", epsilon), check_delta("delta", delta)
        if how == "tight":
            return calib.calibrate_gaussian_sigma(
                epsilon, delta, self._event_sensitivity, nodes_per_record=self._nodes)
        paper = getattr(calib, "paper_tree_sigma", None)
        if paper is None:
            raise invalid("calibration", how,
                          "'tight' (accounting.calibration.paper_tree_sigma is not available)")
        return paper(epsilon, delta, self._event_sensitivity, horizon=self._horizon,
                     formula=paper_formula)

    def _resolve_shift(self, psd_shift: bool, psd_alpha: float) -> float:
        if not psd_shift:
            return 0.0
        if not self._symmetric:
            raise invalid("psd_shift", psd_shift, "False unless symmetric=True")
        alpha = check_positive("psd_alpha", psd_alpha)
        if alpha >= 1:
            raise invalid("psd_alpha", psd_alpha, "a probability in (0, 1)")
        return 2.0 * psd_bound(self._sigma, self._shape[0], self._horizon, alpha)

    # -- the stream -----------------------------------------------------------------
    def add(self, increment: object, rng: np.random.Generator) -> np.ndarray:
        """Add the next increment and return the noisy prefix sum (same shape).

        Raises HorizonExceededError past the horizon, ShapeError for a wrong
        shape or dtype, InvalidParameterError for NaN/inf or (symmetric) an
        asymmetric matrix, OutOfBoundsError over clip_norm with
        on_excess="reject"; a refused call changes nothing.
        """
        if self._steps >= self._horizon:
            raise HorizonExceededError(
                f"add: the tree's horizon is {self._horizon} releases and all were used; "
                f"build a new TreePrivatizer for further steps")
        check_rng(rng)
        x, clipped = self._prepare(increment)
        t = self._steps + 1
        level = (t & -t).bit_length() - 1
        node = self._exact[:level].sum(axis=0) + x if level else x
        if self._symmetric:
            noisy = self._sampler._add_symmetric(node, self._sigma, rng)
        else:
            noisy = self._sampler._add_gaussian(node, self._sigma, rng)
        # Prefix t = the noisy nodes at the set bits of t.  Those above `level`
        # are exactly the nodes of the prefix released when the next set bit
        # `above` was completed, so reuse that release instead of re-summing.
        higher = t >> (level + 1)
        if higher:
            above = level + (higher & -higher).bit_length()
            out = np.asarray(self._released[above] + noisy)
        else:
            out = np.array(noisy, dtype=np.float64)
        # commit only once everything that can fail has run
        self._exact[level] = node
        self._released[level] = out
        self._steps = t
        self._clipped += clipped
        if self._shift:
            out.ravel()[:: self._shape[0] + 1] += self._shift  # the diagonal, in place
        return out

    def _prepare(self, increment: object) -> tuple[np.ndarray, bool]:
        """The validated, symmetrised and clipped increment, and whether it was clipped."""
        x = real_array("increment", increment, self._shape)
        norm = _frobenius(x)
        if self._symmetric:
            skew = x - x.T
            gap = _frobenius(skew)
            if gap > _SYMMETRY_TOL * (1.0 + norm):
                raise invalid("increment", f"a matrix with ||x - x.T|| = {gap:.3g}",
                              "a symmetric matrix (symmetric=True)")
            if gap:
                x = (x + x.T) * 0.5  # exactly symmetric: float addition commutes
                norm = _frobenius(x)
        if norm > self._clip:
            if self._on_excess == "reject":
                raise OutOfBoundsError(
                    f"increment must have L2/Frobenius norm <= clip_norm = {self._clip:g} "
                    f"(on_excess='reject'); got norm {norm:.6g}")
            return x * (self._clip / norm), True
        return x, False

    # -- read-only view -------------------------------------------------------------
    @staticmethod
    def nodes_in_prefix(step: int) -> int:
        """How many noisy nodes prefix `step` sums: popcount(step)."""
        return bin(check_count("step", step)).count("1")

    @property
    def event(self) -> TreeAggregationEvent:
        """The whole tree's privacy event for one record (charge it once per tree)."""
        return self._event

    @property
    def sigma(self) -> float:
        return self._sigma

    @property
    def steps(self) -> int:
        return self._steps

    @property
    def horizon(self) -> int:
        return self._horizon

    @property
    def clipped(self) -> int:
        """How many increments were scaled down to clip_norm."""
        return self._clipped

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def symmetric(self) -> bool:
        return self._symmetric

    @property
    def l2_sensitivity(self) -> float:
        """The declared sensitivity (the event's is this plus float and grid slack)."""
        return self._sensitivity

    @property
    def clip_norm(self) -> float:
        return self._clip

    @property
    def nodes_per_record(self) -> int:
        return self._nodes

    @property
    def shift(self) -> float:
        """The multiple of I added to every release (0.0 without psd_shift)."""
        return self._shift

    @property
    def sampler(self) -> Sampler:
        return self._sampler

    def __repr__(self) -> str:
        return (f"TreePrivatizer(shape={self._shape}, horizon={self._horizon}, "
                f"sigma={self._sigma:.6g}, steps={self._steps}, sampler={self._sampler!r})")


def _frobenius(x: np.ndarray) -> float:
    """L2 norm over all entries, without overflow for huge finite entries."""
    squares = float(np.vdot(x, x))
    if math.isfinite(squares):
        return math.sqrt(squares)
    top = float(np.abs(x).max())
    return top * math.sqrt(float(np.vdot(x / top, x / top)))


def _check_flag(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise invalid(name, value, "True or False")
    return bool(value)
