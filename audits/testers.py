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
  machine learning").  The assumption is checked on the selection part (the
  statistic must look continuous and Gaussian on both sides, with one
  variance); when the check fails the tester falls back to the threshold
  bound (`on_mismatch="fallback"`, the default) or raises
  `TesterAssumptionError` (`"raise"`): it never turns a non-Gaussian
  mechanism's tail into a Gaussian mu.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import stats
from scipy.special import ndtri

from privbandit.accounting.accountants.gaussian import gaussian_epsilon
from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_delta
from privbandit.mechanisms.errors import ShapeError

from .binomial import cp_lower, cp_upper
from .findings import DISTRIBUTIONAL
from .statistics import Auto

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


class TesterAssumptionError(ValueError):
    """A tester's assumption about the mechanism does not hold on the data it was given."""

    __test__ = False  # not a pytest test class, despite the name


def forecast(k_hi, n_hi, k_lo, n_lo, m_hi, m_lo, alpha: float, delta: float, score):
    """A pessimistic forecast of the bound an event would give on a fresh evaluation part.

    Selection rates are taken at their own Clopper-Pearson bounds (error
    `_SELECTION_ERROR`), so thin events are not chosen for a lucky count, then
    scored as if observed on `m_hi` / `m_lo` evaluation runs at error `alpha`.
    """
    p_hi = cp_lower(k_hi, n_hi, _SELECTION_ERROR)
    p_lo = cp_upper(k_lo, n_lo, _SELECTION_ERROR)
    return score(cp_lower(p_hi * m_hi, m_hi, alpha), cp_upper(p_lo * m_lo, m_lo, alpha), delta)


def threshold_score(p_hi: np.ndarray, p_lo: np.ndarray, delta: float) -> np.ndarray:
    """ln((p_hi - delta) / p_lo), 0 where that is not a positive finite number."""
    with np.errstate(divide="ignore", invalid="ignore"):
        eps = np.log(np.maximum(p_hi - delta, 0.0) / p_lo)
    return np.where(np.isfinite(eps) & (eps > 0), eps, 0.0)


def check_selection(statistic: Any, holdout: object, max_selection: object) -> None:
    """The settings every selection/evaluation tester shares."""
    check_count("max_selection", max_selection)
    if not (isinstance(holdout, float) and 0.0 < holdout < 1.0):
        raise invalid("holdout", holdout, "a float in (0, 1)")
    if not callable(getattr(statistic, "fit", None)):
        raise invalid("statistic", statistic, "an object with fit(sel0, sel1) -> f")


def split_runs(x: np.ndarray, holdout: float, max_selection: int, name: str):
    """(selection, evaluation): the first `holdout` fraction (<= `max_selection`), the rest."""
    if x.ndim == 0 or len(x) < 4:
        raise ShapeError(f"{name} must hold >= 4 runs along axis 0; got shape {x.shape}")
    k = min(max(1, int(round(len(x) * holdout))), max_selection, len(x) - 1)
    return x[:k], x[k:]


@dataclass(frozen=True)
class LowerBound:
    """A one-sided lower bound on epsilon at `delta`, holding with `confidence`."""

    epsilon: float
    delta: float
    confidence: float
    tester: str
    details: dict[str, Any] = field(default_factory=dict)
    assumptions: str = ""
    kind: str = DISTRIBUTIONAL
    others: tuple = ()  # the best bound of each other kind the same tester searched

    def by_kind(self) -> "dict[str, LowerBound]":
        """This bound and `others`, by kind."""
        return {self.kind: self, **{b.kind: b for b in self.others}}


def check_confidence(confidence: object) -> float:
    """A confidence level in (0, 1)."""
    c = check_delta("confidence", confidence)
    if c <= 0.0:
        raise invalid("confidence", confidence, "a number in (0, 1)")
    return c


@dataclass(frozen=True)
class _ThresholdSearch:
    statistic: Any = field(default_factory=Auto)
    candidates: int = 256
    holdout: float = 0.2
    max_selection: int = 50_000

    name = "threshold"
    assumptions = ""

    def __post_init__(self) -> None:
        check_count("candidates", self.candidates)
        check_selection(self.statistic, self.holdout, self.max_selection)

    def bound(self, outputs0, outputs1, *, delta: float, confidence: float) -> LowerBound:
        delta = self._check_delta(delta)
        confidence = check_confidence(confidence)
        x0, x1 = np.asarray(outputs0), np.asarray(outputs1)
        (sel0, ev0), (sel1, ev1) = self._split(x0, "outputs0"), self._split(x1, "outputs1")
        stat = self.statistic.fit(sel0, sel1)
        alpha = (1.0 - confidence) / 2.0

        s0, s1 = stat(sel0), stat(sel1)
        refusal = self._refusal(s0, s1)
        if refusal:
            return self._refuse(refusal, x0, x1, delta, confidence)
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
            "statistic": getattr(stat, "name", None) or getattr(
                self.statistic, "name", type(self.statistic).__name__),
            "threshold": float(t[0]), "region": region, "favoured_input": favoured,
            "hits_favoured": int(k_hi[h, 0]), "hits_other": int(k_lo[h, 0]),
            "evaluation_runs": [int(n_hi[h, 0]), int(n_lo[h, 0])],
            "selection_runs": [len(sel0), len(sel1)],
            "p_favoured_lower": p_hi, "p_other_upper": p_lo,
        }
        epsilon = self._finish(value, delta, details)
        details["evidence"] = self._evidence(details)
        return LowerBound(epsilon, delta, confidence, self.name, details, self.assumptions)

    def _selection_score(self, k_hi, n_hi, k_lo, n_lo, m0, m1, alpha, delta):
        """`forecast` of each hypothesis' bound on the evaluation part, smoothed over thresholds."""
        m_hi = np.array([m1, m0, m1, m0])[:, None]  # same order as _HYPOTHESES
        m_lo = np.array([m0, m1, m0, m1])[:, None]
        return _smooth(forecast(k_hi, n_hi, k_lo, n_lo, m_hi, m_lo, alpha, delta, self._score),
                       _SMOOTHING)

    def _split(self, x: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
        return split_runs(x, self.holdout, self.max_selection, name)

    def _check_delta(self, delta: object) -> float:
        return check_delta("delta", delta)

    def _finish(self, value: float, delta: float, details: dict) -> float:
        return value

    def _refusal(self, s0: np.ndarray, s1: np.ndarray) -> str:
        """Why this tester's assumption fails on the selection statistics ("" if it holds)."""
        return ""

    def _refuse(self, reason, x0, x1, delta, confidence) -> LowerBound:
        raise NotImplementedError  # only testers with an assumption refuse

    @staticmethod
    def _evidence(d: dict) -> str:
        other = "dataset" if d["favoured_input"] == "neighbour" else "neighbour"
        region = d["region"].replace("t", format(d["threshold"], ".4g"))
        return (f"{d['statistic']} region {region} has probability >= "
                f"{d['p_favoured_lower']:.4g} on the {d['favoured_input']} and <= "
                f"{d['p_other_upper']:.4g} on the {other}")


@dataclass(frozen=True)
class ThresholdTester(_ThresholdSearch):
    """Clopper–Pearson (epsilon, delta) lower bound from one thresholded statistic."""

    name = "threshold"
    assumptions = "none (any mechanism)"

    _score = staticmethod(threshold_score)


@dataclass(frozen=True)
class GaussianDPTester(_ThresholdSearch):
    """Gaussian-DP mu lower bound, converted to epsilon at the claimed delta (> 0)."""

    name = "gaussian-dp"
    assumptions = "the mechanism's trade-off curve is Gaussian (additive Gaussian noise)"
    on_mismatch: str = "fallback"
    min_check_runs: int = 400
    check_level: float = 1e-3

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.on_mismatch not in ("fallback", "raise"):
            raise invalid("on_mismatch", self.on_mismatch, "'fallback' or 'raise'")

    def _refusal(self, s0: np.ndarray, s1: np.ndarray) -> str:
        """The Gaussian-shape check: continuous, normal residuals, one variance."""
        n = min(len(s0), len(s1))
        if n < self.min_check_runs:
            return (f"{n} selection runs per side, fewer than the {self.min_check_runs} needed "
                    "to check the Gaussian shape")
        for side, s in (("dataset", s0), ("neighbour", s1)):
            if np.unique(s).size < 0.9 * s.size:
                return f"the statistic on the {side} has repeated values (not continuous)"
        residuals = np.concatenate([s0 - s0.mean(), s1 - s1.mean()])
        p = float(stats.normaltest(residuals).pvalue)
        if not p >= self.check_level:
            return f"the statistic is not normal (normaltest p = {p:.2g})"
        ratio = float(np.var(s0) / np.var(s1))
        tail = stats.f.cdf(ratio, len(s0) - 1, len(s1) - 1)
        if not self.check_level / 2 <= tail <= 1 - self.check_level / 2:
            return f"the two sides have different variances (ratio {ratio:.3g})"
        return ""

    def _refuse(self, reason, x0, x1, delta, confidence) -> LowerBound:
        if self.on_mismatch == "raise":
            raise TesterAssumptionError(
                f"GaussianDPTester refuses: {reason}; its bound holds only for Gaussian "
                "trade-off curves (use ThresholdTester, or run_audit without a tester)")
        fallback = ThresholdTester(self.statistic, self.candidates, self.holdout,
                                   self.max_selection)
        b = fallback.bound(x0, x1, delta=delta, confidence=confidence)
        details = dict(b.details, fallback=f"gaussian-dp refused ({reason}); threshold bound")
        return LowerBound(b.epsilon, delta, confidence, "threshold (gaussian-dp fallback)",
                          details, b.assumptions)

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

    def _evidence(self, d: dict) -> str:
        return (super()._evidence(d) + f", so mu >= Phi^-1({d['p_favoured_lower']:.4g}) - "
                f"Phi^-1({d['p_other_upper']:.4g}) = {d['mu_lower']:.4g}")


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
