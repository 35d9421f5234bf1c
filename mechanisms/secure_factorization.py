"""Matrix-factorization counting over secure sums: the parties' C x, one secure sum per step.

Every party streams its own (C x_i)_t through the buffered-linear-Toeplitz
factor C (`blt.sqrt_blt`, `buffers` arrays per party, every party at once);
C is linear, so the parties' values sum to (C x)_t, released by one
`secure_sum.SecureAggregation` with the noise of one release.  The aggregator
applies C^-1 and the prefix sum to the released y_t (B = A C^-1, public
post-processing, `factorization.MatrixFactorization`'s recursion).
"""
from __future__ import annotations

import numpy as np

from privbandit.accounting.events import FactorizationEvent, SecureSumEvent
from privbandit.accounting.validation import check_count

from .blt import BufferedToeplitz, sqrt_blt
from .factorization import (
    DEFAULT_BUFFERS,
    FactorizationNoise,
    _column_norm,
    column_sensitivity,
)
from .secure_stream import SecureStream
from .streaming import gamma


class SecureFactorization(FactorizationNoise, SecureStream):
    """Noisy prefix sums over parties by the streamed factorization A = B C (module docstring).

    Arguments: `secure_stream.SecureStream`'s, plus `buffers` (default 8): the BLT
    factor's buffers.  Prefix noise per entry: sum_(k < t) b_k**2 release noises
    (`prefix_variance`), each the sum of the surviving parties' shares.

    Privacy guarantee
    -----------------
    Neighbouring relation: record-level -- one party's increment at one step
    differs by at most l2_sensitivity in L2 (after clipping).  Observer: the
    aggregator with up to `collusion` colluding parties (`SecureSum`'s trust
    model).  Mechanism: the whole stream of encoded releases of C x is ONE
    secure sum of horizon x entries values; a change at step s moves column s
    of C times the difference, so the value sensitivity is l2_sensitivity x
    (1 + gamma_(entries+4)) x `factorization.column_sensitivity` (the largest
    column norm of C, float error of both neighbours' streams); on the grid:
    / scale + sqrt(horizon x entries) (stochastic rounding of every value the
    change may move, `integer_grid`).  Event: FactorizationEvent(
    SecureSumEvent(share sigma, min_survivors - collusion, that sensitivity,
    horizon x entries, sqrt(horizon x entries), wrap over the horizon),
    column_norm, horizon), accounted by zCDP or RDP (Kairouz, Liu & Steinke
    2021, Theorem 1).  Prefixes are post-processing.  `user_level_event(k)`:
    k x the value sensitivity.  Assumptions: the horizon counts releases and
    is fixed in advance; the party set is fixed; dropouts are public.
    Sources: Denisov et al. (2022); Dvijotham, McKenna et al. (2024);
    Kairouz, Liu & Steinke (2021); Bonawitz et al. (2017).
    """

    kind = "mf"
    _whole_stream = True

    def __init__(self, parties: int, shape: object, horizon: int, *,
                 buffers: int = DEFAULT_BUFFERS, **options) -> None:
        self._factor = sqrt_blt(check_count("horizon", horizon), buffers)
        super().__init__(parties, shape, horizon, **options)

    def _setup(self) -> None:
        f = self._factor
        self._omega = np.asarray(f.omega)
        self._decay = np.asarray(f.theta)[:, None]
        self._column_norm = _column_norm(f, self._horizon)
        e = self._entries
        self._party_buffers = np.zeros((f.buffers, self._parties * e))  # S_j of every C x_i
        # the aggregator: C^-1 y buffers (:e) and C^-1 of a unit impulse (last column)
        self._buffers = np.zeros((f.buffers, e + 1))
        self._sum = np.zeros(e)

    def _value_sensitivity(self) -> float:
        return (1.0 + gamma(self._entries + 4)) * column_sensitivity(
            self._factor, self._horizon, self._records)

    def _released_dimension(self) -> int:
        return self._horizon * self._entries

    def _signal_bound(self) -> float:
        # c_k > 0 (theta, omega > 0): |(C x_i)_t| <= sum_(k < T) c_k per clip norm and record
        return self._factor.coefficient_sum(self._horizon) * self._records * (1.0 + 1e-9)

    def _event_for(self, release_event: SecureSumEvent) -> FactorizationEvent:
        return FactorizationEvent(release_event, self._column_norm, self._horizon)

    def _party_values(self, x: np.ndarray) -> np.ndarray:
        self._x = x.ravel()
        return (self._x + self._omega @ self._party_buffers).reshape(self._parties, -1)

    def _advance(self, noisy: np.ndarray) -> np.ndarray:
        e = self._entries
        weighted = self._omega @ self._buffers
        w = noisy - weighted[:e]  # (C^-1 y)_t
        d = (1.0 if self._steps == 0 else 0.0) - float(weighted[-1])
        out = self._sum + w
        self._party_buffers *= self._decay
        self._party_buffers += self._x
        self._buffers *= self._decay
        self._buffers[:, :e] += w
        self._buffers[:, -1] += d
        self._sum = out
        return out

    def _state_arrays(self) -> tuple[np.ndarray, ...]:
        return (self._party_buffers, self._buffers, self._sum)

    @property
    def factor(self) -> BufferedToeplitz:
        return self._factor

    @property
    def column_norm(self) -> float:
        return self._column_norm

    @property
    def buffers(self) -> int:
        return self._factor.buffers
