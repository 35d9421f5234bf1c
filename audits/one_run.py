"""One-run audits: canaries in or out by recorded coins, one run, an epsilon lower bound.

    CanaryProtocol(canaries, build, pipeline, score, relation, name="pipeline")
    one_run_audit(protocol, claim, *, guesses=None, rng=0, confidence=0.99, method="snj",
                  delta=None, name=None) -> OneRunReport
    guess(scores, k_plus, k_minus, rng) -> (m,) guesses in {+1 in, -1 out, 0 abstain}
    OneRunReport: .verdict, .to_dict(), .to_json(), OneRunReport.from_dict(d)
    format_one_run_table(reports)

For pipelines too costly to run the hundreds of thousands of times a
many-run audit needs (a whole bandit study, a training loop).  The
protocol of Steinke, Nasr & Jagielski (NeurIPS 2023):

1. the audit draws m independent fair coins (its own child generator) and
   records them: coin i says whether canary i is in the dataset;
2. `protocol.build(included)` makes the dataset ((m,) bools -> dataset) and
   `protocol.pipeline(dataset, rng)` runs the user's pipeline once;
3. `protocol.score(output)` scores every canary ((m,) numbers, higher =
   more likely in), from the output alone;
4. the audit guesses "in" for the k+ highest scores and "out" for the k-
   lowest (ties broken at random), abstains on the rest, and counts the
   right guesses;
5. the count becomes an epsilon lower bound at `confidence`
   (`privbandit.audits.one_run_bounds`): method "snj", the (eps, delta)
   bound of the paper, no assumption; "gdp", the same bound read along
   the exact Gaussian curve, for pipelines whose noise is Gaussian (the
   claim needs delta > 0); or "fdp", the f-DP bound of Mahloujifar, Melis
   & Chaudhuri (ICML 2025) for the Gaussian trade-off curve
   (`privbandit.audits.one_run_fdp`), same assumption, tighter.  A method
   reports the largest of the bounds valid under its assumption ("gdp":
   snj and gdp; "fdp": all three) and names the one that gave it: each
   refutes exactly when the count of right guesses reaches a threshold,
   so the largest still errs with probability <= 1 - confidence.

The neighbouring relation is the canary's: the pipeline is claimed
(eps, delta)-DP with respect to one canary in or out (or, with
`build` choosing between two values of one record, one record replaced).
`guesses` = (k+, k-) is fixed before the run (default: m // 100 each, at
least 20 -- fewer guesses cap the ideal bound low -- and at most m // 2):
choosing it after seeing the scores would void the bound.  The
report gives the bound, the guesses made and right, the confidence, and the
*ideal* bound -- the one all guesses right would give for that m and k --
so users see how close the audit could have come; `details["bounds"]` and
`details["ideals"]` give each method's, `details["bound_from"]` the method
that gave the reported bound.  Protocols ready to use:
`privbandit.audits.one_run_protocols`.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count

from .defaults import DEFAULT_CONFIDENCE, coerce_claim, coerce_rng
from .findings import NON_FINITE, Finding
from .non_finite import count_non_finite
from .one_run_bounds import gdp_along, snj_epsilon
from .one_run_fdp import fdp_epsilon
from .report import VerdictMixin
from .testers import check_confidence

METHODS = {
    "snj": ("Steinke-Nasr-Jagielski (eps, delta) count bound", "none (any pipeline)"),
    "gdp": ("Steinke-Nasr-Jagielski count bound along the Gaussian curve",
            "the pipeline's trade-off curve is Gaussian (additive Gaussian noise)"),
    "fdp": ("Mahloujifar-Melis-Chaudhuri f-DP bound for the Gaussian trade-off curve",
            "the pipeline's trade-off curve is Gaussian (additive Gaussian noise)"),
}
# the bounds valid under each method's assumption (each alone: `_BOUNDS`)
_USES = {"snj": ("snj",), "gdp": ("snj", "gdp"), "fdp": ("snj", "gdp", "fdp")}
_BOUNDS = {"snj": snj_epsilon, "gdp": gdp_along, "fdp": fdp_epsilon}


@dataclass(frozen=True)
class CanaryProtocol:
    """What a one-run audit needs from the user (see the module docstring).

    canaries: m; build(included (m,) bool) -> dataset; pipeline(dataset, rng)
    -> output (one run); score(output) -> (m,) scores (higher: more likely in);
    relation: the neighbouring relation one canary realises.
    """

    canaries: int
    build: Callable[[np.ndarray], Any]
    pipeline: Callable[[Any, np.random.Generator], Any]
    score: Callable[[Any], Any]
    relation: str
    name: str = "pipeline"

    def __post_init__(self) -> None:
        check_count("canaries", self.canaries)
        for part in ("build", "pipeline", "score"):
            if not callable(getattr(self, part)):
                raise invalid(part, getattr(self, part), "a callable")
        if not isinstance(self.relation, str) or not self.relation.strip():
            raise invalid("relation", self.relation, "a non-empty string naming the relation")


@dataclass(frozen=True)
class OneRunReport(VerdictMixin):
    """The outcome of one one-run audit; `verdict` as `AuditReport`'s."""

    pipeline: str
    relation: str
    claimed_epsilon: float
    claimed_delta: float
    claim_source: str
    method: str
    assumptions: str
    canaries: int
    guesses: int
    correct: int
    epsilon_lower_bound: float
    ideal_epsilon: float
    confidence: float
    wall_time_s: float
    details: dict[str, Any] = field(default_factory=dict)
    findings: "list[Finding]" = field(default_factory=list)  # non-finite outputs only

    def __post_init__(self) -> None:  # findings read back from JSON come as dicts
        object.__setattr__(self, "findings", [f if isinstance(f, Finding) else Finding(**f)
                                              for f in self.findings])


def guess(scores: Any, k_plus: int, k_minus: int, rng: np.random.Generator) -> np.ndarray:
    """+1 for the k+ highest scores, -1 for the k- lowest, 0 elsewhere (ties at random)."""
    s = np.asarray(scores, dtype=float).ravel()
    if k_plus + k_minus > s.size:
        raise invalid("guesses", (k_plus, k_minus), f"k+ + k- <= {s.size} canaries")
    if not np.all(np.isfinite(s)):
        raise invalid("scores", "non-finite values", "finite scores, one per canary")
    order = np.lexsort((rng.permutation(s.size), s))  # ascending, random among ties
    out = np.zeros(s.size, dtype=np.int8)
    out[order[s.size - k_plus:]] = 1
    out[order[:k_minus]] = -1
    return out


def one_run_audit(
    protocol: CanaryProtocol,
    claim: Any,
    *,
    guesses: "tuple[int, int] | None" = None,
    rng: "np.random.Generator | int" = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    method: str = "snj",
    delta: "float | None" = None,
    name: "str | None" = None,
) -> OneRunReport:
    """Audit `protocol` in one run against `claim`; return a `OneRunReport`.

    Parameters
    ----------
    protocol : a `CanaryProtocol`: m canaries, `build(included) -> dataset`,
        `pipeline(dataset, rng) -> output` (the one run), `score(output) ->
        (m,) scores` and the relation one canary realises.  Ready ones:
        `sum_canaries(mechanism, dim, m)` (a released sum of vectors; the
        mechanism as `run_audit` takes it: an object with `release(value,
        rng)`, a `ReleaseAdapter`, or a plain `release(value, rng)`) and
        `user_round_canaries` (bandit pipelines).
    claim : a `Claim`, an epsilon, an (epsilon, delta) tuple or a privacy
        event read at `delta`.
    guesses : (k+, k-), the "in" and "out" guesses, fixed before the run
        (default: m // 100 each, at least 20, at most m // 2).
    rng : a `numpy.random.Generator` or an int seed (default 0); the coins,
        the run and the tie-breaks draw from three children of it.
    confidence : of the reported lower bound (default 0.99).
    method : "snj" (no assumption), "gdp" or "fdp" (Gaussian trade-off
        curves; need delta > 0), see the module docstring.
    delta : the delta at which an epsilon or event claim is read (None: 0).
    name : the report's pipeline name (default: the protocol's).

    A run whose output or scores hold NaN or an infinity makes no guess and
    is a violation (a non-finite finding, `privbandit.audits.non_finite`).
    Raises `InvalidParameterError` (a ValueError) for bad arguments, naming
    the value.
    """
    if not isinstance(protocol, CanaryProtocol):
        raise invalid("protocol", protocol, "a CanaryProtocol (see one_run_protocols)")
    claim = coerce_claim(claim, delta)
    confidence = check_confidence(confidence)
    m = protocol.canaries
    k_plus, k_minus = _guesses(guesses, m)
    _check_method(method, claim.delta)
    g_coins, g_run, g_ties = coerce_rng(rng).spawn(3)
    start = time.perf_counter()
    included = g_coins.random(m) < 0.5
    output = protocol.pipeline(protocol.build(included.copy()), g_run)
    scores = np.asarray(protocol.score(output), dtype=float).ravel()
    if scores.size != m:
        raise invalid("score(output)", f"{scores.size} scores", f"one score per canary ({m})")
    garbage = count_non_finite(output), count_non_finite(scores)
    if any(garbage):  # nothing to guess from: a finding as is
        return _non_finite_report(protocol, claim, method, garbage, (k_plus, k_minus),
                                  confidence, name, start)
    made = guess(scores, k_plus, k_minus, g_ties)
    r = int(np.count_nonzero(made))
    right = int(np.sum((made == 1) & included) + np.sum((made == -1) & ~included))
    bounds = {u: _BOUNDS[u](m, r, right, claim.delta, confidence) for u in _USES[method]}
    ideals = {u: _BOUNDS[u](m, r, r, claim.delta, confidence) for u in _USES[method]}
    # ties go to the method assuming least (the first)
    source = max(bounds, key=lambda u: (bounds[u], -_USES[method].index(u)))
    eps, ideal = bounds[source], max(ideals.values())
    title, assumptions = METHODS[method]
    details = {
        "method": title, "bound_from": source, "bounds": bounds, "ideals": ideals,
        "guesses_in": k_plus, "guesses_out": k_minus,
        "right_in": int(np.sum((made == 1) & included)),
        "right_out": int(np.sum((made == -1) & ~included)),
        "included": int(included.sum()),
        "evidence": (f"{right} of {r} guesses right ({k_plus} 'in', {k_minus} 'out', "
                     f"{m - r} abstentions) over {m} canaries give epsilon >= {eps:.4g} "
                     f"({source}); all {r} right would give epsilon >= {ideal:.4g}"),
    }
    return OneRunReport(
        pipeline=name or protocol.name, relation=protocol.relation,
        claimed_epsilon=claim.epsilon, claimed_delta=claim.delta, claim_source=claim.source,
        method=method, assumptions=assumptions, canaries=m, guesses=r, correct=right,
        epsilon_lower_bound=float(eps), ideal_epsilon=float(ideal), confidence=confidence,
        wall_time_s=time.perf_counter() - start, details=details,
    )


def _non_finite_report(protocol: CanaryProtocol, claim, method: str, garbage: tuple[int, int],
                       guesses: tuple[int, int], confidence: float, name, start: float
                       ) -> OneRunReport:
    """The report of a run that released NaN or an infinity: a violation, no guess made."""
    m, r = protocol.canaries, sum(guesses)
    ideal = max(_BOUNDS[u](m, r, r, claim.delta, confidence) for u in _USES[method])
    evidence = (f"the run released {garbage[0]} NaN or infinite entries and its scores "
                f"{garbage[1]}: no guarantee covers such outputs, and no guess was made")
    return OneRunReport(
        pipeline=name or protocol.name, relation=protocol.relation,
        claimed_epsilon=claim.epsilon, claimed_delta=claim.delta, claim_source=claim.source,
        method=method, assumptions=METHODS[method][1], canaries=m, guesses=0, correct=0,
        epsilon_lower_bound=0.0, ideal_epsilon=float(ideal), confidence=confidence,
        wall_time_s=time.perf_counter() - start,
        details={"evidence": evidence, "non_finite_output": garbage[0],
                 "non_finite_scores": garbage[1]},
        findings=[Finding(NON_FINITE, 0.0, "non-finite", evidence)])


def _guesses(guesses: Any, m: int) -> tuple[int, int]:
    if guesses is None:  # 1% of the canaries each way, at least 20 (an ideal above ~2)
        k = min(m // 2, max(20, m // 100))
        return (k, k) if k >= 1 else (1, 0)
    if not (isinstance(guesses, tuple) and len(guesses) == 2):
        raise invalid("guesses", guesses, "None or a tuple (k_plus, k_minus)")
    k_plus = check_count("guesses[0]", guesses[0], minimum=0)
    k_minus = check_count("guesses[1]", guesses[1], minimum=0)
    if not 1 <= k_plus + k_minus <= m:
        raise invalid("guesses", guesses, f"k+ + k- between 1 and the {m} canaries")
    return k_plus, k_minus


def _check_method(method: str, delta: float) -> None:
    if method not in METHODS:
        raise invalid("method", method, f"one of {sorted(METHODS)}")
    if method != "snj" and delta <= 0.0:
        raise invalid("method", method,
                      f"'snj' for a pure-DP claim ('{method}' needs delta > 0)")


_COLUMNS = (("pipeline", 40), ("method", 6), ("from", 4), ("claim eps", 10), ("delta", 8),
            ("canaries", 9), ("right/guesses", 14), ("eps lower", 10), ("ideal", 8),
            ("conf", 6), ("time s", 7), ("verdict", 10))


def format_one_run_table(reports) -> str:
    """A fixed-width table of one-run reports for terminals."""
    lines = ["  ".join(name.ljust(w) for name, w in _COLUMNS)]
    for r in reports:
        cells = [r.pipeline[:40], r.method, r.details.get("bound_from", r.method),
                 f"{r.claimed_epsilon:.4g}",
                 f"{r.claimed_delta:.0e}" if r.claimed_delta else "0", str(r.canaries),
                 f"{r.correct}/{r.guesses}", f"{r.epsilon_lower_bound:.4g}",
                 f"{r.ideal_epsilon:.4g}", f"{r.confidence:g}", f"{r.wall_time_s:.2f}",
                 r.verdict]
        lines.append("  ".join(c.ljust(w) for c, (_, w) in zip(cells, _COLUMNS, strict=True)))
    return "\n".join(lines)
