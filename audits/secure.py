"""Secure sums as audit mechanisms: many releases simulated as one secure sum.

    SecureSumAdapter(parties, dim, sigma, scale, clip_norm=1.0, name="secure sum")
      (values (parties, dim), rng, n) -> (n, dim): n independent secure sums of the
      parties' vectors (the aggregator's decoded sums)

A secure sum encodes, noises and masks every entry independently, so n runs
of a sum of dim-vectors are exactly one secure sum of (n, dim)-vectors with
the same grid and the same share of noise per entry.  The adapter builds that
one sum with `sigma` (value units, the noise min_survivors shares carry: here
every party) and `scale`, takes the clip off the batch and checks each run's
vectors against `clip_norm` itself, as `streams.tree_factory` does for trees.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_count, check_positive
from privbandit.mechanisms.errors import OutOfBoundsError, ShapeError
from privbandit.mechanisms.secure_sum import SecureSum


@dataclass(frozen=True, eq=False)
class SecureSumAdapter:
    """(values (parties, dim), rng, n) -> (n, dim) decoded secure sums (module docstring)."""

    parties: int
    dim: int
    sigma: float
    scale: float
    clip_norm: float = 1.0
    name: str = "secure sum"

    def __post_init__(self) -> None:
        check_count("parties", self.parties)
        check_count("dim", self.dim)
        check_positive("sigma", self.sigma)
        check_positive("clip_norm", self.clip_norm)

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        values = np.asarray(dataset, dtype=float)
        if values.shape != (self.parties, self.dim):
            raise ShapeError(f"a dataset must have shape ({self.parties}, {self.dim}); "
                             f"got {values.shape}")
        norms = np.linalg.norm(values, axis=1)
        if np.any(norms > self.clip_norm):
            raise OutOfBoundsError(f"every party's vector must have norm <= clip_norm = "
                                   f"{self.clip_norm:g}; got {norms.max():.6g}")
        batch = np.broadcast_to(values[:, None, :], (self.parties, n, self.dim))
        # the per-run clip is checked above; the batch's own clip must not bind
        mech = SecureSum(self.parties, (n, self.dim), sigma=self.sigma, scale=self.scale,
                         l2_sensitivity=self.clip_norm * np.sqrt(n) * 2.0)
        return mech.release(batch, rng).value
