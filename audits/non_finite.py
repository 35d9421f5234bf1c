"""Non-finite outputs: a mechanism that releases NaN or an infinity is a finding.

    non_finite_bound(outputs0, outputs1, *, delta, confidence) -> LowerBound | None
    count_non_finite(output) -> int

No privacy guarantee covers a NaN or an infinity (overflow, a NaN input, a
scale of 0 release them), and the testers cannot read such samples, so the
audits check them first (`privbandit.audits.findings.NON_FINITE`): a report
with a non-finite finding is a violation whatever its bound.  The bound is
that of the one event fixed in advance, "a run has a non-finite entry",
counted on both inputs with Clopper-Pearson bounds at error
(1 - confidence) / 2 per direction: it is large when one input releases
garbage more often than its neighbour, 0 when both always do.
"""
from __future__ import annotations

import numpy as np

from .binomial import cp_lower, cp_upper
from .findings import NON_FINITE
from .statistics import _rows
from .testers import LowerBound, threshold_score


def count_non_finite(output: object) -> int:
    """How many entries of a numeric output are NaN or infinite (0 for other outputs)."""
    try:
        x = np.asarray(output)
    except (TypeError, ValueError):  # a ragged or structured view: not an array of numbers
        return 0
    return int(np.count_nonzero(~np.isfinite(x))) if x.dtype.kind in "fc" else 0


def non_finite_bound(outputs0: np.ndarray, outputs1: np.ndarray, *, delta: float,
                     confidence: float) -> "LowerBound | None":
    """The non-finite finding of two samples of runs, None when every entry is finite."""
    if np.asarray(outputs0).dtype.kind not in "fc" and np.asarray(outputs1).dtype.kind not in "fc":
        return None
    bad = [~np.isfinite(_rows(x)).all(axis=1) for x in (outputs0, outputs1)]
    k0, k1 = (int(b.sum()) for b in bad)
    if not (k0 or k1):
        return None
    n0, n1 = (b.size for b in bad)
    alpha = (1.0 - confidence) / 2.0
    eps = max(float(threshold_score(np.array(cp_lower(hi, n_hi, alpha)),
                                    np.array(cp_upper(lo, n_lo, alpha)), delta))
              for hi, n_hi, lo, n_lo in ((k0, n0, k1, n1), (k1, n1, k0, n0)))
    evidence = (f"{k0} of {n0} runs on the dataset and {k1} of {n1} on the neighbour released "
                "NaN or an infinity: no guarantee covers such outputs")
    return LowerBound(eps, delta, confidence, "non-finite",
                      {"evidence": evidence, "non_finite_runs": [k0, k1]},
                      "none (the event is fixed before sampling)", NON_FINITE)
