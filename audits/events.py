"""Event search: atoms and small events, chosen on a selection part, tested on a fresh one.

    EventSearchTester(statistic=Auto(), bins=(16, 64, 256, 1024), atoms=256, keep=32,
                      holdout=0.2, max_selection=50_000, float_bits=True)

Threshold events ({s > t}) cannot isolate a point mass: a mechanism that
returns its input with a small probability (a delta-leak), or a discrete
mechanism whose rare outcome carries the privacy loss, needs events of small
mass.  On the selection part (the first `holdout` fraction of each sample)
this tester scores every candidate event:

- atoms: each exact output (a whole run, compared bit for bit) seen on the
  selection part, the `atoms` most frequent;
- bins: the cells of histograms of the statistic (a scalar, or the fitted
  linear discriminant of a vector) at each resolution of `bins`, with edges at
  quantiles of the pooled selection part;
- float bits: the 2-adic valuation of each run (the exponent of the lowest
  set bit over its coordinates, `lowest_bit`), in cells and as threshold
  events; two inputs whose releases lie on different float grids (the
  textbook floating-point mechanisms, Mironov 2012) differ there.

The `keep` events with the best forecast bound (each direction, the event
favouring either input) are then counted on the evaluation part, which never
influenced the choice, and each gets Clopper-Pearson bounds at error
(1 - confidence) / (2 keep) (Bonferroni over the kept events), so the
largest bound holds at `confidence`.  If the mechanism is (epsilon, delta)-DP,
p_hi <= e^eps p_lo + delta for every event, hence
eps >= ln((p_hi_lower - delta) / p_lo_upper).  No assumption on the mechanism.

Findings by kind (`privbandit.audits.findings`): the best float-bit event
(a bin or threshold of the lowest set bit) is a floating-point finding, the
best atom or bin of the statistic a distributional one; the
bound returned is the larger, the other in `others` (both under the same
Bonferroni correction).  `float_bits=False` searches distributional events
only.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_delta

from .binomial import cp_lower, cp_upper
from .findings import DISTRIBUTIONAL, FLOATING_POINT, KINDS
from .statistics import Auto, _rows
from .testers import (
    LowerBound,
    check_confidence,
    check_selection,
    forecast,
    split_runs,
    threshold_score,
)


def lowest_bit(outputs: np.ndarray) -> np.ndarray:
    """Per run, the smallest exponent e such that a coordinate has its lowest set bit at 2**e.

    Zeros and non-finite values are ignored (a run of zeros gets +inf).  For
    outputs on the grid 2**k every value is >= k.
    """
    x = _rows(outputs)
    counted = (x != 0) & np.isfinite(x)
    mantissa, exponent = np.frexp(np.where(counted, x, 1.0))  # x = m 2**e, 0.5 <= |m| < 1
    bits = np.abs(np.ldexp(mantissa, 53)).astype(np.int64)  # the 53-bit integer mantissa
    low = np.frexp((bits & -bits).astype(np.float64))[1] - 1  # index of its lowest set bit
    value = np.where(counted, exponent - 53 + low, np.inf)
    return value.min(axis=1)


@dataclass(frozen=True)
class _Event:
    """A candidate event: a name and a membership test over outputs."""

    text: str
    kind: str
    feature: str  # "rows", "statistic" or "bits"
    low: float = -np.inf
    high: float = np.inf
    row: Any = None

    def member(self, rows: np.ndarray, stat: np.ndarray, bits: np.ndarray) -> np.ndarray:
        if self.feature == "rows":
            return np.all(rows == self.row, axis=1) | (np.all(np.isnan(rows) & np.isnan(self.row),
                                                              axis=1))
        s = stat if self.feature == "statistic" else bits
        return (s >= self.low) & (s < self.high)


@dataclass(frozen=True)
class EventSearchTester:
    """Atoms, fine bins and float-bit events, chosen on selection, Bonferroni on evaluation."""

    statistic: Any = field(default_factory=Auto)
    bins: tuple = (16, 64, 256, 1024)
    atoms: int = 256
    keep: int = 32
    holdout: float = 0.2
    max_selection: int = 50_000
    float_bits: bool = True

    name = "event-search"
    assumptions = "none (any mechanism)"

    def __post_init__(self) -> None:
        check_count("atoms", self.atoms)
        check_count("keep", self.keep)
        check_selection(self.statistic, self.holdout, self.max_selection)
        if not self.bins or not all(isinstance(b, int) and b >= 2 for b in self.bins):
            raise invalid("bins", self.bins, "a non-empty tuple of ints >= 2 (histogram sizes)")

    def bound(self, outputs0, outputs1, *, delta: float, confidence: float) -> LowerBound:
        delta = check_delta("delta", delta)
        confidence = check_confidence(confidence)
        x0, x1 = np.asarray(outputs0), np.asarray(outputs1)
        (sel0, ev0) = split_runs(x0, self.holdout, self.max_selection, "outputs0")
        (sel1, ev1) = split_runs(x1, self.holdout, self.max_selection, "outputs1")
        stat = self.statistic.fit(sel0, sel1)
        events, k0, k1 = _candidates(_views(sel0, stat), _views(sel1, stat), self.bins,
                                     self.atoms, self.float_bits)
        alpha = (1.0 - confidence) / (2.0 * self.keep)
        chosen = self._choose(events, k0, k1, (len(sel0), len(sel1)), (len(ev0), len(ev1)),
                              alpha, delta)
        e0, e1 = _views(ev0, stat), _views(ev1, stat)
        best: dict[str, tuple] = {}
        for event, favoured in chosen:
            k0, k1 = int(event.member(*e0).sum()), int(event.member(*e1).sum())
            k_hi, n_hi, k_lo, n_lo = ((k1, len(ev1), k0, len(ev0)) if favoured == "neighbour"
                                      else (k0, len(ev0), k1, len(ev1)))
            p_hi, p_lo = float(cp_lower(k_hi, n_hi, alpha)), float(cp_upper(k_lo, n_lo, alpha))
            eps = float(threshold_score(np.array(p_hi), np.array(p_lo), delta))
            kind = FLOATING_POINT if event.feature == "bits" else DISTRIBUTIONAL
            if kind not in best or eps > best[kind][0]:
                best[kind] = (eps, event, favoured, k_hi, k_lo, n_hi, n_lo, p_hi, p_lo)
        context = {"statistic": getattr(stat, "name", "statistic"),
                   "selection_runs": [len(sel0), len(sel1)], "events_tested": len(chosen),
                   "candidates": len(events)}
        bounds = [self._bound(best[k], kind=k, delta=delta, confidence=confidence, **context)
                  for k in KINDS if k in best]
        top = max(bounds, key=lambda b: b.epsilon)  # the first of equals: distributional
        return replace(top, others=tuple(b for b in bounds if b is not top))

    def _bound(self, row: tuple, *, kind: str, delta: float, confidence: float,
               **context: Any) -> LowerBound:
        eps, event, favoured, k_hi, k_lo, n_hi, n_lo, p_hi, p_lo = row
        other = "dataset" if favoured == "neighbour" else "neighbour"
        details = {
            **context, "event": event.text, "event_kind": event.kind,
            "favoured_input": favoured, "hits_favoured": k_hi, "hits_other": k_lo,
            "evaluation_runs": [n_hi, n_lo], "p_favoured_lower": p_hi, "p_other_upper": p_lo,
            "evidence": (f"event {event.text} has probability >= {p_hi:.4g} on the {favoured} "
                         f"and <= {p_lo:.4g} on the {other} (best {kind} event of "
                         f"{context['events_tested']} tested, Bonferroni)"),
        }
        return LowerBound(eps, delta, confidence, self.name, details, self.assumptions, kind)

    def _choose(self, events, k0, k1, sizes, eval_sizes, alpha, delta):
        """The `keep` (event, favoured input) pairs with the best forecast bounds."""
        if not events:
            return [(_Event("(no event)", "none", "bits", np.inf, np.inf), "neighbour")]
        (n0, n1), (m0, m1) = sizes, eval_sizes
        to_neighbour = forecast(k1, n1, k0, n0, m1, m0, alpha, delta, threshold_score)
        to_dataset = forecast(k0, n0, k1, n1, m0, m1, alpha, delta, threshold_score)
        scores = np.concatenate([to_neighbour, to_dataset])
        kinds = np.array([e.kind for e in events] * 2)
        order = np.argsort(-scores, kind="stable")
        # a quota per kind, so a rare atom (whose zero count on one side makes its
        # forecast pessimistic) is always among the events tested; the rest by score
        picked = [i for kind in _KINDS for i in order[kinds[order] == kind][: self.keep // 4]]
        picked += [i for i in order if i not in set(picked)][: self.keep - len(picked)]
        return [(events[i % len(events)], "neighbour" if i < len(events) else "dataset")
                for i in picked]


_KINDS = ("atom", "bin", "float-bits")


def _views(outputs: np.ndarray, stat) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, statistic, lowest bit) of a batch of outputs."""
    rows = _rows(outputs)
    return rows, np.asarray(stat(outputs), dtype=float), lowest_bit(rows)


def _candidates(views0, views1, bins: tuple, atoms: int, float_bits: bool = True):
    """Candidate events with their hit counts on the two selection parts."""
    n0 = len(views0[0])
    found = [_atom_events(np.concatenate([views0[0], views1[0]]), n0, atoms),
             _bin_events(np.concatenate([views0[1], views1[1]]), n0, bins, "statistic", "s")]
    bits = np.concatenate([views0[2], views1[2]])
    if float_bits and np.isfinite(bits).any():
        found.append(_bin_events(bits, n0, bins, "bits", "lowest bit exponent"))
        found.append(_bit_thresholds(bits, n0))
    events = [e for part in found for e in part[0]]
    k0 = np.concatenate([part[1] for part in found]).astype(float)
    k1 = np.concatenate([part[2] for part in found]).astype(float)
    return events, k0, k1


def _atom_events(rows: np.ndarray, n0: int, atoms: int):
    values, inverse, counts = np.unique(rows, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    top = np.argsort(-counts, kind="stable")[:atoms]
    top = top[counts[top] >= 2]  # a value seen once is no evidence of an atom
    c0 = np.bincount(inverse[:n0], minlength=len(values))[top]
    c1 = np.bincount(inverse[n0:], minlength=len(values))[top]
    return [_Event(f"output == {_text(values[i])}", "atom", "rows", row=values[i])
            for i in top], c0, c1


def _bin_events(s: np.ndarray, n0: int, bins: tuple, feature: str, label: str):
    finite = s[np.isfinite(s)]
    if finite.size == 0:
        return [], np.zeros(0), np.zeros(0)
    events, c0, c1, seen = [], [], [], set()
    for b in bins:
        inner = np.unique(np.quantile(finite, np.linspace(0.0, 1.0, b + 1)))[1:-1]
        edges = np.concatenate([[-np.inf], inner, [np.inf]])
        h0 = np.histogram(s[:n0], edges)[0]
        h1 = np.histogram(s[n0:], edges)[0]
        for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
            if (lo, hi) not in seen:
                seen.add((lo, hi))
                events.append(_Event(f"{label} in [{lo:.6g}, {hi:.6g})", "bin", feature, lo, hi))
                c0.append(h0[i])
                c1.append(h1[i])
    return events, np.array(c0), np.array(c1)


def _bit_thresholds(bits: np.ndarray, n0: int):
    cuts = np.unique(bits[np.isfinite(bits)])[:64] + 0.5
    c0 = np.searchsorted(np.sort(bits[:n0]), cuts)
    c1 = np.searchsorted(np.sort(bits[n0:]), cuts)
    return [_Event(f"lowest bit exponent <= {t - 0.5:g}", "float-bits", "bits", -np.inf, t)
            for t in cuts], c0, c1


def _text(row: np.ndarray) -> str:
    return repr(float(row[0])) if row.size == 1 else np.array2string(row, precision=6,
                                                                      threshold=8)
