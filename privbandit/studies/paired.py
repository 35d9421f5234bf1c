"""Paired comparisons over seeds: a private algorithm against going alone, per epsilon.

Runs with the same seed index share the run seed, hence the world, the
arrivals and the reward draws (`spec`), so run i of two algorithms is a pair
and the seed-to-seed spread of the world cancels in the difference.  For
each cell of the private label (one epsilon), over the seeds it shares with
the baseline:

- `ratio`: mean private regret / mean baseline regret, with Fieller's
  interval (below);
- `diff`: mean of the paired differences private - baseline, with Student's
  t interval (n - 1 degrees of freedom) over the pairs: exact for normal
  differences, and the usual paired t-test's interval otherwise;
- `fgr`, the federation gain recovered, (alone - private) / (alone -
  federated) in means (and `fgr_oracle`, the same against the oracle, the
  ceiling, when the study names one), over the seeds all three share, with Fieller's
  interval (1954) for a ratio of means of paired samples: the set of rho at
  which the paired t-test of (alone - private) - rho (alone - federated)
  does not reject.  It uses the same t quantile as `diff`, accounts for the
  covariance of numerator and denominator, and is exact for normal pairs
  however few, where a bootstrap of five seeds is not.  When alone -
  federated is not significantly positive (its t interval reaches 0 or
  below), federation shows no gain to recover at this many seeds and the
  interval is (-inf, inf); the point estimate is still given (nan when the
  denominator's mean is 0).

With fewer than two pairs no interval can be formed: (-inf, inf).
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ..errors import config_error

CONFIDENCE = 0.95
UNBOUNDED = (-math.inf, math.inf)


def t_quantile(pairs: int, confidence: float = CONFIDENCE) -> float:
    """The two-sided Student t quantile of `pairs` paired values (pairs - 1 d.o.f.)."""
    return float(stats.t.ppf(0.5 + confidence / 2.0, pairs - 1))


def mean_interval(diffs: Iterable[float],
                  confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(mean, low, high): the t interval of the mean of paired differences."""
    d = np.asarray(list(diffs), dtype=float)
    mean = float(d.mean()) if d.size else math.nan
    if d.size < 2:
        return (mean, *UNBOUNDED)
    half = t_quantile(d.size, confidence) * float(d.std(ddof=1)) / math.sqrt(d.size)
    return mean, mean - half, mean + half


def fieller_interval(num: Iterable[float], den: Iterable[float],
                     confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(ratio, low, high): mean(num) / mean(den) and Fieller's interval, num[i] and
    den[i] paired; (-inf, inf) unless mean(den) is significantly positive."""
    a, b = np.asarray(list(num), dtype=float), np.asarray(list(den), dtype=float)
    if a.shape != b.shape:
        raise config_error("den", b.size, f"as many values as num ({a.size}), paired")
    ma, mb = (float(a.mean()), float(b.mean())) if a.size else (math.nan, math.nan)
    ratio = ma / mb if mb != 0 else math.nan
    if a.size < 2:
        return (ratio, *UNBOUNDED)
    t2 = t_quantile(a.size, confidence) ** 2
    cov = np.cov(a, b, ddof=1) / a.size  # covariance of the two means
    va, vab, vb = float(cov[0, 0]), float(cov[0, 1]), float(cov[1, 1])
    if mb <= 0 or mb * mb <= t2 * vb:
        return (ratio, *UNBOUNDED)
    # rho is in the set when (ma - rho mb)^2 <= t^2 (va - 2 rho vab + rho^2 vb)
    qa, qb, qc = mb * mb - t2 * vb, ma * mb - t2 * vab, ma * ma - t2 * va
    root = math.sqrt(max(qb * qb - qa * qc, 0.0))  # >= 0: the ratio itself is in the set
    return ratio, (qb - root) / qa, (qb + root) / qa


@dataclass(frozen=True)
class Paired:
    """One cell of the private label against the baseline (and the federated reference)."""

    cell: tuple            # the private cell's sorted (key, value) items
    epsilon: float
    pairs: int             # seeds shared with the baseline
    ratio: float           # mean private / mean baseline
    ratio_low: float
    ratio_high: float
    diff: float            # mean of private - baseline over the pairs
    diff_low: float
    diff_high: float
    fgr: float = math.nan  # federation gain recovered (nan: no federated reference)
    fgr_low: float = math.nan
    fgr_high: float = math.nan
    fgr_oracle: float = math.nan  # the same against the oracle (nan: none given)
    fgr_oracle_low: float = math.nan
    fgr_oracle_high: float = math.nan

    @property
    def significant(self) -> str:
        """Where the interval of private - baseline lies: "below" 0, "above" 0, or "no"
        (it holds 0: no significant difference)."""
        if self.diff_high < 0:
            return "below"
        return "above" if self.diff_low > 0 else "no"


def final_by_seed(records: list[dict[str, Any]]) -> dict[tuple[int, int], float]:
    """Final regret by the run's (base_seed, seed_index): the key that pairs runs."""
    return {(r["run"]["base_seed"], r["run"]["seed_index"]): float(r["final_regret"])
            for r in records}


def _single_cell(records: list[dict[str, Any]], label: str, role: str) -> dict:
    cells = {tuple(sorted(r["run"]["cell"].items())) for r in records
             if r["run"]["label"] == label}
    if len(cells) != 1:
        raise config_error(f"break_even.{role}", label,
                           f"the label of one study cell (an algorithm without a grid) with "
                           f"finished runs; it has {len(cells)} cells")
    return final_by_seed([r for r in records if r["run"]["label"] == label])


def compare(records: list[dict[str, Any]], private: str, baseline: str,
            federated: str | None = None, oracle: str | None = None,
            confidence: float = CONFIDENCE) -> list[Paired]:
    """The paired statistics of every cell of `private` against `baseline` (one cell), and
    FGR against `federated` and against `oracle` (one cell each) when given; ordered by
    epsilon."""
    alone = _single_cell(records, baseline, "baseline")
    refs = [None if label is None else _single_cell(records, label, role)
            for label, role in ((federated, "federated"), (oracle, "oracle"))]
    cells: dict[tuple, list[dict[str, Any]]] = {}
    for r in records:
        if r["run"]["label"] == private:
            cells.setdefault(tuple(sorted(r["run"]["cell"].items())), []).append(r)
    out = [_paired(cell, final_by_seed(group), alone, refs, confidence)
           for cell, group in cells.items()]
    return sorted(out, key=lambda p: (p.epsilon, str(p.cell)))


def _paired(cell: tuple, own: dict, alone: dict, refs: list[dict | None],
            confidence: float) -> Paired:
    seeds = sorted(own.keys() & alone.keys())
    mine, base = np.array([own[s] for s in seeds]), np.array([alone[s] for s in seeds])
    ratio = fieller_interval(mine, base, confidence)
    diff = mean_interval(mine - base, confidence)
    epsilon = float(dict(cell).get("epsilon", math.nan))
    gains = []
    for ref in refs:
        if ref is None:
            gains += [math.nan] * 3
            continue
        shared = [s for s in seeds if s in ref]
        gains += fieller_interval([alone[s] - own[s] for s in shared],
                                  [alone[s] - ref[s] for s in shared], confidence)
    return Paired(cell, epsilon, len(seeds), *ratio, *diff, *gains)


def break_even(comparisons: Iterable[Paired]) -> float:
    """The smallest epsilon at which the private label is significantly below the baseline
    (the interval of private - baseline entirely below 0); inf when there is none."""
    return min((p.epsilon for p in comparisons if p.significant == "below"), default=math.inf)
