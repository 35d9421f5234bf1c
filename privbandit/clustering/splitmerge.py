"""Split/merge clustering of linear bandit users over sets: no merge rides on one edge.

The rule the population-scale federation detects clusters with
(`fclub.sets.SetFederatedClub`), written for any caller that holds, per unit
(a user, or a local cluster), its Gram matrix G_u = sum x x^T, its moment
vector b_u = sum y x and, optionally, the per-entry variance v_u of Gaussian
noise added to b_u (a private release of the moments with the exact Gram
matrix; 0 by default).  A cluster is a set of units; its model is the ridge
estimate of the pooled statistics, theta_C = (lam I + sum G_u)^-1 sum b_u, with
spread Sigma_C = R^2 M^-1 + ((lam S)^2 + v_C) M^-2 (reward noise of
sub-Gaussian scale R, the ridge bias lam theta with ||theta|| <= S counted as
spread, the moments' noise; M = lam I + sum G_u).

Why sets.  CLUB's graph and FCLUB's global merge (seed 000, eq. 4) join
clusters by connected components: one surviving edge between two true
clusters joins them, and with many local clusters one such edge is all but
certain (docs/fclub.md, "Federation at population scale").  Here every
decision compares pooled models, never single links:

1. moves: each block (the units one party holds in one cluster, `blocks`;
   default every unit alone), then each unit, moves to the cluster whose
   model explains its data best when the log-likelihood ratio against its
   own cluster's model (left out: its own data removed) exceeds
   `block_evidence` (blocks of two units or more) or `unit_evidence` (units).  Under b ~ N(G theta,
   R^2 G + v I) the log-ratio of models theta_k against theta_o is
   (G (theta_k - theta_o))^T C^-1 (b - G (theta_k + theta_o) / 2), C = R^2 G + v I;
2. split: each cluster is cut in two by 2-means over its blocks (over its
   units when one block holds it all), the distance of a block to a centre c
   being its excess squared error (theta_j - c)^T G_j (theta_j - c); the cut
   stands when the halves' Hotelling statistic T^2 = D^T (Sigma_1 +
   Sigma_2)^-1 D exceeds what the same search finds in data drawn from one
   pooled model (a parametric bootstrap of `simulations` data sets, its
   threshold the `split_level` quantile of a scaled chi-square with their mean
   and variance: the best of many cuts of one cluster looks like two) and the
   merge threshold; halves are cut again, recursively;
3. merge: the two clusters with the smallest T^2 merge while it is at most
   the chi-square quantile at `merge_level`, their pooled statistics then
   tested as one (agglomeration on pooled models: a cluster joins another only
   when the two pooled models agree, never because two small parts agree);
4. moves again.

Proof of sameness (`resolution`).  Without it a merge needs only that two
pooled models are consistent (T^2 below the quantile), which units with little
data always are: started from singletons, everything would merge at once.
With `resolution` r a merge also needs power: a difference of preferences
whose predictions differ by r in root mean square over the items the two
sets have seen -- E_x[(x . delta)^2] >= r^2, E_x the mean of M_a / n_a and
M_b / n_b (n: the records, `counts`) -- would have failed the consistency test
with probability >= 1 - `miss`.  Among such deltas the smallest
noncentrality of T^2 is r^2 / lambda_max(L^T (Sigma_a + Sigma_b) L), L L^T
that mean (Cholesky), and it must reach the noncentrality at which a
noncentral chi-square with d degrees of freedom falls below the merge
threshold with probability `miss` (`required_power`; the test of
`private.NoiseAwareClustering`).  So units stay apart until their data could
tell them apart, and join only when they did not: a partition started from
singletons (`SetClusters(start="alone")`) is going alone until the data prove
a set shares preferences.

Cost: moves and splits are O(n c d^2 + n d^3) for n units and c clusters, the
merges O(c^2 d^3) -- no all-pairs scan of units, and no (n, n) array.
Randomness: only the bootstrap of step 2, from the generator passed in.
Sources: SCLUB's split and merge over sets (Li, Chen, Li & Leung, IJCAI 2019),
Hotelling's T^2 and the likelihood-ratio assignment of mixtures of linear
regressions; the thresholds and the bootstrap are this package's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
from scipy.optimize import brentq
from scipy.stats import chi2, ncx2

from privbandit.accounting.validation import check_count, check_nonnegative, check_positive
from privbandit.mechanisms.publication import Publication

from ..errors import ShapeError, config_error
from ..validation import check_dim, check_probability
from .labels import by_first_appearance, by_smallest_member


class Partition(NamedTuple):
    """What `SplitMergeClustering.partition` found: labels (n,) 0..m-1 in order of first
    appearance, and how many unit moves, block moves, splits and merges it made."""

    labels: np.ndarray
    unit_moves: int
    block_moves: int
    splits: int
    merges: int


@dataclass(frozen=True)
class SplitMergeClustering:
    """Partition units from their Gram matrices and moments; see the module docstring.

    dim: d; lam: ridge regulariser; noise_scale: R, the rewards' sub-Gaussian
    scale; theta_bound: S; merge_level, split_level: levels of the merge and split
    tests (split_level at least merge_level); unit_evidence, block_evidence: the
    log-likelihood ratio a unit (a block) needs to move (ln 1000 and 1: a unit
    moves on strong evidence alone, a party's block on its pooled data);
    simulations: data sets of the split's bootstrap (0: the chi-square quantile
    alone, for callers that accept spurious cuts); resolution: None (merges need
    consistency only) or r > 0, the RMS prediction difference a merge must have had
    the power to see (then `partition` needs the units' record counts); miss: the
    probability of missing such a difference.
    """

    dim: int
    lam: float = 1.0
    noise_scale: float = 0.5
    theta_bound: float = 1.0
    merge_level: float = 0.99
    split_level: float = 0.99
    unit_evidence: float = math.log(1000.0)
    block_evidence: float = 1.0
    simulations: int = 24
    resolution: float | None = None
    miss: float = 1e-3

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "dim", check_dim("dim", self.dim))
        set_(self, "lam", check_positive("lam", self.lam))
        set_(self, "noise_scale", check_positive("noise_scale", self.noise_scale))
        set_(self, "theta_bound", check_nonnegative("theta_bound", self.theta_bound))
        set_(self, "merge_level", check_probability("merge_level", self.merge_level))
        set_(self, "split_level", check_probability("split_level", self.split_level))
        if self.split_level < self.merge_level:
            raise config_error("split_level", self.split_level,
                               f"at least merge_level = {self.merge_level} (a cut that the "
                               "merge test would undo at once is no cut)")
        set_(self, "unit_evidence", check_nonnegative("unit_evidence", self.unit_evidence))
        set_(self, "block_evidence", check_nonnegative("block_evidence", self.block_evidence))
        set_(self, "simulations", check_count("simulations", self.simulations, minimum=0))
        if self.resolution is not None:
            set_(self, "resolution", check_positive("resolution", self.resolution))
        set_(self, "miss", check_probability("miss", self.miss))

    @property
    def merge_threshold(self) -> float:
        """chi-square_d quantile at merge_level: the largest T^2 two merged clusters have."""
        return float(chi2.ppf(self.merge_level, self.dim))

    @cached_property
    def required_power(self) -> float:
        """The noncentrality at which chi-square_d falls below the merge threshold with
        probability `miss`: the least a merge's test must have against a difference of
        `resolution`."""
        q, d = self.merge_threshold, self.dim
        return float(brentq(lambda nc: ncx2.cdf(q, d, nc) - self.miss, 1e-9, 1e9))

    @property
    def split_threshold(self) -> float:
        """chi-square_d quantile at split_level: the least T^2 of a cut without the bootstrap
        (simulations=0; too lax when a cluster has many parts to cut)."""
        return float(chi2.ppf(self.split_level, self.dim))

    # -- the models of sets ----------------------------------------------------------------
    def estimates(self, gram: np.ndarray, moments: np.ndarray, variance: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
        """(theta (..., d), spread (..., d, d)) of pooled statistics (..., d, d), (..., d),
        noise variances (...)."""
        matrix = gram + self.lam * np.eye(self.dim)
        inverse = np.linalg.inv(matrix)
        theta = np.einsum("...ij,...j->...i", inverse, moments)
        bias = (self.lam * self.theta_bound) ** 2 + np.asarray(variance, dtype=float)
        spread = self.noise_scale**2 * inverse + bias[..., None, None] * (inverse @ inverse)
        return theta, spread

    def hotelling(self, a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> np.ndarray:
        """T^2 of the difference of the models of pooled statistics a and b, each
        (gram, moments, variance), broadcast over leading axes."""
        return self._hotelling(a, b)[0]

    def _hotelling(self, a, b) -> tuple[np.ndarray, np.ndarray]:
        """(T^2, Sigma_a + Sigma_b) of pooled statistics a and b (see `hotelling`)."""
        theta_a, spread_a = self.estimates(*a)
        theta_b, spread_b = self.estimates(*b)
        diff = theta_a - theta_b
        spread = np.broadcast_to(spread_a + spread_b, diff.shape + (self.dim,))
        t2 = np.einsum("...i,...i->...", diff, np.linalg.solve(spread, diff[..., None])[..., 0])
        return t2, spread

    def merge_statistic(self, a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...],
                        counts: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """T^2 of pooled statistics a and b (as `hotelling`), or inf where a merge lacks the
        power `resolution` asks for (see the module docstring); counts: the records of a
        and of b, needed with a resolution."""
        t2, spread = self._hotelling(a, b)
        if self.resolution is None:
            return t2
        if counts is None:
            raise config_error("counts", None, "the units' record counts (resolution is set)")
        ok = self.power(a[0], b[0], *counts, spread) >= self.required_power
        return np.where(ok, t2, np.inf)

    def power(self, gram_a: np.ndarray, gram_b: np.ndarray, count_a: np.ndarray,
              count_b: np.ndarray, spread: np.ndarray) -> np.ndarray:
        """The least noncentrality of T^2 over differences whose predictions differ by
        `resolution` in RMS over the items seen (0 where a side has no record)."""
        na, nb = (np.asarray(c, dtype=float)[..., None, None] for c in (count_a, count_b))
        eye = self.lam * np.eye(self.dim)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = 0.5 * ((gram_a + eye) / na + (gram_b + eye) / nb)
        seen = np.all(np.isfinite(mean), axis=(-2, -1))
        mean = np.where(seen[..., None, None], mean, np.eye(self.dim))
        root = np.linalg.cholesky(np.broadcast_to(mean, spread.shape))
        widest = np.linalg.eigvalsh(np.swapaxes(root, -1, -2) @ spread @ root)[..., -1]
        return np.where(seen, self.resolution**2 / widest, 0.0)

    def evidence(self, gram: np.ndarray, moments: np.ndarray, variance: np.ndarray,
                 own: np.ndarray, other: np.ndarray) -> np.ndarray:
        """log-likelihood ratio of models `other` (n, c, d) against `own` (n, d) for the data
        of n units (gram (n, d, d), moments (n, d), variance (n,)): (n, c)."""
        delta = other - own[:, None, :]
        middle = moments[:, None, :] - np.einsum(
            "nij,ncj->nci", gram, 0.5 * (other + own[:, None, :]))
        r2 = self.noise_scale**2
        if not np.any(variance):  # C = R^2 G: C^-1 G delta = delta / R^2
            return np.einsum("nci,nci->nc", delta, middle) / r2
        cov = r2 * gram + np.asarray(variance, dtype=float)[:, None, None] * np.eye(self.dim)
        lead = np.einsum("nij,ncj->nci", gram, delta)
        solved = np.linalg.solve(cov[:, None], lead[..., None])[..., 0]
        return np.einsum("nci,nci->nc", solved, middle)

    # -- the partition -----------------------------------------------------------------------
    def partition(self, gram: np.ndarray, moments: np.ndarray, labels: np.ndarray, *,
                  rng: np.random.Generator, blocks: np.ndarray | None = None,
                  variance: np.ndarray | None = None,
                  counts: np.ndarray | None = None) -> Partition:
        """The partition of n units that moves, splits and merges the clusters of `labels`.

        gram: (n, d, d) per-unit Gram matrices; moments: (n, d); labels: (n,) the
        current clusters (any integers; all equal, or all distinct, at the start);
        rng: the bootstrap's generator; blocks: (n,) groups of units that move as
        one when they share a cluster (e.g. each unit's party); variance: (n,)
        per-entry noise variance of the moments (default 0: exact statistics);
        counts: (n,) the records each unit's statistics hold (needed with a
        resolution: the merges' power is over the items seen).
        """
        gram, moments, labels, blocks, variance = self._checked(gram, moments, labels, blocks,
                                                                variance)
        counts = self._counts(counts, labels.size)
        stats = (gram, moments, variance)
        labels, block_moves = self._move_blocks(stats, labels, blocks)
        labels, unit_moves = self._move(stats, labels)
        labels, splits = self._split(stats, labels, blocks, rng)
        labels, merges = self._merge(stats, labels, counts)
        labels, again = self._move_blocks(stats, labels, blocks)
        labels, more = self._move(stats, labels)
        return Partition(by_first_appearance(labels), unit_moves + more, block_moves + again,
                         splits, merges)

    def _checked(self, gram, moments, labels, blocks, variance):
        gram = np.asarray(gram, dtype=float)
        n, d = gram.shape[0] if gram.ndim == 3 else -1, self.dim
        moments = np.asarray(moments, dtype=float)
        if gram.shape != (n, d, d) or moments.shape != (n, d) or n < 1:
            raise ShapeError(f"gram and moments must have shapes (n, {d}, {d}) and (n, {d}) "
                             f"with n >= 1; got {gram.shape} and {moments.shape}")
        out = []
        for name, value, default in (("labels", labels, None), ("blocks", blocks, 0),
                                     ("variance", variance, 0.0)):
            arr = np.full(n, default) if value is None else np.asarray(value)
            if arr.shape != (n,):
                raise ShapeError(f"{name} must have shape ({n},); got {arr.shape}")
            out.append(arr)
        labels, blocks, variance = out
        if not (np.issubdtype(labels.dtype, np.integer) and np.issubdtype(blocks.dtype,
                                                                        np.integer)):
            raise config_error("labels and blocks", (labels.dtype, blocks.dtype),
                               "integer arrays")
        variance = variance.astype(float)
        if not np.all(np.isfinite(variance) & (variance >= 0.0)):
            raise config_error("variance", variance, "finite variances >= 0")
        if not (np.all(np.isfinite(gram)) and np.all(np.isfinite(moments))):
            raise config_error("gram and moments", "non-finite values", "finite statistics")
        return gram, moments, by_first_appearance(labels), blocks, variance

    def _counts(self, counts, n: int) -> np.ndarray | None:
        if counts is None:
            if self.resolution is not None:
                raise config_error("counts", None, "(n,) record counts: a resolution is set")
            return None
        arr = np.asarray(counts)
        if arr.shape != (n,):
            raise ShapeError(f"counts must have shape ({n},); got {arr.shape}")
        if not (np.issubdtype(arr.dtype, np.number) and np.all(np.isfinite(arr))
                and np.all(arr >= 0)):
            raise config_error("counts", arr, "finite record counts >= 0")
        return arr.astype(float)

    def _move(self, stats, labels, evidence: float | np.ndarray | None = None
              ) -> tuple[np.ndarray, int]:
        """Step 1 for units: each moves to the cluster of the largest log-ratio over its own
        cluster's left-out model, if that ratio exceeds the evidence required (per unit)."""
        gram, moments, variance = stats
        evidence = self.unit_evidence if evidence is None else evidence
        pooled = _pool(labels, stats)
        theta, _ = self.estimates(*pooled)                                     # (c, d)
        size = np.bincount(labels)
        if theta.shape[0] < 2:
            return labels, 0
        own, _ = self.estimates(*(p[labels] - s for p, s in zip(pooled, stats, strict=True)))
        ratio = self.evidence(gram, moments, variance, own,
                              np.broadcast_to(theta, (labels.size,) + theta.shape))
        n = np.arange(labels.size)
        ratio[n, labels] = -np.inf
        best = ratio.argmax(axis=1)
        move = (ratio[n, best] > evidence) & (size[labels] > 1)
        if not move.any():
            return labels, 0
        out = labels.copy()
        out[move] = best[move]
        return by_first_appearance(out), int(move.sum())

    def _move_blocks(self, stats, labels, blocks) -> tuple[np.ndarray, int]:
        """Step 1 for blocks (the units of one block in one cluster move together), until no
        block moves (at most 5 rounds)."""
        moved = 0
        for _ in range(5):
            groups, which = np.unique(np.stack((blocks, labels)), axis=1, return_inverse=True)
            which = which.ravel()
            if groups.shape[1] == labels.size:  # every block one unit: the units' step does it
                break
            pooled = _pool(which, stats)
            alone = np.bincount(which) == 1  # a block of one unit needs a unit's evidence
            new, count = self._move(pooled, groups[1], np.where(alone, self.unit_evidence,
                                                                 self.block_evidence))
            if not count:
                break
            moved += count
            labels = by_first_appearance(new[which])
        return labels, moved

    def _split(self, stats, labels, blocks, rng) -> tuple[np.ndarray, int]:
        """Step 2: cut clusters in two while a cut's T^2 beats the threshold (recursively)."""
        labels = labels.copy()
        todo, fresh, splits = list(range(int(labels.max()) + 1)), int(labels.max()) + 1, 0
        while todo:
            cluster = todo.pop()
            units = np.flatnonzero(labels == cluster)
            side = self._cut(tuple(s[units] for s in stats), blocks[units], rng)
            if side is None:
                continue
            labels[units[side]] = fresh
            todo += [cluster, fresh]
            fresh += 1
            splits += 1
        return by_first_appearance(labels), splits

    def _cut(self, stats, blocks, rng) -> np.ndarray | None:
        """The units (bool mask) of the second half of a significant cut, or None."""
        if stats[0].shape[0] < 2:
            return None
        _, which = np.unique(blocks, return_inverse=True)
        if which.max() == 0:  # one block holds the cluster: cut its units
            which = np.arange(blocks.size)
        parts = _pool(which, stats)
        side = self._two_means(parts)
        if side is None:
            return None
        observed = self._halves(parts, side)
        if observed <= self.merge_threshold:  # a cut the merge test would undo
            return None
        threshold = (self._null_threshold(parts, rng) if self.simulations
                     else self.split_threshold)
        return side[which] if observed > threshold else None

    def _halves(self, parts, side) -> float:
        """T^2 of the two halves of `side` (bool over parts)."""
        first = tuple(p[~side].sum(axis=0) for p in parts)
        second = tuple(p[side].sum(axis=0) for p in parts)
        return float(self.hotelling(first, second))

    def _two_means(self, parts, inverse: np.ndarray | None = None) -> np.ndarray | None:
        """2-means over parts (gram, moments, variance) with the excess squared error as the
        distance; started from the part farthest from the pooled model and the part
        farthest from that one.  None when one side ends empty.  inverse: the parts'
        (lam I + G)^-1, when the caller has them (the bootstrap reuses them)."""
        gram, moments = parts[0], parts[1]
        if inverse is None:
            inverse = np.linalg.inv(gram + self.lam * np.eye(self.dim))
        theta = np.einsum("kij,kj->ki", inverse, moments)
        flat = gram.reshape(gram.shape[0], -1)  # (theta - c)' G (theta - c), expanded:
        pulled = np.einsum("kij,kj->ki", gram, theta)
        own = np.einsum("ki,ki->k", pulled, theta)
        ridge = self.lam * np.eye(self.dim)

        def distance(centre: np.ndarray) -> np.ndarray:
            return own - 2.0 * (pulled @ centre) + flat @ np.outer(centre, centre).ravel()

        def centre(mask: np.ndarray) -> np.ndarray:
            weights = mask.astype(float)
            g = (weights @ flat).reshape(self.dim, self.dim)
            return np.linalg.solve(g + ridge, weights @ moments)

        first = theta[int(np.argmax(distance(centre(np.ones(theta.shape[0], dtype=bool)))))]
        centres = (first, theta[int(np.argmax(distance(first)))])
        side = None
        for _ in range(10):
            new = distance(centres[1]) < distance(centres[0])
            if side is not None and np.array_equal(new, side):
                break
            side = new
            if side.all() or not side.any():
                return None
            centres = (centre(~side), centre(side))
        return side

    def _null_threshold(self, parts, rng) -> float:
        """The bootstrap's threshold: the split_level quantile of c chi2_nu, the scaled
        chi-square with the mean and variance of the best cut's T^2 over `simulations`
        data sets drawn from the pooled model (moments ~ N(G theta, R^2 G + v I) per
        part; Satterthwaite's two-moment fit).  The best cut of k parts is a maximum
        over many cuts: skewed like a chi-square for few parts, far tighter and shifted
        for many, which the fitted nu follows
        (tests/privbandit/clustering/test_splitmerge.py)."""
        gram, _, variance = parts
        theta, _ = self.estimates(*(p.sum(axis=0) for p in parts))
        mean = gram @ theta
        cov = self.noise_scale**2 * gram + variance[:, None, None] * np.eye(self.dim)
        root = np.linalg.cholesky(cov + 1e-12 * np.eye(self.dim))
        inverse = np.linalg.inv(gram + self.lam * np.eye(self.dim))
        found = np.zeros(self.simulations)
        for i in range(self.simulations):
            noise = rng.standard_normal(mean.shape)
            fake = (gram, mean + np.einsum("kij,kj->ki", root, noise), variance)
            side = self._two_means(fake, inverse)
            found[i] = 0.0 if side is None else self._halves(fake, side)
        mean, var = float(found.mean()), float(found.var(ddof=1))
        if not (mean > 0.0 and var > 0.0):
            return mean
        scale, dof = var / (2.0 * mean), 2.0 * mean * mean / var  # c chi2_nu: mean, variance
        return scale * float(chi2.ppf(self.split_level, dof))

    def _merge(self, stats, labels, counts=None) -> tuple[np.ndarray, int]:
        """Step 3: merge the closest pair of clusters (smallest T^2) while T^2 <= threshold
        (and, with a resolution, the test had the power; `merge_statistic`)."""
        gram, moments, variance = (p.copy() for p in _pool(labels, stats))
        n = None if counts is None else np.bincount(labels, weights=counts)

        def statistic(i: int, others) -> np.ndarray:
            pair = None if n is None else (n[i], n[others])
            return self.merge_statistic((gram[i], moments[i], variance[i]),
                                        (gram[others], moments[others], variance[others]), pair)

        c = gram.shape[0]
        table = np.full((c, c), np.inf)
        for i in range(c - 1):  # row by row: memory O(c d^2), not O(c^2 d^2)
            table[i, i + 1:] = statistic(i, slice(i + 1, None))
        table = np.minimum(table, table.T)
        alive = np.ones(c, dtype=bool)
        merges, threshold = 0, self.merge_threshold
        while c - merges > 1:
            i, j = np.unravel_index(int(np.argmin(table)), table.shape)
            if not table[i, j] <= threshold:
                break
            i, j = min(i, j), max(i, j)
            for arr in (gram, moments, variance) if n is None else (gram, moments, variance, n):
                arr[i] += arr[j]
            labels = np.where(labels == j, i, labels)
            alive[j] = False
            table[j, :] = table[:, j] = np.inf
            others = np.flatnonzero(alive)
            others = others[others != i]
            table[i, others] = table[others, i] = statistic(i, others)
            merges += 1
        return by_first_appearance(labels), merges


STARTS = ("together", "alone")


def phase_end(t: int, growth: float) -> int:
    """The first round of the phase after the one starting at round t (0-based):
    max(t + 1, ceil(g (t + 2)) - 2), so g = 2 is seed 000's 2^s - 2 and g = 1.15 detects
    again after every 15% more data."""
    return max(t + 1, math.ceil(growth * (t + 2)) - 2)


class SetClusters:
    """The clusters of n units as sets, found again by split/merge whenever a caller
    detects: the clustering interface the set federations share ("fclub-dc-sets",
    "fedc3ucb-sets", "cdp-fedc3ucb-sets").

    clustering: the `SplitMergeClustering`; n_units: n; start: "together" (one
    cluster, cut on proof of difference) or "alone" (singletons, joined on proof of
    sameness: the clustering needs a resolution); growth: g > 1 of the phases
    (`phase_end`); publication: for a private caller, the `mechanisms.Publication`
    each partition found is published on (computed from releases, it is public, and
    an end-to-end audit checks that it is).  `labels` (n,) are the current clusters
    (by first appearance), `last` what the last detection did.
    """

    def __init__(self, clustering: SplitMergeClustering, n_units: int, *,
                 start: str = "together", growth: float = 1.15,
                 publication: Publication | None = None) -> None:
        if not isinstance(clustering, SplitMergeClustering):
            raise config_error("clustering", clustering, "a SplitMergeClustering")
        if start not in STARTS:
            raise config_error("start", start, f"one of {STARTS}")
        if start == "alone" and clustering.resolution is None:
            raise config_error("start", start, "'together' unless the clustering has a "
                               "resolution (without one, singletons merge at once)")
        g = check_positive("growth", growth)
        if not (g > 1.0 and math.isfinite(g)):
            raise config_error("growth", growth, "a finite number > 1")
        n = check_count("n_units", n_units, minimum=1)
        self.clustering, self.start, self.growth = clustering, start, float(g)
        self.publication = publication
        self.labels = np.zeros(n, dtype=np.int64) if start == "together" else np.arange(n)
        self.last: Partition | None = None

    def phase_end(self, t: int) -> int:
        """The first round of the phase after the one starting at round t."""
        return phase_end(t, self.growth)

    def detect(self, gram: np.ndarray, moments: np.ndarray, rng: np.random.Generator, *,
               blocks: np.ndarray | None = None, variance: np.ndarray | None = None,
               counts: np.ndarray | None = None) -> bool:
        """Move, split and merge the current clusters on the units' statistics (see
        `SplitMergeClustering.partition`); returns whether the partition changed."""
        found = self.clustering.partition(gram, moments, self.labels, rng=rng, blocks=blocks,
                                          variance=variance, counts=counts)
        labels = found.labels
        if self.publication is not None:  # in a forced replay: the recorded run's partition
            labels = np.asarray(self.publication.partition(labels)).astype(np.int64)
        changed = not np.array_equal(labels, self.labels)
        self.labels, self.last = labels, found
        return changed

    def members(self, unit: int) -> np.ndarray:
        """The units of `unit`'s cluster."""
        return np.flatnonzero(self.labels == self.labels[unit])

    def named(self) -> np.ndarray:
        """Each unit's cluster named by its smallest unit (`cluster_labels`' convention)."""
        return by_smallest_member(self.labels)


def _pool(labels: np.ndarray, stats: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """Sums of each statistic over the units of each label 0..m-1."""
    m = int(labels.max()) + 1
    out = []
    for s in stats:
        total = np.zeros((m,) + s.shape[1:])
        np.add.at(total, labels, s)
        out.append(total)
    return tuple(out)
