"""Cluster detection that the privacy noise cannot fool: units join only on enough evidence.

Each unit (a user, an agent) has privatized statistics; its ridge estimate
theta_u = M_u^-1 b_u has a spread Sigma_u that includes the known noise
variance, both given by the caller's ridge arithmetic (`RidgeSpread`:
`private.NoisyRidge` for fully noised statistics, `private.RewardNoiseRidge`
for an exact Gram matrix beside noisy moments).  Two units are linked when
both hold:

1. consistency: T^2 = D^T (Sigma_a + Sigma_b)^-1 D <= chi2_d(level), D = theta_a - theta_b
   (a Hotelling-type test whose widths include the privacy noise);
2. power: a difference the units' items would reveal -- preference vectors whose
   predictions differ by `resolution` in root mean square over the items each
   has seen, E_x[(x . delta)^2] >= resolution^2 -- would have failed the test
   with probability >= 1 - miss.  The smallest noncentrality such a delta can
   have is resolution^2 / lambda_max(G^1/2 (Sigma_a + Sigma_b) G^1/2), G the mean of
   M_a / n_a and M_b / n_b; it must reach lam_req, where the noncentral
   chi-square with d degrees of freedom and noncentrality lam_req falls below
   the threshold with probability `miss`.

While noise dominates, (2) fails and units stay apart: each party keeps acting
alone (CLUB's rule, which deletes edges only on proof of difference, would
instead pool everything the noise hides).  Clusters are cliques of links
(complete linkage, built greedily from the best-connected unit, `clique_labels`),
so one ambiguous pair cannot chain two clusters together.  The converse test,
`differs` (consistency rejected: T^2 > chi2_d(level)), proves two units
different with the noise counted, for rules that split on proof.  Fed released
statistics, the partition is post-processing -- and public: the caller publishes it
(its `mechanisms.Publication`), so that an end-to-end audit reports a partition that
differs between neighbours along the forced transcript as an unbounded loss.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from scipy.optimize import brentq
from scipy.stats import chi2, ncx2

from privbandit.accounting.validation import check_positive

from ..validation import check_probability
from .labels import clique_labels


class RidgeSpread(Protocol):
    """The ridge arithmetic the tests read: `dim`, and `spread(gram, variance)` -> (M,
    M^-1, Sigma) for one unit's Gram block (d, d) whose statistics carry noise of per-entry
    variance `variance`: the regularised matrix of the unit's estimate theta = M^-1 b,
    its inverse, and the spread (d, d) of theta, the noise included."""

    dim: int

    def spread(self, gram: np.ndarray, variance: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]: ...


@dataclass(frozen=True)
class NoiseAwareClustering:
    """Partition units from their privatized statistics; see the module docstring."""

    ridge: RidgeSpread
    resolution: float = 0.2
    level: float = 0.99
    miss: float = 1e-3
    threshold: float = field(init=False)
    required_power: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resolution", check_positive("resolution", self.resolution))
        level = check_probability("level", self.level)
        miss = check_probability("miss", self.miss)
        d = self.ridge.dim
        q = float(chi2.ppf(level, d))
        object.__setattr__(self, "threshold", q)
        object.__setattr__(self, "required_power",
                           float(brentq(lambda nc: ncx2.cdf(q, d, nc) - miss, 1e-9, 1e6)))

    def estimates(self, stats: np.ndarray, variances: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(theta (n, d), spread (n, d, d), M (n, d, d)) of each unit's statistics (n, d+1, d+1)."""
        d = self.ridge.dim
        parts = [self.ridge.spread(g, v) for g, v in zip(stats[:, :d, :d], variances,
                                                          strict=True)]
        matrix, inverse, spread = (np.stack(p) for p in zip(*parts, strict=True))
        theta = np.einsum("nij,nj->ni", inverse, stats[:, :d, d])
        return theta, spread, matrix

    def _pairs(self, stats: np.ndarray, variances: np.ndarray, counts: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(i, j, T^2, power) for every pair i < j of units with data (indices into units)."""
        seen = np.flatnonzero(np.asarray(counts) > 0)
        if seen.size < 2:
            empty = np.empty(0)
            return empty.astype(np.intp), empty.astype(np.intp), empty, empty
        theta, spread, matrix = self.estimates(stats[seen], np.asarray(variances)[seen])
        a, b = np.triu_indices(seen.size, 1)
        diff = theta[a] - theta[b]
        sigma = spread[a] + spread[b]
        t2 = np.einsum("pi,pi->p", diff, np.linalg.solve(sigma, diff[..., None])[..., 0])
        moment = matrix / np.asarray(counts, dtype=np.float64)[seen, None, None]
        return seen[a], seen[b], t2, self._power(sigma, 0.5 * (moment[a] + moment[b]))

    def _power(self, sigma: np.ndarray, moment: np.ndarray) -> np.ndarray:
        """resolution^2 / lambda_max(G^1/2 Sigma G^1/2) per pair: the smallest noncentrality a
        gap of `resolution` (root mean square over the items seen, G) gives the test."""
        w, v = np.linalg.eigh(moment)
        root = np.einsum("pij,pj,pkj->pik", v, np.sqrt(np.maximum(w, 0.0)), v)
        widest = np.linalg.eigvalsh(root @ sigma @ root)[:, -1]
        return self.resolution**2 / widest

    def powered(self, stats: np.ndarray, variances: np.ndarray, counts: np.ndarray,
                groups: list[np.ndarray]) -> np.ndarray:
        """(n,) bool: the units whose test against the rest of their group, pooled, has the
        power (2. above) to see a gap of `resolution`; a unit alone in its group, or whose
        group's other units have no data, has none.  Fed released statistics and a public
        partition, the answer is public."""
        out = np.zeros(stats.shape[0], dtype=bool)
        counts, variances = np.asarray(counts, dtype=np.float64), np.asarray(variances, float)
        for g in groups:
            rest = counts[g].sum() - counts[g]
            if g.size < 2 or np.any(counts[g] == 0) or np.any(rest == 0):
                continue
            pooled = stats[g].sum(axis=0) - stats[g]
            _, spread, matrix = self.estimates(np.concatenate((stats[g], pooled)), np.concatenate(
                (variances[g], variances[g].sum() - variances[g])))
            k = g.size
            moment = 0.5 * (matrix[:k] / counts[g, None, None] + matrix[k:] / rest[:, None, None])
            out[g] = self._power(spread[:k] + spread[k:], moment) >= self.required_power
        return out

    def links(self, stats: np.ndarray, variances: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """(n, n) bool: which pairs of units pass both tests (the diagonal is True)."""
        i, j, t2, power = self._pairs(stats, variances, counts)
        ok = (t2 <= self.threshold) & (power >= self.required_power)
        return _symmetric(stats.shape[0], i[ok], j[ok], diagonal=True)

    def differs(self, stats: np.ndarray, variances: np.ndarray, counts: np.ndarray
                ) -> np.ndarray:
        """(n, n) bool: which pairs the consistency test rejects (T^2 > chi2_d(level)):
        units proven different, noise included.  Units without data never differ."""
        i, j, t2, _ = self._pairs(stats, variances, counts)
        far = t2 > self.threshold
        return _symmetric(stats.shape[0], i[far], j[far], diagonal=False)

    def labels(self, stats: np.ndarray, variances: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """Cluster label of each unit (the smallest unit index of its clique), (n,)."""
        return clique_labels(self.links(stats, variances, counts))


def _symmetric(n: int, i: np.ndarray, j: np.ndarray, diagonal: bool) -> np.ndarray:
    out = np.eye(n, dtype=bool) if diagonal else np.zeros((n, n), dtype=bool)
    out[i, j] = out[j, i] = True
    return out
