"""Continual release over secure sums: one stream's noise, carried by the parties' shares.

    secure_continual_release(mechanism, parties, shape, horizon, **options) -> SecureStream
    out = stream.add(increments (parties, *shape), rng, dropped=())   # a SecurePrefix
    out.value, out.variance, out.shares, out.survivors
    stream.event, stream.prefix_variance(step=None), stream.max_prefix_variance(),
    stream.user_level_event(k), stream.sigma, stream.share_sigma, stream.steps

Mechanisms by name, the noise structures of `continual`:

- "tree" (`secure_tree.SecureTree`): each step completes one dyadic node;
  every party sums its own increments of the node, and the node's sum over
  the parties is released by one secure sum; the prefix is the sum of the
  released nodes at the set bits of t (the aggregator's post-processing).
- "mf" (`secure_factorization.SecureFactorization`): every party streams its
  own (C x_i)_t through the BLT factor C (linear, so the parties' values sum
  to (C x)_t), and (C x)_t is released by a secure sum; the aggregator applies
  C^-1 and the prefix sum publicly (B = A C^-1).

Each release is a `secure_sum.SecureAggregation` run: encode on the grid,
a discrete Gaussian share per party, masks, the sum modulo m.  A cluster's
prefix thus carries the noise of ONE stream (any min_survivors - collusion
shares carry it), not one per party.

Error bounds: the prefix noise is a sum of independent discrete Gaussians,
sub-Gaussian with variance proxy sigma**2 per share (Canonne, Kamath &
Steinke 2020, Corollary 9); from 9 grid steps per share (`share_sigma`; the
default grids give thousands) that proxy equals `prefix_variance` in floats,
so `noise_bounds.vector_noise_norm_bound` applies as for the central streams
(its Laurent-Massart form holds for sub-Gaussian vectors: Hsu, Kakade &
Zhang 2012, Theorem 1).

The party set is fixed for the stream's life; any party may drop out of a
release (`dropped`), and a release with fewer than `min_survivors` is refused
(`TooFewSurvivorsError`, nothing released, nothing changed).  A dropped
party's value is missing from that release (the release is the sum over the
survivors); its own state still takes its increment.  For "tree" the prefixes
built on that node lack the party's increments of the node's interval until a
higher node covers them; for "mf" the missing (C x_j)_t enters every later
prefix through B (coefficient b_(t'-t)).  Dropouts are public.
"""
from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from privbandit.accounting import calibration as calib
from privbandit.accounting.errors import invalid
from privbandit.accounting.events import PrivacyEvent, SecureSumEvent
from privbandit.accounting.validation import check_count, check_positive

from ._checks import check_rng, check_shape, clip_rows, real_array
from .pairwise_masks import SimulatedMasks
from .secure_sum import (
    DEFAULT_MAX_WRAP,
    GroupConfig,
    GroupView,
    SecureAggregation,
    secure_view_loss,
    survivors_of,
    taped_values,
)
from .streaming import PrefixStream
from .tape import constructed, tap


@dataclass(frozen=True)
class SecurePrefix:
    """One step of a secure stream: `value` (the noisy prefix sum), `variance` (per entry,
    an upper bound: every party's share present; exact without dropouts), and the
    aggregator's view of the release, `shares` and `survivors`."""

    value: np.ndarray
    variance: float
    shares: np.ndarray
    survivors: np.ndarray


class SecureStream(GroupView, PrefixStream):
    """Base class of the continual-release streams over secure sums (module docstring).

    Arguments: parties, shape (of one party's increment), horizon (the most `add`
    calls), and by keyword: min_survivors, collusion, sigma or (epsilon, delta),
    l2_sensitivity, clip_norm, on_excess, scale, modulus_bits, masks,
    max_wrap_probability, accountant (`secure_sum.SecureSum`'s), records_per_step
    (`add_records`: up to that many records per party and step, each clipped).

    Subclass hooks: `_setup()` (structure and zero state), `_nodes`, `_value_sensitivity()`
    (of one release per declared sensitivity, value units, float error included),
    `_released_dimension()` (entries per event), `_signal_bound()` (largest entry of one
    party's released value, per clip norm), `_event_for(release_event)`,
    `_party_values(x)` (every party's value to release now, (parties, entries)),
    `_advance(noisy)` (the aggregator's prefix from the released sum, state committed),
    `_variance_units(step)`, `_max_variance_units()`, `_state_arrays()`.
    """

    kind: ClassVar[str] = "secure"
    _nodes: int = 1
    # whether one event covers every release (the whole of C x) or one (a tree's node)
    _whole_stream: ClassVar[bool] = False

    def __init__(self, parties: int, shape: object, horizon: int, *,
                 min_survivors: int | None = None, collusion: int = 0,
                 sigma: float | None = None, epsilon: float | None = None,
                 delta: float | None = None, l2_sensitivity: float = 1.0,
                 clip_norm: float | None = None, on_excess: str = "clip",
                 records_per_step: int = 1, scale: float | None = None,
                 modulus_bits: int = 64, masks=None,
                 max_wrap_probability: float = DEFAULT_MAX_WRAP,
                 accountant: str = "zcdp") -> None:
        self._parties = check_count("parties", parties)
        self._shape = check_shape("shape", shape)
        self._entries = max(math.prod(self._shape), 1)
        self._horizon = check_count("horizon", horizon)
        self._records = check_count("records_per_step", records_per_step)
        self._setup()
        factor = self._value_sensitivity()
        sens = check_positive("l2_sensitivity", l2_sensitivity)
        dim = self._released_dimension()
        self._config = GroupConfig.build(self._parties, min_survivors, collusion, sens,
                                         clip_norm, on_excess, scale, entries=dim,
                                         grid_sensitivity=sens * factor)
        cfg = self._config
        self._release_sens = sens * factor
        share = cfg.share_sigma(sigma, epsilon, delta, self._release_sens, dim, self._nodes,
                                accountant)
        bound = self._parties * (math.ldexp(self._signal_bound() * cfg.clip_norm,
                                            -cfg.grid.exponent) + 1.0)
        self._wrap = cfg.check_modulus(modulus_bits, bound, share, self._entries,
                                       max_wrap_probability, releases=self._horizon)
        self._protocol = SecureAggregation(self._parties, min_survivors=cfg.min_survivors,
                                           share_sigma=share, modulus_bits=modulus_bits,
                                           masks=SimulatedMasks() if masks is None else masks)
        self._release_event = self._secure_event(self._release_sens)
        self._event = self._event_for(self._release_event)
        self._steps = 0
        self._clipped = 0
        constructed(self)

    # -- hooks ----------------------------------------------------------------------------
    @abstractmethod
    def _setup(self) -> None: ...

    @abstractmethod
    def _value_sensitivity(self) -> float: ...

    @abstractmethod
    def _released_dimension(self) -> int: ...

    @abstractmethod
    def _signal_bound(self) -> float: ...

    @abstractmethod
    def _event_for(self, release_event: SecureSumEvent) -> PrivacyEvent: ...

    @abstractmethod
    def _party_values(self, x: np.ndarray) -> np.ndarray: ...

    @abstractmethod
    def _advance(self, noisy: np.ndarray) -> np.ndarray: ...

    def _secure_event(self, sensitivity: float) -> SecureSumEvent:
        releases = self._horizon if self._whole_stream else 1
        return calib.secure_sum_event(
            self._protocol.share_sigma, sensitivity, min_survivors=self._config.min_survivors,
            scale=self._config.grid.scale, dimension=self._released_dimension(),
            collusion=self._config.collusion,
            wrap_probability=min(1.0, releases * self._wrap))

    # -- the stream -----------------------------------------------------------------------
    def add(self, increments: object, rng: np.random.Generator, *,
            dropped: object = ()) -> SecurePrefix:
        """Every party's next increment (rows of (parties, *shape)), clipped; the prefix.

        Raises HorizonExceededError past the horizon, TooFewSurvivorsError, ShapeError,
        InvalidParameterError, OutOfBoundsError ("reject"); a refused call changes nothing.
        """
        x = real_array("increments", increments, (self._parties, *self._shape))
        x, clipped = clip_rows(x.reshape(self._parties, -1), self._config.clip_norm,
                               self._config.on_excess, "increments")
        return self._step(x, clipped, rng, dropped)

    def add_records(self, records: object, rng: np.random.Generator, *,
                    dropped: object = ()) -> SecurePrefix:
        """Up to records_per_step records per party, (parties, R, *shape), each clipped and
        summed per party, released as one step (a record still enters one step)."""
        batch = real_array("records", records, None)
        if batch.ndim != len(self._shape) + 2 or batch.shape[0] != self._parties or (
                batch.shape[2:] != self._shape):
            raise invalid("records", f"an array of shape {batch.shape}",
                          f"an array of shape ({self._parties}, R, "
                          f"{', '.join(map(str, self._shape))})")
        if not 1 <= batch.shape[1] <= self._records:
            raise invalid("records", f"{batch.shape[1]} records per party",
                          f"between 1 and records_per_step = {self._records}")
        rows, clipped = clip_rows(batch.reshape(self._parties, batch.shape[1], -1),
                                  self._config.clip_norm, self._config.on_excess, "records")
        return self._step(rows.sum(axis=1), clipped, rng, dropped)

    def _step(self, x: np.ndarray, clipped: int, rng, dropped) -> SecurePrefix:
        self.check_open("add")
        survivors = survivors_of(dropped, self._parties)
        self._protocol.check_survivors(survivors)
        rng = check_rng(rng)
        values = self._party_values(x)
        encoded = self._config.grid._encode(values, rng)
        result = self._protocol.run(encoded, rng, survivors)
        out = self._advance(self._config.grid.decode(result.total))
        self._steps += 1
        self._clipped += clipped
        value = tap(self, taped_values(encoded, result), out.reshape(self._shape),
                    result.view())
        return SecurePrefix(value, self.prefix_variance(), result.shares, result.survivors)

    def pair_loss(self, first: list[np.ndarray], second: list[np.ndarray]) -> tuple[float, float]:
        """(mu**2, 0) of two runs' views of the released sums, every masked share included
        (`secure_sum.secure_view_loss`)."""
        return secure_view_loss(first, second, self._release_event), 0.0

    # -- noise ------------------------------------------------------------------------------
    def _unit_variance(self) -> float:
        """Per-entry variance (value units) of one release's summed noise, all parties."""
        return self._protocol.noise_variance(self._parties) * self.scale**2

    def user_level_event(self, participations: int) -> PrivacyEvent:
        """The event of a unit with up to k increments: k x the value sensitivity (triangle
        inequality), the rounding slack once per release."""
        k = check_count("participations", participations)
        return self._event_for(self._secure_event(k * self._release_sens))

    # -- read-only view -------------------------------------------------------------------
    @property
    def event(self) -> PrivacyEvent:
        """The whole stream's event for one record (charge it once, before releasing)."""
        return self._event

    @property
    def release_event(self) -> SecureSumEvent:
        """The secure sum the event is built from (a node, or the whole of C x)."""
        return self._release_event

    @property
    def wrap_probability(self) -> float:
        """Bound on the chance that any release of the horizon decodes wrongly."""
        return min(1.0, self._horizon * self._wrap)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(parties={self._parties}, shape={self._shape}, "
                f"horizon={self._horizon}, sigma={self.sigma:.6g}, steps={self._steps})")
