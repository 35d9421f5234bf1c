"""Testers: two output samples in, a one-sided lower bound on epsilon out.

Protocol: a tester has `name`, `assumptions` and
`bound(outputs0, outputs1, *, delta, confidence) -> LowerBound`, where
`outputs0` are runs on the dataset and `outputs1` runs on its neighbour
(arrays with a leading sample axis).  The bound holds with probability at least
`confidence` over the runs.

Both testers here threshold a scalar statistic.  Each sample is split: its
first `holdout` fraction (default 0.2, at most `max_selection` = 50,000 runs:
the selection part) fits the statistic and chooses the threshold, the region
side ({s > t} or {s <= t}) and which input the region favours; the rest (the
evaluation part) gives Clopper–Pearson bounds, each at error
(1 - confidence) / 2, on p_hi (mass of the region under the input it favours)
and p_lo (under the other input).  Because the choice never sees the
evaluation part, the two bounds hold jointly with probability >= confidence.

- `ThresholdTester`: (epsilon, delta)-DP forces p_hi <= e^eps p_lo + delta for
  every region, so eps >= ln((p_hi_lower - delta) / p_lo_upper).  No
  assumption on the mechanism.
- `GaussianDPTester`: a mu-GDP mechanism's test errors obey
  1 - p_hi >= Phi(Phi^-1(1 - p_lo) - mu) (Dong, Roth & Su 2019, Def. 2.6), so
  mu >= Phi^-1(p_hi_lower) - Phi^-1(p_lo_upper); the bound on mu becomes an
  epsilon at the claimed delta through the exact GDP-to-(eps, delta) curve
  (accounting's `gaussian_epsilon`).  Valid for mechanisms whose trade-off curve
  is Gaussian (Gaussian noise added to a function of the data), where it is far
  tighter than the (eps, delta) threshold test; the approach follows the GDP
  auditing of Nasr et al. 2023 ("Tight auditing of differentially private
  machine learning").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtri

from privbandit.accounting.accountants.gaussian import gaussian_epsilon
from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_delta
from privbandit.mechanisms.errors import ShapeError

from .binomial import cp_lower, cp_upper
from .statistics import Scalar

# The four (region, favoured input) hypotheses a threshold can support.
_HYPOTHESES = (("s > t", "neighbour"), ("s > t", "dataset"),
               ("s <= t", "neighbour"), ("s <= t", "dataset"))
# Selection forecasts, for each threshold, the bound the evaluation part
# would give, from the selection part's rates taken at their own pessimistic
# Clopper-Pearson bounds and averaged over neighbouring thresholds: among
# thresholds of equal true power this favours well-populated, stable regions
# over ones that merely got lucky on the selection part (the winner's curse).
_SELECTION_ERROR = 0.05
_SMOOTHING = 0.05


@dataclass(frozen=True)
class LowerBound:
    """A one-sided lower bound on epsilon at `delta`, holding with `confidence`."""

    epsilon: float
    delta: float
    confidence: float
    tester: str
    details: dict[str, Any] = field(default_factory=dict)


def check_confidence(confidence: object) -> float:
    """A confidence level in (0, 1)."""
    c = check_delta("confidence", confidence)
    if c <= 0.0:
        raise invalid("confidence", confidence, "a number in (0, 1)")
    return c


@dataclass(frozen=True)
class _ThresholdSearch:
    statistic: Any = field(default_factory=Scalar)
    candidates: int = 256
    holdout: float = 0.2
    max_selection: int = 50_000

    name = "threshold"
    assumptions = ""

    def __post_init__(self) -> None:
        check_count("candidates", self.candidates)
        check_count("max_selection", self.max_selection)
        if not (isinstance(self.holdout, float) and 0.0 < self.holdout < 1.0):
            raise invalid("holdout", self.holdout, "a float in (0, 1)")
        if not callable(getattr(self.statistic, "fit", None)):
            raise invalid("statistic", self.statistic, "an object with fit(sel0, sel1) -> f")

    def bound(self, outputs0, outputs1, *, delta: float, confidence: float) -> LowerBound:
        delta = self._check_delta(delta)
        confidence = check_confidence(confidence)
        x0, x1 = np.asarray(outputs0), np.asarray(outputs1)
        (sel0, ev0), (sel1, ev1) = self._split(x0, "outputs0"), self._split(x1, "outputs1")
        stat = self.statistic.fit(sel0, sel1)
        alpha = (1.0 - confidence) / 2.0

        s0, s1 = stat(sel0), stat(sel1)
        thresholds = _candidate_thresholds(np.concatenate([s0, s1]), self.candidates)
        k_hi, n_hi, k_lo, n_lo = _hypothesis_counts(s0, s1, thresholds)
        score = self._selection_score(k_hi, n_hi, k_lo, n_lo, len(ev0), len(ev1), alpha, delta)
        h, i = np.unravel_index(int(np.argmax(score)), score.shape)
        t = thresholds[i : i + 1]

        k_hi, n_hi, k_lo, n_lo = _hypothesis_counts(stat(ev0), stat(ev1), t)
        p_hi = float(cp_lower(k_hi[h, 0], n_hi[h, 0], alpha))
        p_lo = float(cp_upper(k_lo[h, 0], n_lo[h, 0], alpha))
        value = float(self._score(np.array(p_hi), np.array(p_lo), delta))
        region, favoured = _HYPOTHESES[h]
        details = {
            "statistic": getattr(self.statistic, "name", type(self.statistic).__name__),
            "threshold": float(t[0]), "region": region, "favoured_input": favoured,
            "hits_favoured": int(k_hi[h, 0]), "hits_other": int(k_lo[h, 0]),
            "evaluation_runs": [int(n_hi[h, 0]), int(n_lo[h, 0])],
            "selection_runs": [len(sel0), len(sel1)],
            "p_favoured_lower": p_hi, "p_other_upper": p_lo,
        }
        epsilon = self._finish(value, delta, details)
        return LowerBound(epsilon, delta, confidence, self.name, details)

    def _selection_score(self, k_hi, n_hi, k_lo, n_lo, m0, m1, alpha, delta):
        """A pessimistic forecast of each hypothesis' bound on the evaluation part.

        The selection part's rates are taken at their own Clopper-Pearson
        bounds (error `_SELECTION_ERROR`), so thin tail regions are not chosen
        for a lucky count, then scored with the evaluation part's sizes.
        """
        m_hi = np.array([m1, m0, m1, m0])[:, None]  # same order as _HYPOTHESES
        m_lo = np.array([m0, m1, m0, m1])[:, None]
        p_hi = cp_lower(k_hi, n_hi, _SELECTION_ERROR)
        p_lo = cp_upper(k_lo, n_lo, _SELECTION_ERROR)
        forecast = self._score(cp_lower(p_hi * m_hi, m_hi, alpha),
                               cp_upper(p_lo * m_lo, m_lo, alpha), delta)
        return _smooth(forecast, _SMOOTHING)

    def _split(self, x: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
        if x.ndim == 0 or len(x) < 4:
            raise ShapeError(f"{name} must hold >= 4 runs along axis 0; got shape {x.shape}")
        k = min(max(1, int(round(len(x) * self.holdout))), self.max_selection, len(x) - 1)
        return x[:k], x[k:]

    def _check_delta(self, delta: object) -> float:
        return check_delta("delta", delta)

    def _finish(self, value: float, delta: float, details: dict) -> float:
        return value


@dataclass(frozen=True)
class ThresholdTester(_ThresholdSearch):
    """Clopper–Pearson (epsilon, delta) lower bound from one thresholded statistic."""

    name = "threshold"
    assumptions = "none (any mechanism)"

    @staticmethod
    def _score(p_hi: np.ndarray, p_lo: np.ndarray, delta: float) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            eps = np.log(np.maximum(p_hi - delta, 0.0) / p_lo)
        return np.where(np.isfinite(eps) & (eps > 0), eps, 0.0)


@dataclass(frozen=True)
class GaussianDPTester(_ThresholdSearch):
    """Gaussian-DP mu lower bound, converted to epsilon at the claimed delta (> 0)."""

    name = "gaussian-dp"
    assumptions = "the mechanism's trade-off curve is Gaussian (additive Gaussian noise)"

    def _check_delta(self, delta: object) -> float:
        d = check_delta("delta", delta)
        if d <= 0.0:
            raise invalid("delta", delta, "a number in (0, 1) for the Gaussian-DP tester")
        return d

    @staticmethod
    def _score(p_hi: np.ndarray, p_lo: np.ndarray, delta: float) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            mu = ndtri(p_hi) - ndtri(p_lo)
        return np.where(np.isfinite(mu) & (mu > 0), mu, 0.0)

    def _finish(self, value: float, delta: float, details: dict) -> float:
        details["mu_lower"] = value
        return gaussian_epsilon(value, delta)


def _smooth(score: np.ndarray, fraction: float) -> np.ndarray:
    """Moving average along the thresholds (window: `fraction` of them, at least 1)."""
    width = max(1, int(score.shape[1] * fraction))
    if width == 1:
        return score
    kernel = np.ones(width)
    total = np.apply_along_axis(lambda row: np.convolve(row, kernel, mode="same"), 1, score)
    count = np.convolve(np.ones(score.shape[1]), kernel, mode="same")
    return total / count


def _candidate_thresholds(pooled: np.ndarray, count: int) -> np.ndarray:
    """Cut points between distinct pooled values (all of them when few, else quantiles)."""
    values = np.unique(pooled[np.isfinite(pooled)])
    if values.size < 2:
        return values if values.size else np.zeros(1)
    if values.size > count + 1:
        values = np.unique(np.quantile(values, np.linspace(0.0, 1.0, count + 1)))
    return 0.5 * (values[:-1] + values[1:])


def _hypothesis_counts(s0: np.ndarray, s1: np.ndarray, thresholds: np.ndarray):
    """Hits of each hypothesis' region: arrays (4, T) of k_hi, k_lo and (4,) n_hi, n_lo."""
    n0, n1 = len(s0), len(s1)
    above0 = n0 - np.searchsorted(np.sort(s0), thresholds, side="right")
    above1 = n1 - np.searchsorted(np.sort(s1), thresholds, side="right")
    k_hi = np.stack([above1, above0, n1 - above1, n0 - above0])
    k_lo = np.stack([above0, above1, n0 - above0, n1 - above1])
    n_hi = np.array([n1, n0, n1, n0])
    n_lo = np.array([n0, n1, n0, n1])
    return k_hi, n_hi[:, None], k_lo, n_lo[:, None]
