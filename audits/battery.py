"""The default tester: a battery of testers under one failure probability.

    Battery(float_model=None, value=None, classifier=True, kinds=KINDS)

`run_audit` without a tester (and `assert_consistent`, `privbandit audit`)
uses it.  Which testers run is decided from the shape of the outputs and the
claim, never from their values, so the split below is fixed in advance:

- one number per run: threshold (on the value), event search (atoms, bins,
  float bits), Gaussian-DP when delta > 0;
- vectors, matrices: threshold and event search on a fitted linear
  discriminant, Gaussian-DP when delta > 0, the classifier (DP-Sniper style,
  scikit-learn);
- with `float_model`: floating-point reachability under that sampler model.

Findings by kind (`privbandit.audits.findings`): the battery keeps the best
bound of each kind -- distributional (threshold, Gaussian-DP, classifier,
the event search's atoms and bins) and floating-point (the event search's
float-bit events, reachability) -- and returns the larger, the other in
`others`.  `kinds=("distributional",)` runs distributional testers only
(no float-bit events, no reachability tester).

With m testers each runs at confidence 1 - (1 - confidence) / m, so by the
union bound the largest of their bounds holds at `confidence`; the report
names the tester that found it and lists every tester's bound.  A tester
that cannot run (the classifier without scikit-learn) is skipped with a
one-line note; its share of the failure probability is simply unused.  The
Gaussian-DP tester checks its assumption and falls back to a threshold bound
on a non-Gaussian statistic.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from privbandit.accounting.errors import MissingExtraError

from .classifier import ClassifierTester
from .events import EventSearchTester
from .findings import FLOATING_POINT, KINDS, check_kinds
from .floating import FloatTester
from .statistics import _rows
from .testers import GaussianDPTester, LowerBound, ThresholdTester, check_confidence


@dataclass(frozen=True)
class Battery:
    """Several testers, the failure probability split among them (see the module docstring)."""

    float_model: Any = None
    value: Any = None
    classifier: bool = True
    kinds: tuple = KINDS

    name = "battery"
    assumptions = "none (each tester's own; the Gaussian-DP one is checked)"
    needs_inputs = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "kinds", check_kinds(self.kinds))

    def members(self, outputs0: np.ndarray, delta: float) -> list:
        """The testers that run for outputs shaped like `outputs0` and this delta."""
        vector = _rows(outputs0[:1]).shape[1] > 1
        floats = FLOATING_POINT in self.kinds
        out: list = [ThresholdTester(), EventSearchTester(float_bits=floats)]
        if delta > 0:
            out.append(GaussianDPTester())
        if vector and self.classifier:
            out.append(ClassifierTester())
        if self.float_model is not None and floats:
            out.append(FloatTester(self.float_model, self.value))
        return out

    def bound(self, outputs0, outputs1, *, delta: float, confidence: float,
              inputs: "tuple | None" = None) -> LowerBound:
        confidence = check_confidence(confidence)
        x0, x1 = np.asarray(outputs0), np.asarray(outputs1)
        members = self.members(x0, delta)
        each = 1.0 - (1.0 - confidence) / len(members)
        results, notes = [], []
        for tester in members:
            try:
                if getattr(tester, "needs_inputs", False):
                    b = tester.bound(x0, x1, delta=delta, confidence=each, inputs=inputs)
                else:
                    b = tester.bound(x0, x1, delta=delta, confidence=each)
            except MissingExtraError as err:
                notes.append(f"{tester.name} skipped: {err}")
                continue
            results.extend(b.by_kind()[k] for k in self.kinds if k in b.by_kind())
        best = {k: max((b for b in results if b.kind == k), key=lambda b: b.epsilon)
                for k in self.kinds if any(b.kind == k for b in results)}
        if not best:  # no tester searched a requested kind on these outputs
            kind = self.kinds[0]
            best = {kind: LowerBound(0.0, delta, each, "none", {
                "evidence": f"no {kind} event applies to these outputs"}, "", kind)}
        top = max(best.values(), key=lambda b: b.epsilon)  # the first of equals: distributional
        details = dict(top.details)
        details["found_by"] = top.tester
        details["battery"] = [{"tester": b.tester, "kind": b.kind, "epsilon_lower_bound": b.epsilon,
                               "evidence": b.details.get("evidence", "")} for b in results]
        details["confidence_per_tester"] = each
        if notes:
            details["notes"] = notes
        others = tuple(replace(b, confidence=confidence) for b in best.values() if b is not top)
        return LowerBound(top.epsilon, delta, confidence, top.tester, details, top.assumptions,
                          top.kind, others)
