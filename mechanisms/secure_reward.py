"""Reward-only continual release over secure sums: one stream's noise for the records of many
parties, their Gram matrix public.

    stream = SecureRewardOnlyRelease(parties, dim, horizon, mechanism="mf", epsilon=..,
                                     delta=.., feature_bound=B, records_per_step=R)
    out = stream.add([features_0, ..., features_(n-1)], [rewards_0, ...], rng, dropped=())
    out.gram, out.features, out.count   # public prefix sums over every party's records
    out.moments, out.variance           # noisy prefix sum of y x, one stream's noise
    out.shares, out.survivors           # the aggregator's view of the step

`reward_only.RewardOnlyRelease` when the records of one sum are held by
several parties who must not show them to the aggregator: each party's
records (x, y) -- features marked public by that party's `Publication`
(`PublicFeatures`), rewards secret -- enter its step as centred rows
(y - c) x, c = (lo + hi) / 2, and the parties' rows are summed by a secure
continual release (`secure_continual_release`: "mf" or "tree"), so the
aggregator learns the noisy prefix of sum y x over all parties with the noise
of ONE stream, carried by the parties' discrete Gaussian shares.  Each party
publishes the public part of its own records (its prefix of sum x x^T, sum x
and its count, on its publication's channel `reward_only.PUBLIC_PART`); the
released public prefix is their sum.

A party that drops out of a step sends nothing: its records of that step
wait, and enter its next step it survives (its public part counts them only
then, so the public and the noisy prefixes always cover the same records).
Records still waiting after the last step are never released.

Privacy guarantee
-----------------
Neighbouring relation: as `RewardOnlyRelease` -- records with the same
(public) features whose rewards differ in one record (replace-one of y),
actions adapting when the features come from released data.  Observer: the
aggregator, honest but curious, with up to `collusion` colluding parties
(`secure_sum.SecureSum`'s trust model).  Sensitivity: ||x|| <= B (larger
features are refused), rewards clipped to [lo, hi]; a record's row (y - c) x
has norm <= (hi - lo) B / 2 (the stream's clip norm, which never binds) and a
changed reward moves it by <= (hi - lo) B, the stream's l2_sensitivity.
Each record enters exactly one step of one party.  Event: the secure
stream's (`SecureFactorization` or `SecureTree`: SecureSumEvent inside,
read by the "zcdp" and "rdp" accountants, refused by the others), the whole
cost of a record.  Sources: Shariff & Sheffet (2018) and Hanna, Girgis &
Fragouli (2022) for noising only the rewards' part; the secure streams'
sources (Kairouz, Liu & Steinke 2021; Bonawitz et al. 2017; Denisov et al.
2022).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from privbandit.accounting.errors import invalid

from ._checks import check_rng, real_array
from .errors import OutOfBoundsError
from .publication import PublicFeatures
from .reward_only import _NORM_TOL, PUBLIC_PART, RewardRelease, _StreamView
from .secure_continual import secure_continual_release
from .secure_stream import SecureStream
from .secure_sum import survivors_of


@dataclass(frozen=True)
class SecureRewardRelease(RewardRelease):
    """One step (`RewardRelease`'s fields, over every party's released records) and the
    aggregator's view of it: the survivors' masked `shares` and `survivors`."""

    shares: np.ndarray
    survivors: np.ndarray


class SecureRewardOnlyRelease(_StreamView):
    """Reward-only continual release summed over parties by secure sums (module docstring).

    parties: n; dim: d; horizon: the most steps, fixed in advance; mechanism: "mf" or
    "tree"; sigma (value units, the noise min_survivors - collusion shares carry), or
    epsilon and delta (calibrated by `accountant`, "zcdp" or "rdp"); feature_bound: B;
    reward_range: (lo, hi); records_per_step: the most records one party's step holds
    (waiting records of a dropped party included); min_survivors, collusion, masks,
    modulus_bits, max_wrap_probability: the secure stream's (`secure_sum.SecureSum`).
    """

    def __init__(self, parties: int, dim: int, horizon: int, *, mechanism: str = "mf",
                 sigma: float | None = None, epsilon: float | None = None,
                 delta: float | None = None, feature_bound: float = 1.0,
                 reward_range: tuple[float, float] = (0.0, 1.0), records_per_step: int = 1,
                 min_survivors: int | None = None, collusion: int = 0, masks=None,
                 modulus_bits: int = 64, max_wrap_probability: float | None = None,
                 accountant: str = "zcdp") -> None:
        self._set_range(dim, feature_bound, reward_range)
        width = (self._hi - self._lo) * self._bound
        wrap = {} if max_wrap_probability is None else {
            "max_wrap_probability": max_wrap_probability}
        self._inner: SecureStream = secure_continual_release(
            mechanism, parties, (self._dim,), horizon, sigma=sigma, epsilon=epsilon,
            delta=delta, l2_sensitivity=width, clip_norm=0.5 * width,
            records_per_step=records_per_step, min_survivors=min_survivors,
            collusion=collusion, masks=masks, modulus_bits=modulus_bits,
            accountant=accountant, **wrap)
        n = self._inner.parties
        self._gram = np.zeros((n, self._dim, self._dim))  # each party's public prefix
        self._features = np.zeros((n, self._dim))
        self._count = np.zeros(n, dtype=np.int64)
        self._waiting: list[tuple[np.ndarray, np.ndarray] | None] = [None] * n
        self._clipped = 0

    def add(self, features: Sequence[PublicFeatures], rewards: Sequence[object],
            rng: np.random.Generator, *, dropped: object = ()) -> SecureRewardRelease:
        """Release the next step: party i's records `features[i]` ((R_i, d) PublicFeatures,
        R_i >= 0) and `rewards[i]` (R_i,).  Dropped parties' records wait (module
        docstring).  Refuses bare arrays, features over the bound, shapes or counts out of
        range and NaN or infinite values; a refused call changes nothing."""
        n = self._inner.parties
        if len(features) != n or len(rewards) != n:
            raise invalid("features, rewards", (len(features), len(rewards)),
                          f"one entry per party ({n} each)")
        alive = survivors_of(dropped, n)
        rows = [self._checked(p, f, r) for p, (f, r) in enumerate(zip(features, rewards,
                                                                      strict=True))]
        rows = [_joined(self._waiting[p], rows[p]) for p in range(n)]
        most = max(max((x.shape[0] for x, _ in rows), default=0), 1)
        if most > self._inner.records_per_step:
            raise invalid("records", f"{most} records of one party in a step",
                          f"at most records_per_step = {self._inner.records_per_step}")
        check_rng(rng)
        batch = np.zeros((n, most, self._dim))
        for p, (x, y) in enumerate(rows):
            if alive[p] and x.shape[0]:
                batch[p, :x.shape[0]] = (np.clip(y, self._lo, self._hi) - self._centre)[:, None] * x
        out = self._inner.add_records(batch, rng, dropped=dropped)  # refusals change nothing
        gram, feats = self._gram.copy(), self._features.copy()
        count = self._count.copy()
        for p, (x, y) in enumerate(rows):
            if not alive[p]:
                continue
            gram[p] += x.T @ x
            feats[p] += x.sum(axis=0)
            count[p] += x.shape[0]
            self._clipped += int(np.sum((y < self._lo) | (y > self._hi)))
        public = [features[p].by.value(PUBLIC_PART, np.concatenate(
            (gram[p].ravel(), feats[p], [count[p]]))) for p in range(n)]
        self._gram, self._features, self._count = gram, feats, count
        self._waiting = [None if alive[p] else rows[p] for p in range(n)]
        d = self._dim
        total = np.sum(public, axis=0)
        return SecureRewardRelease(
            total[:d * d].reshape(d, d), total[d * d:d * d + d], int(total[-1]),
            out.value + self._centre * total[d * d:d * d + d], out.variance,
            self._inner.steps, out.shares, out.survivors)

    def _checked(self, party: int, features: object, rewards: object
                 ) -> tuple[np.ndarray, np.ndarray]:
        if not isinstance(features, PublicFeatures):
            raise invalid(f"features[{party}]", type(features).__name__,
                          "PublicFeatures: features marked public by the Publication of the "
                          "party that chose their actions from released data")
        x = features.features
        if x.shape[1] != self._dim:
            raise invalid(f"features[{party}]", f"features of shape {x.shape}",
                          f"(R, {self._dim})")
        y = real_array(f"rewards[{party}]", rewards, (x.shape[0],))
        norms = np.sqrt(np.einsum("rd,rd->r", x, x))
        if x.shape[0] and norms.max() > self._bound * (1.0 + _NORM_TOL):
            raise OutOfBoundsError(f"features must have norm <= feature_bound = {self._bound:g}; "
                                   f"got a record of party {party} of norm {norms.max():.6g}")
        return x, y

    # -- read-only view (the rest: `reward_only._StreamView`) ---------------------------
    @property
    def stream(self) -> SecureStream:
        """The secure stream of the reward moments (its trust model, shares, sigma)."""
        return self._inner

    @property
    def l2_sensitivity(self) -> float:
        return (self._hi - self._lo) * self._bound

    def __repr__(self) -> str:
        return (f"SecureRewardOnlyRelease(parties={self._inner.parties}, dim={self._dim}, "
                f"horizon={self.horizon}, mechanism={self._inner.kind!r}, "
                f"sigma={self.sigma:.6g}, steps={self.steps})")


def _joined(waiting: tuple[np.ndarray, np.ndarray] | None, new: tuple[np.ndarray, np.ndarray]
            ) -> tuple[np.ndarray, np.ndarray]:
    if waiting is None:
        return new
    return np.concatenate((waiting[0], new[0])), np.concatenate((waiting[1], new[1]))
