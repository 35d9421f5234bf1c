"""The continual-release interface: add an increment, get the noisy prefix sum.

`ContinualRelease` is the base of every continual-release mechanism
(`tree.TreePrivatizer`, `honaker.HonakerTree`, `factorization.MatrixFactorization`;
build one by name with `continual.continual_release`).  It holds what they
share: validation of the construction arguments, calibration of sigma from
(epsilon, delta), validation and clipping of increments, the horizon (counted
in releases: calls to `add`), the prefix-noise variance API and the PSD shift.

A subclass describes its structure through a few hooks:

- `_setup()`: build the structure and the zero state (called once shape,
  horizon and sampler are validated);
- `_nodes` (int): Gaussian releases one record meets (tree nodes; 1 for a
  factorization, whose whole stream is one Gaussian release);
- `_effective_sensitivity()`: the sensitivity of what the sampler actually
  receives, float arithmetic and the exact sampler's grid included;
- `_event_for(sigma, sensitivity)`: the privacy event;
- `_advance(x, rng)`: release one step (noise added BY the sampler to the
  mechanism's released values), commit the state, return the noisy prefix;
- `_variance_units(step)`, `_variance_units_all()` (every step at once,
  vectorised), `_max_variance_units()`: prefix-noise variance per entry in
  units of sigma**2;
- `_state_arrays()`: the arrays the stream keeps (for `state_size`).
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from privbandit.accounting import calibration as calib
from privbandit.accounting.accountants import Accountant
from privbandit.accounting.errors import invalid
from privbandit.accounting.events import PrivacyEvent
from privbandit.accounting.validation import check_count, check_delta, check_positive

from . import noise_bounds
from ._checks import check_choice, check_rng, check_shape, real_array
from .errors import HorizonExceededError, OutOfBoundsError
from .samplers import Sampler, resolve_sampler
from .tape import constructed, tap, whiten_symmetric

UNIT_ROUNDOFF = 2.0**-53
# relative asymmetry tolerated (and removed) in symmetric increments
_SYMMETRY_TOL = 1e-9


def gamma(n: int) -> float:
    """Higham's gamma_n = n u / (1 - n u): relative error bound of n float operations."""
    return n * UNIT_ROUNDOFF / (1 - n * UNIT_ROUNDOFF)


class PrefixStream(ABC):
    """What every stream of noisy prefix sums shares (`ContinualRelease`, the secure streams
    of `secure_stream`): the horizon check, the prefix-noise variance, the read-only counts.

    Subclasses set `_steps`, `_horizon`, `_clipped`, `_shape`, `_records`, `_nodes`, `kind`
    and implement `_unit_variance()` (per-entry variance of one release's noise),
    `_variance_units(step)`, `_variance_units_all()`, `_max_variance_units()` and
    `_state_arrays()`.
    """

    @abstractmethod
    def _unit_variance(self) -> float: ...

    @abstractmethod
    def _variance_units(self, step: int) -> float: ...

    @abstractmethod
    def _variance_units_all(self) -> np.ndarray:
        """`_variance_units(t)` for t = 1 ... horizon, shape (horizon,), vectorised."""

    @abstractmethod
    def _max_variance_units(self) -> float: ...

    @abstractmethod
    def _state_arrays(self) -> tuple[np.ndarray, ...]: ...

    def check_open(self, caller: str) -> None:
        """Raise HorizonExceededError (naming `caller`) when every step of the horizon was
        used; a caller that changes state before its step asks first."""
        if self._steps >= self._horizon:
            raise HorizonExceededError(
                f"{caller}: the {self.kind} mechanism's horizon is {self._horizon} releases and "
                f"all were used; build a new {type(self).__name__} for further steps")

    def prefix_variance(self, step: int | None = None) -> float:
        """Per-entry variance of the noise in the prefix released at `step` (default: the last).

        A linear combination of independent node or release noises: exact for
        the central streams; for symmetric noise this is the off-diagonal
        variance (the diagonal has twice as much); for the secure streams every
        party's share is counted (exact without dropouts, an upper bound with
        them).  `step` counts releases, 1 ... horizon.
        """
        if step is None:
            if not self._steps:
                raise invalid("step", step, "an integer in [1, horizon] (nothing released yet)")
            step = self._steps
        step = check_count("step", step)
        if step > self._horizon:
            raise invalid("step", step, f"an integer in [1, horizon = {self._horizon}]")
        return self._unit_variance() * self._variance_units(step)

    def prefix_variances(self) -> np.ndarray:
        """`prefix_variance(t)` for every step t = 1 ... horizon, shape (horizon,), vectorised.

        Agrees with `prefix_variance(t)` to a relative 1e-12 (the sums may be
        taken in another order); its largest entry is `max_prefix_variance()`.
        """
        return self._unit_variance() * self._variance_units_all()

    def max_prefix_variance(self) -> float:
        """The largest `prefix_variance` over the horizon (use it for bounds at every step)."""
        return self._unit_variance() * self._max_variance_units()

    @property
    def steps(self) -> int:
        return self._steps

    @property
    def horizon(self) -> int:
        return self._horizon

    @property
    def clipped(self) -> int:
        """How many increments (or records) were scaled down to clip_norm."""
        return self._clipped

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def records_per_step(self) -> int:
        return self._records

    @property
    def nodes_per_record(self) -> int:
        """Releases one record meets (tree nodes; 1 for a factorization)."""
        return self._nodes

    @property
    def state_size(self) -> int:
        """Numbers the stream keeps between steps (its memory)."""
        return sum(a.size for a in self._state_arrays())


class ContinualRelease(PrefixStream):
    """Base class: noisy prefix sums of a stream of increments (see the module docstring).

    Constructor arguments (shared by every mechanism):
    shape, horizon (most `add` calls), sigma or (epsilon, delta),
    l2_sensitivity, calibration ("tight"; "paper" for trees), symmetric,
    on_excess ("clip" | "reject"), psd_shift, psd_alpha, clip_norm,
    paper_formula, sampler, accountant (the one tight calibration certifies
    with: "exact-gaussian" by default, or the name or a fresh instance of the
    ledger's own, e.g. "rdp", so that ledger accepts the stream at exactly its
    budget).  See `tree.TreePrivatizer` for their meaning.
    records_per_step: the most records one step may hold (`add_records`);
    the float-error slack in the event grows with it.

    Batched steps.  `add(increment)` treats the increment as one record,
    clipped to clip_norm.  `add_records(records)` releases the sum of up to
    `records_per_step` records as one step, clipping each record to clip_norm:
    two neighbouring streams that differ in one record then still differ in
    one step by at most l2_sensitivity, so the event is unchanged.  A caller
    that releases a batch of observations at each scheduled time (each record
    in one release) uses it.
    """

    kind: ClassVar[str] = "continual"
    paper_calibration: ClassVar[bool] = False

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
        records_per_step: int = 1,
        accountant: "str | Accountant" = "exact-gaussian",
    ) -> None:
        self._shape = check_shape("shape", shape)
        self._horizon = check_count("horizon", horizon)
        self._records = check_count("records_per_step", records_per_step)
        self._sensitivity = check_positive("l2_sensitivity", l2_sensitivity)
        self._clip = self._sensitivity if clip_norm is None else check_positive(
            "clip_norm", clip_norm)
        if self._clip > self._sensitivity:
            raise invalid("clip_norm", clip_norm, f"<= l2_sensitivity = {self._sensitivity:g}")
        self._symmetric = check_flag("symmetric", symmetric)
        if self._symmetric and (len(self._shape) != 2 or self._shape[0] != self._shape[1]):
            raise invalid("shape", shape, "a square (D, D) shape when symmetric=True")
        self._on_excess = check_choice("on_excess", on_excess, ("clip", "reject"))
        self._sampler = resolve_sampler(sampler)
        self._setup()
        self._event_sensitivity = self._effective_sensitivity()
        self._sigma = self._resolve_sigma(
            sigma, epsilon, delta, check_choice("calibration", calibration, ("tight", "paper")),
            paper_formula, accountant)
        self._shift = self._resolve_shift(check_flag("psd_shift", psd_shift), psd_alpha)
        self._event = self._event_for(self._sigma, self._event_sensitivity)
        self._steps = 0
        self._clipped = 0
        constructed(self)

    # -- hooks ----------------------------------------------------------------------
    _nodes: int = 1

    @abstractmethod
    def _setup(self) -> None:
        """Build the structure and the stream state (shape, horizon and sampler are set)."""

    @abstractmethod
    def _effective_sensitivity(self) -> float: ...

    @abstractmethod
    def _event_for(self, sigma: float, sensitivity: float) -> PrivacyEvent: ...

    @abstractmethod
    def _advance(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...

    def _shift_for(self, alpha: float) -> float:
        """The PSD shift from this mechanism's own prefix-noise variance, all steps at once."""
        return noise_bounds.psd_shift(self.max_prefix_variance(), self._shape[0],
                                      alpha / self._horizon)

    # -- construction helpers -------------------------------------------------------
    def _entries(self) -> int:
        return max(math.prod(self._shape), 1)

    def _released_entries(self) -> int:
        """Entries the sampler draws per released value (the upper triangle if symmetric)."""
        if self._symmetric:
            dim = self._shape[0]
            return dim * (dim + 1) // 2
        return math.prod(self._shape)

    def _resolve_sigma(self, sigma, epsilon, delta, how, paper_formula, accountant) -> float:
        if (sigma is not None or how != "tight") and not (
                isinstance(accountant, str) and accountant == "exact-gaussian"):
            raise invalid("accountant", accountant, "'exact-gaussian' (unused) unless the "
                          "calibration is tight from epsilon and delta")
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
                epsilon, delta, self._event_sensitivity, nodes_per_record=self._nodes,
                accountant=accountant)
        if not self.paper_calibration:
            raise invalid("calibration", how,
                          f"'tight' for the {self.kind!r} mechanism (the papers' formulas are "
                          f"for trees)")
        return calib.paper_tree_sigma(epsilon, delta, self._event_sensitivity,
                                      horizon=self._horizon, formula=paper_formula)

    def _resolve_shift(self, psd_shift: bool, psd_alpha: float) -> float:
        if not psd_shift:
            return 0.0
        if not self._symmetric:
            raise invalid("psd_shift", psd_shift, "False unless symmetric=True")
        return self._shift_for(check_probability("psd_alpha", psd_alpha))

    # -- the stream -----------------------------------------------------------------
    def add(self, increment: object, rng: np.random.Generator) -> np.ndarray:
        """Add the next increment and return the noisy prefix sum (same shape).

        Raises HorizonExceededError past the horizon, ShapeError for a wrong
        shape or dtype, InvalidParameterError for NaN/inf or (symmetric) an
        asymmetric matrix, OutOfBoundsError over clip_norm with
        on_excess="reject"; a refused call changes nothing.
        """
        self.check_open("add")
        check_rng(rng)
        return self._step(*self._prepare(increment), rng)

    def add_records(self, records: object, rng: np.random.Generator) -> np.ndarray:
        """Release the sum of `records` (R, *shape), 1 <= R <= records_per_step, as one step.

        Each record is validated and clipped to clip_norm (or refused with
        on_excess="reject") before the sum; returns the noisy prefix sum.  A
        refused call changes nothing.
        """
        batch = real_array("records", records, None)
        if batch.ndim != len(self._shape) + 1 or batch.shape[1:] != self._shape:
            raise invalid("records", f"an array of shape {batch.shape}",
                          f"an array of shape (R, {', '.join(map(str, self._shape))})")
        count = batch.shape[0]
        if not 1 <= count <= self._records:
            raise invalid("records", f"{count} records",
                          f"between 1 and records_per_step = {self._records}")
        self.check_open("add_records")
        check_rng(rng)
        return self._step(*self._prepare_batch(batch), rng)

    def add_bounded(self, total: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Advance by an increment whose sensitivity the CALLER bounded (no clipping here)
        and return the noisy prefix: for a mechanism that builds the increment itself from
        parts it clipped (`reward_only.RewardOnlyRelease`), never for raw user data.  A
        caller that must refuse before changing anything checks `check_open` first."""
        self.check_open("add_bounded")
        check_rng(rng)
        x = np.asarray(total, dtype=np.float64).reshape(self._shape)
        return self._step(x, 0, rng)

    def _step(self, x: np.ndarray, clipped: int, rng: np.random.Generator) -> np.ndarray:
        """Advance by the validated increment x; the noisy prefix, shifted if asked."""
        out = self._advance(x, rng)
        self._steps += 1
        self._clipped += clipped
        if self._shift:
            out.ravel()[:: self._shape[0] + 1] += self._shift  # the diagonal, in place
        return tap(self, x, out)

    # -- the loss of one neighbouring pair (`tape.pair_loss`) ---------------------------
    def _core_sensitivity(self) -> float:
        """The declared sensitivity in the released values' units: symmetric noise has
        twice the variance on the diagonal, so a symmetric difference D is hidden like
        ||D||_F / sqrt(2) (`tape.whiten_symmetric`)."""
        return self._sensitivity / math.sqrt(2.0) if self._symmetric else self._sensitivity

    def pair_loss(self, first: list[np.ndarray], second: list[np.ndarray]) -> tuple[float, float]:
        """(mu**2, 0): the Gaussian-DP loss of two streams of step increments (whitened
        differences through the mechanism's linear map, over sigma**2)."""
        diff = np.asarray(first, dtype=float) - np.asarray(second, dtype=float)
        diff = whiten_symmetric(diff) if self._symmetric else diff.reshape(diff.shape[0], -1)
        return self._encoded_norm2(diff) / self._sigma**2, 0.0

    def _encoded_norm2(self, diff: np.ndarray) -> float:
        """||L diff||^2 for the (steps, entries) differences, L the map whose image carries
        independent N(0, sigma^2) noise.  Default: a binary tree's dyadic nodes, every
        level up to `_nodes` (an upper bound when a level's last node is never released)."""
        total = 0.0
        steps = np.arange(diff.shape[0])
        for level in range(self._nodes):
            node = steps >> level
            sums = np.zeros((int(node[-1]) + 1, diff.shape[1]))
            np.add.at(sums, node, diff)
            total += float(np.sum(sums**2))
        return total

    def _prepare_batch(self, batch: np.ndarray) -> tuple[np.ndarray, int]:
        """The sum of the validated, symmetrised and clipped records, and how many were clipped."""
        flat = batch.reshape(batch.shape[0], -1)
        norms = np.sqrt(np.einsum("ri,ri->r", flat, flat))
        if not np.all(np.isfinite(norms)):  # squares overflowed: the careful norm, record by record
            norms = np.array([frobenius(r) for r in batch])
        if self._symmetric:
            skew = batch - np.swapaxes(batch, 1, 2)
            gaps = np.sqrt(np.einsum("rij,rij->r", skew, skew))
            bad = np.flatnonzero(gaps > _SYMMETRY_TOL * (1.0 + norms))
            if bad.size:
                raise invalid("records", f"record {bad[0]} with ||x - x.T|| = {gaps[bad[0]]:.3g}",
                              "symmetric matrices (symmetric=True)")
            batch = (batch + np.swapaxes(batch, 1, 2)) * 0.5
            norms = np.sqrt(np.einsum("rij,rij->r", batch, batch))
        over = norms > self._clip
        if over.any() and self._on_excess == "reject":
            raise OutOfBoundsError(
                f"records must have L2/Frobenius norm <= clip_norm = {self._clip:g} "
                f"(on_excess='reject'); got a record of norm {norms[over].max():.6g}")
        scale = np.where(over, self._clip / np.where(over, norms, 1.0), 1.0)
        return np.einsum("r,r...->...", scale, batch), int(over.sum())

    def _prepare(self, increment: object) -> tuple[np.ndarray, bool]:
        """The validated, symmetrised and clipped increment, and whether it was clipped."""
        x = real_array("increment", increment, self._shape)
        norm = frobenius(x)
        if self._symmetric:
            skew = x - x.T
            gap = frobenius(skew)
            if gap > _SYMMETRY_TOL * (1.0 + norm):
                raise invalid("increment", f"a matrix with ||x - x.T|| = {gap:.3g}",
                              "a symmetric matrix (symmetric=True)")
            if gap:
                x = (x + x.T) * 0.5  # exactly symmetric: float addition commutes
                norm = frobenius(x)
        if norm > self._clip:
            if self._on_excess == "reject":
                raise OutOfBoundsError(
                    f"increment must have L2/Frobenius norm <= clip_norm = {self._clip:g} "
                    f"(on_excess='reject'); got norm {norm:.6g}")
            return x * (self._clip / norm), True
        return x, False

    def _noisy(self, value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """`value` released through the sampler (the only place noise is added)."""
        if self._symmetric:
            return self._sampler._add_symmetric(value, self._sigma, rng)
        return self._sampler._add_gaussian(value, self._sigma, rng)

    def _unit_variance(self) -> float:
        return self._sigma**2

    def error_bound(self, alpha: float, *, step: int | None = None, uniform: bool = False,
                    norm: str = "l2") -> float:
        """A bound on the error of released prefixes, holding with probability >= 1 - alpha.

        The error is the release minus the exact prefix sum of the (clipped)
        increments: the prefix noise, plus the PSD shift when there is one.
        One step: `step` (1 ... horizon; default the last release).
        `uniform=True`: every step 1 ... horizon at once, by a union bound
        (each step at alpha / horizon, with the largest prefix variance).
        `norm`: "l2" over all entries (Frobenius for matrices) or "operator"
        (the spectral norm of a 2-D release).

        The prefix noise is Gaussian with per-entry variance v =
        `prefix_variance(step)` (independent entries; symmetric noise has
        N(0, v) off the diagonal and N(0, 2 v) on it, independent up to
        symmetry), or discrete Gaussian with the grid and exact samplers,
        v-sub-Gaussian per entry (`noise_bounds`).  L2: the chi-square tail
        (`noise_bounds.vector_noise_norm_bound`) over the entries, or over the
        d (d + 1) / 2 free entries of symmetric noise, whose squared Frobenius
        norm is exactly 2 v times a chi-square of that many degrees.
        Operator: `symmetric_noise_norm_bound` (symmetric) or
        `gaussian_matrix_norm_bound`.  The shift adds shift * sqrt(d) (L2) or
        shift (operator) by the triangle inequality.
        """
        norm = check_choice("norm", norm, ("l2", "operator"))
        if norm == "operator" and len(self._shape) != 2:
            raise invalid("norm", norm, f"'l2' for releases of shape {self._shape} "
                          "('operator' needs a matrix)")
        if uniform:
            if step is not None:
                raise invalid("step", step, "None when uniform=True (every step is bounded)")
            variance = self.max_prefix_variance()
            alpha = check_probability("alpha", alpha) / self._horizon
        else:
            variance = self.prefix_variance(step)
            alpha = check_probability("alpha", alpha)
        return self._noise_norm_bound(variance, alpha, norm)

    def _noise_norm_bound(self, variance: float, alpha: float, norm: str) -> float:
        """The bound of `error_bound` for one prefix of per-entry variance `variance`."""
        if self._symmetric:
            dim = self._shape[0]
            if norm == "operator":
                return noise_bounds.symmetric_noise_norm_bound(variance, dim, alpha) + self._shift
            free = dim * (dim + 1) // 2
            return (noise_bounds.vector_noise_norm_bound(2.0 * variance, free, alpha)
                    + self._shift * math.sqrt(dim))
        if norm == "operator":
            return noise_bounds.gaussian_matrix_norm_bound(variance, *self._shape, alpha)
        return noise_bounds.vector_noise_norm_bound(variance, self._entries(), alpha)

    def user_level_event(self, participations: int) -> PrivacyEvent:
        """The event for a unit contributing up to `participations` increments (a user's stream).

        Triangle inequality: the k increments' contributions to the released
        values add, so the sensitivity of the whole release grows at most k
        times (k x the nodes' sensitivity for a tree, k x the largest column
        norm for a factorization), whatever the positions of the k increments.
        """
        k = check_count("participations", participations)
        return self._event_for(self._sigma, k * self._event_sensitivity)

    # -- read-only view -------------------------------------------------------------
    @property
    def event(self) -> PrivacyEvent:
        """The whole stream's privacy event for one record (charge it once, before releasing)."""
        return self._event

    @property
    def sigma(self) -> float:
        """Per-entry standard deviation of each node or release noise (off-diagonal)."""
        return self._sigma

    @property
    def symmetric(self) -> bool:
        return self._symmetric

    @property
    def l2_sensitivity(self) -> float:
        """The declared sensitivity (the event's adds float and grid slack)."""
        return self._sensitivity

    @property
    def clip_norm(self) -> float:
        return self._clip

    @property
    def shift(self) -> float:
        """The multiple of I added to every release (0.0 without psd_shift)."""
        return self._shift

    @property
    def sampler(self) -> Sampler:
        return self._sampler

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(shape={self._shape}, horizon={self._horizon}, "
                f"sigma={self._sigma:.6g}, steps={self._steps}, sampler={self._sampler!r})")


def frobenius(x: np.ndarray) -> float:
    """L2 norm over all entries, without overflow for huge finite entries."""
    squares = float(np.vdot(x, x))
    if math.isfinite(squares):
        return math.sqrt(squares)
    top = float(np.abs(x).max())
    return top * math.sqrt(float(np.vdot(x / top, x / top)))


def check_probability(name: str, value: object) -> float:
    """A failure probability in (0, 1)."""
    p = check_positive(name, value)
    if p >= 1.0:
        raise invalid(name, value, "a probability in (0, 1)")
    return p


def check_flag(name: str, value: object) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise invalid(name, value, "True or False")
    return bool(value)
