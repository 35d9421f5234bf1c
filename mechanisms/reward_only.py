"""Reward-only continual release: noisy reward moments beside an exact public Gram matrix.

A linear bandit's record is (x, y): an action's features and the reward the
environment returned.  Under the interactive relation (one user-round's
reward differs, actions adapting) a record whose action was computed only from
public information, the round's items and earlier releases has the SAME x in
both neighbours along any forced transcript, so everything built from its
features alone -- sum x x^T, sum x, the count -- is public and needs no
noise.  Only its reward part sum y x is secret.  `RewardOnlyRelease` streams
that part through a continual-release mechanism (`continual_release`: "mf",
"tree" or "honaker") and releases the public part exactly beside it, at the
same steps.

The features must come marked public (`publication.PublicFeatures`, from the
`Publication` of the party whose code chose the actions from released data,
e.g. a billboard's shared round or an algorithm that acts on released
statistics only); the stream refuses a bare array.  The mark is a promise the
end-to-end audit checks: the public part is published by that same
`Publication` (on the tape as a public value), so a forced replay that finds it
different between neighbours reports an unbounded loss.

Privacy guarantee
-----------------
Neighbouring relation: two streams of records with the same features (public)
whose rewards differ in one record (replace-one of y), the view being every
release.  Sensitivity: features have ||x|| <= B (`feature_bound`; larger ones
are refused) and rewards are clipped to [lo, hi] (`reward_range`; or refused
with on_excess="reject"); the stream releases sum (y - c) x, c = (lo + hi) / 2
(centring keeps every summand within (hi - lo) B / 2, so the float slack of a
step's sum is bounded relative to the sensitivity), which moves by
|y - y'| ||x|| <= (hi - lo) B when one reward changes, and by at most
m (hi - lo) B when one neighbouring change alters the rewards of m records
(`changed_records`, triangle inequality; e.g. m = 2 for a cascade round whose
displayed items are records and whose click moves between two of them): that
is the `l2_sensitivity` of the inner mechanism, whose event (plus its float and grid
slack, with `records_per_step` records summed in one step) is `event`, the
whole cost of a record that enters one step.  The released moments add
c sum x back, which is public.  Under the record-level relation (a whole
record (x, y) replaced, seed 000 Definition 1) the features are not public and
this mechanism does not apply: release the full statistic z z^T instead
(`ContinualRelease` with symmetric noise).  Sources: Shariff & Sheffet (2018)
Sec. 4 and Hanna, Girgis & Fragouli (2022) for privatizing only the reward
part under an adversary who sees the actions; the inner mechanisms' own
sources.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.events import PrivacyEvent
from privbandit.accounting.validation import check_count, check_positive

from ._checks import check_choice, check_interval, check_rng, real_array
from .continual import continual_release
from .errors import OutOfBoundsError
from .publication import PublicFeatures
from .samplers import Sampler
from .streaming import ContinualRelease

# relative tolerance on the feature bound (items normalised in floating point)
_NORM_TOL = 1e-9
# the channel the public part is published on
PUBLIC_PART = "public part of a reward-only release (sum x x^T, sum x, count)"


@dataclass(frozen=True)
class RewardRelease:
    """One step's release: the public prefix sums gram = sum x x^T (d, d), features = sum x
    (d,) and count, and the noisy prefix sum of the rewards' part, moments ~ sum y x (d,),
    whose noise has per-entry variance `variance` (exact for the mechanism); `step` counts
    the stream's releases (1-based)."""

    gram: np.ndarray
    features: np.ndarray
    count: int
    moments: np.ndarray
    variance: float
    step: int


class _StreamView:
    """The read-only view the reward-only releases share, delegated to the stream of the
    moments `_inner` (the Gram part's state: `_dim`, `_clipped`)."""

    _inner: ContinualRelease
    _dim: int
    _clipped: int

    def _set_range(self, dim: int, feature_bound: float, reward_range: object) -> None:
        """Check and keep d, B and the reward range [lo, hi] with its centre."""
        self._dim = check_count("dim", dim)
        self._bound = check_positive("feature_bound", feature_bound)
        try:
            lo, hi = reward_range
        except (TypeError, ValueError):
            raise invalid("reward_range", reward_range, "a pair (lo, hi) with lo < hi") from None
        self._lo, self._hi = check_interval(lo, hi)
        self._centre = 0.5 * (self._lo + self._hi)

    @property
    def event(self) -> PrivacyEvent:
        """The whole stream's event for one record (charge it once, before releasing)."""
        return self._inner.event

    @property
    def sigma(self) -> float:
        return self._inner.sigma

    @property
    def steps(self) -> int:
        return self._inner.steps

    @property
    def horizon(self) -> int:
        return self._inner.horizon

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def clipped(self) -> int:
        """How many rewards were clipped into the range."""
        return self._clipped

    def prefix_variance(self, step: int | None = None) -> float:
        """Per-entry variance of the moments' noise at `step` (default: the last release)."""
        return self._inner.prefix_variance(step)


class RewardOnlyRelease(_StreamView):
    """Continual release of sum y x with sum x x^T public (see the module docstring).

    dim: d; horizon: the most steps (`add` calls), fixed in advance; mechanism:
    the inner continual release by name ("mf", "tree", "honaker"); sigma, or
    epsilon and delta (tight calibration of the inner mechanism's event);
    feature_bound: B; reward_range: (lo, hi); records_per_step: the most
    records one step may hold; changed_records: the most records whose rewards one
    neighbouring change alters (default 1); on_excess: "clip" (rewards) or "reject";
    sampler: the noise sampler (default float-safe); accountant: the one tight
    calibration certifies with (the ledger's, e.g. "rdp"; default exact).
    """

    def __init__(self, dim: int, horizon: int, *, mechanism: str = "mf",
                 sigma: float | None = None, epsilon: float | None = None,
                 delta: float | None = None, feature_bound: float = 1.0,
                 reward_range: tuple[float, float] = (0.0, 1.0), records_per_step: int = 1,
                 changed_records: int = 1, on_excess: str = "clip",
                 sampler: Sampler | None = None, accountant: str = "exact-gaussian") -> None:
        self._set_range(dim, feature_bound, reward_range)
        self._on_excess = check_choice("on_excess", on_excess, ("clip", "reject"))
        changed = check_count("changed_records", changed_records)
        self._inner: ContinualRelease = continual_release(
            mechanism, (self._dim,), horizon, sigma=sigma, epsilon=epsilon, delta=delta,
            l2_sensitivity=changed * (self._hi - self._lo) * self._bound, sampler=sampler,
            records_per_step=records_per_step, accountant=accountant)
        self._gram = np.zeros((self._dim, self._dim))
        self._features = np.zeros(self._dim)
        self._count = 0
        self._clipped = 0

    def add(self, records: PublicFeatures, rewards: object,
            rng: np.random.Generator) -> RewardRelease:
        """Release the next step holding `records` (0 to records_per_step of them) and their
        `rewards` (R,): the public prefixes exactly (published by the `Publication` that
        marked the records public), the reward moments with noise.

        Refuses features that are not `PublicFeatures` or exceed the bound, rewards of
        the wrong shape, NaN or infinite values, and (on_excess="reject") rewards outside
        the range; a refused call changes nothing.
        """
        if not isinstance(records, PublicFeatures):
            raise invalid("records", type(records).__name__,
                          "PublicFeatures: features marked public by the Publication of the "
                          "party that chose their actions from released data (a raw array is "
                          "refused)")
        x = records.features
        if x.shape[1] != self._dim:
            raise invalid("records", f"features of shape {x.shape}", f"(R, {self._dim})")
        n = x.shape[0]
        if n > self._inner.records_per_step:
            raise invalid("records", f"{n} records",
                          f"at most records_per_step = {self._inner.records_per_step}")
        y = real_array("rewards", rewards, (n,))
        norms = np.sqrt(np.einsum("rd,rd->r", x, x))
        if n and norms.max() > self._bound * (1.0 + _NORM_TOL):
            raise OutOfBoundsError(f"features must have norm <= feature_bound = {self._bound:g}; "
                                   f"got a record of norm {norms.max():.6g}")
        outside = (y < self._lo) | (y > self._hi)
        if outside.any() and self._on_excess == "reject":
            raise OutOfBoundsError(f"rewards must lie in [{self._lo:g}, {self._hi:g}] "
                                   f"(on_excess='reject'); got {y[outside][0]!r}")
        self._inner.check_open("add")
        check_rng(rng)
        y = np.clip(y, self._lo, self._hi)
        gram, feats = self._gram + x.T @ x, self._features + x.sum(axis=0)
        public = records.by.value(PUBLIC_PART, np.concatenate((gram.ravel(), feats,
                                                               [self._count + n])))
        centred = self._inner.add_bounded((y - self._centre) @ x, rng)
        self._gram, self._features, self._count = gram, feats, self._count + n
        self._clipped += int(outside.sum())
        d = self._dim
        return RewardRelease(public[:d * d].reshape(d, d), public[d * d:d * d + d],
                             int(public[-1]), centred + self._centre * public[d * d:d * d + d],
                             self._inner.prefix_variance(), self._inner.steps)

    # -- read-only view (the rest: `_StreamView`) ------------------------------------
    @property
    def l2_sensitivity(self) -> float:
        """m (hi - lo) B: what one neighbouring change (m = changed_records rewards) moves the
        released moments by."""
        return self._inner.l2_sensitivity

    @property
    def sampler(self) -> Sampler:
        return self._inner.sampler

    @property
    def mechanism(self) -> ContinualRelease:
        """The inner continual release of the reward moments."""
        return self._inner

    def prefix_variances(self) -> np.ndarray:
        """Per-entry variance of the moments' noise at every step 1 ... horizon."""
        return self._inner.prefix_variances()

    def max_prefix_variance(self) -> float:
        return self._inner.max_prefix_variance()

    def error_bound(self, alpha: float, *, step: int | None = None,
                    uniform: bool = False) -> float:
        """`ContinualRelease.error_bound` (L2) of the released moments; the rest is exact."""
        return self._inner.error_bound(alpha, step=step, uniform=uniform)

    def noise_std(self) -> float:
        """sqrt of the last release's per-entry noise variance (0 before any release)."""
        return math.sqrt(self._inner.prefix_variance()) if self._inner.steps else 0.0

    def __repr__(self) -> str:
        return (f"RewardOnlyRelease(dim={self._dim}, horizon={self.horizon}, "
                f"mechanism={self._inner.kind!r}, sigma={self.sigma:.6g}, steps={self.steps})")
