"""BaSE, batched successive elimination (Gao et al. 2019), many instances in lockstep.

Seed 004's Algorithm 1 runs one BaSE instance per user on a shared static grid;
this class holds all of them as (N, K) arrays so a batch's bookkeeping is a few
vectorized operations.

Per batch m < M every instance asks for D_m = t_m - t_(m-1) samples split evenly
over its active arms.  At the end of the batch, with tau pulls of each active arm
(the fewest any active arm got, when a decomposition over-delivers), arm j is
dropped when

    max_k Ybar_k - Ybar_j >= sqrt(gamma * variance * log(T K) / tau),

with `variance` the sub-Gaussian variance proxy of one sample (Gao et al. use
1-sub-Gaussian rewards, so variance = 1 recovers their rule; seed 004's elicited
estimates are O(C)-sub-Gaussian, Lemma 2).  In the last batch an instance
commits to its empirically best active arm (ties: lowest index).
"""
from __future__ import annotations

import math

import numpy as np

from privbandit.accounting.validation import check_count, check_positive

from ..errors import ShapeError
from .grids import batch_lengths, make_grid


class BatchedElimination:
    """`instances` independent BaSE instances over `arms` arms sharing one static grid.

    horizon: T of each instance (samples per instance over all batches);
    batches: M; grid: "minimax" or "geometric"; gamma: elimination constant;
    variance: sub-Gaussian variance proxy of one sample.
    """

    def __init__(
        self,
        instances: int,
        arms: int,
        horizon: int,
        batches: int,
        *,
        grid: str = "minimax",
        gamma: float = 0.5,
        variance: float = 1.0,
    ) -> None:
        self.instances = check_count("instances", instances)
        self.arms = check_count("arms", arms)
        self.horizon = check_count("horizon", horizon)
        self.grid_kind = grid
        self.grid = make_grid(grid, self.horizon, check_count("batches", batches))
        self.lengths = batch_lengths(self.grid)
        self.gamma = check_positive("gamma", gamma)
        self.variance = check_positive("variance", variance)
        self._log_tk = math.log(self.horizon * self.arms)
        self.active = np.ones((self.instances, self.arms), dtype=bool)
        self.sums = np.zeros((self.instances, self.arms))
        self.counts = np.zeros((self.instances, self.arms), dtype=np.int64)
        self.batch = 0

    @property
    def batches(self) -> int:
        return int(self.grid.size)

    @property
    def exploring(self) -> bool:
        """True while the current batch still asks for feedback (every batch but the last)."""
        return self.batch < self.batches - 1

    def demand(self) -> int:
        """D of the current batch: samples each instance wants, split over its active arms."""
        return int(self.lengths[self.batch])

    def means(self) -> np.ndarray:
        """Empirical means (N, K); NaN where an arm has no sample."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), np.nan)

    def leader(self) -> np.ndarray:
        """Each instance's empirically best active arm, (N,) int (lowest index on ties)."""
        scores = np.where(self.active & (self.counts > 0), self.means(), -np.inf)
        unseen = ~np.isfinite(scores).any(axis=1)
        scores[unseen] = np.where(self.active[unseen], 0.0, -np.inf)
        return np.argmax(scores, axis=1)

    def record(self, sums: np.ndarray, counts: np.ndarray) -> None:
        """Add a batch's feedback: per-pair sums and sample counts, (N, K) each."""
        sums = np.asarray(sums, dtype=np.float64)
        counts = np.asarray(counts)
        shape = (self.instances, self.arms)
        if sums.shape != shape or counts.shape != shape:
            raise ShapeError(
                f"sums and counts must have shape {shape}; got {sums.shape} and {counts.shape}"
            )
        self.sums += sums
        self.counts += counts.astype(np.int64)

    def end_batch(self) -> np.ndarray:
        """Close the current batch: eliminate (not after the last batch); return `active`."""
        if self.exploring:
            self.active &= ~self._eliminated()
        self.batch = min(self.batch + 1, self.batches - 1)
        return self.active

    def commit(self) -> np.ndarray:
        """Keep only each instance's leader active (Gao et al.'s last batch); return it."""
        lead = self.leader()
        self.active = np.zeros_like(self.active)
        self.active[np.arange(self.instances), lead] = True
        return lead

    def _eliminated(self) -> np.ndarray:
        act = self.active
        tau = np.where(act, self.counts, np.iinfo(np.int64).max).min(axis=1)
        seen = tau > 0  # every active arm has at least one sample
        live = act & seen[:, None]
        means = np.where(live, self.sums / np.maximum(self.counts, 1), 0.0)
        best = np.where(live, means, -np.inf).max(axis=1, initial=-np.inf)
        width = np.sqrt(self.gamma * self.variance * self._log_tk / np.maximum(tau, 1))
        return live & (best[:, None] - means >= width[:, None])
