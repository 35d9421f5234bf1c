"""Assertions for tests of privacy code, failing with messages a user can act on.

    assert_consistent(mechanism, pair_generator, claimed, *, samples="quick", confidence=0.99,
                      rng=0, tester=None, delta=None, pair_count=1, name=None,
                      float_model=None, value=None, kinds=None) -> AuditReport
    assert_charged(ledger, events, *, rel_tol=1e-9) -> None
    assert_lossless(mask, contexts, *, rel_tol=1e-9) -> None
    resolve_samples(spec) -> int          # "quick" | "full" | int >= 4
    ClaimRefuted(AssertionError)          # raised by assert_consistent; `.report`

They raise AssertionError (pytest shows the message as is) and need neither
pytest nor Hypothesis.  Sample counts: `QUICK_SAMPLES` runs per side of each
pair for CI, `FULL_SAMPLES` for nightly runs; the pytest plugin's
`audit_samples` fixture returns whichever the command line chose.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np

from privbandit.accounting.accountants import Accountant
from privbandit.accounting.errors import invalid
from privbandit.accounting.events import NotDifferentiallyPrivate, PrivacyEvent, flatten
from privbandit.accounting.ledger import Ledger
from privbandit.accounting.validation import check_count, check_nonnegative

from .claims import NeighbouringPair
from .defaults import DEFAULT_CONFIDENCE, coerce_claim, coerce_rng
from .findings import DISTRIBUTIONAL, FLOATING_POINT, NON_FINITE
from .report import AuditReport
from .runner import run_audit
from .samples import FULL_SAMPLES, QUICK_SAMPLES, SAMPLE_PRESETS, parse_samples  # noqa: F401 (re-exported)


def resolve_samples(spec: object) -> int:
    """Runs per side from "quick", "full", an int >= 4 or a string of one."""
    samples = parse_samples(spec)
    if samples is not None:
        return samples
    raise invalid("samples", spec, "'quick', 'full' or an integer >= 4 (runs per side)")


# -- assert_consistent ----------------------------------------------------------------------
class ClaimRefuted(AssertionError):
    """An audit refuted a privacy claim; `report` is the `AuditReport`."""

    def __init__(self, message: str, report: AuditReport) -> None:
        super().__init__(message)
        self.report = report


def assert_consistent(
    mechanism: Any,
    pair_generator: Any,
    claimed: Any,
    *,
    samples: "int | str" = "quick",
    confidence: float = DEFAULT_CONFIDENCE,
    rng: "np.random.Generator | int" = 0,
    tester: Any = None,
    delta: "float | None" = None,
    pair_count: int = 1,
    name: "str | None" = None,
    float_model: Any = None,
    value: Any = None,
    kinds: Any = None,
) -> AuditReport:
    """Audit `mechanism` on neighbouring pairs; fail when the data refute `claimed`.

    - `mechanism(dataset, rng, n) -> n outputs` along axis 0, or a foreign
      object `run_audit` wraps (an OpenDP measurement, a diffprivlib
      mechanism, an object with `release(value, rng)`; `ReleaseAdapter`
      batches the latter).
    - `pair_generator`: `rng -> NeighbouringPair`, called `pair_count` times,
      or simply one `NeighbouringPair` or a sequence of them (as
      `privbandit.audits.run_audit` takes them).
    - `claimed`: an `privbandit.audits.Claim`, an epsilon, an (epsilon, delta) tuple, or a
      privacy event read through an accountant at `delta` (default 0).
    - `tester`: None (default) runs the battery of `privbandit.audits.battery`
      (threshold, event search, Gaussian-DP with its shape check, the
      classifier for vectors, float reachability given `float_model`), the
      failure probability split among them; or any one tester.
    - `rng`: a Generator or a seed (default 0): same seed, same verdict.
    - `kinds`: None (every kind of finding) or "distributional" to run the
      distributional testers only (`privbandit.audits.findings`).

    Fails (AssertionError with the audit report) when the lower bound on
    epsilon exceeds the claim; a correct mechanism fails with probability at
    most 1 - confidence.  The message says which kind of finding refuted the
claim -- distributional (check the mathematics: sensitivity, noise scale)
or floating-point (use a float-safe sampler) -- with each kind's bound.
Passing is evidence, never proof: the audit only
    sees the pairs and the statistic it is given.  Returns the report.
    """
    __tracebackhide__ = True  # pytest: show the caller's line, not this one
    _check_pairs(pair_generator)
    claim = coerce_claim(claimed, delta, "claimed")
    generator = coerce_rng(rng)
    report = run_audit(
        mechanism, pair_generator, claim, tester=tester, samples=resolve_samples(samples),
        rng=generator, confidence=confidence, name=name, pair_count=pair_count,
        float_model=float_model, value=value, kinds=kinds,
    )
    if report.violation:
        raise ClaimRefuted(_violation_message(report, rng), report)
    return report


def _check_pairs(pairs: Any) -> None:
    if isinstance(pairs, NeighbouringPair) or callable(pairs):
        return
    if isinstance(pairs, (list, tuple)) and pairs and all(
            isinstance(p, NeighbouringPair) for p in pairs):
        return
    raise invalid("pair_generator", pairs, "rng -> NeighbouringPair, a NeighbouringPair or a "
                  "non-empty list of them")


_ADVICE = {
    DISTRIBUTIONAL: [
        "The outputs on these neighbours differ more than the claim allows.  Check the",
        "sensitivity under this relation (how far one record can move the output) and",
        "the noise scale derived from it.",
    ],
    FLOATING_POINT: [
        "The outputs differ in their floating-point representation: one input releases",
        "doubles its neighbour cannot (Mironov 2012).  The mathematics may be right; use",
        "a float-safe sampler (the default grid or OpenDP's exact one).",
    ],
    NON_FINITE: [
        "The mechanism released NaN or an infinity, which no guarantee covers.  Look for",
        "an overflow, a NaN input passed through, or a noise scale of 0 or infinity.",
    ],
}


def _violation_message(r: AuditReport, rng: object) -> str:
    seed = _seed_text(rng)
    kinds = r.violation_kinds or (DISTRIBUTIONAL,)
    shown = ("it released NaN or an infinity" if NON_FINITE in kinds else
             f"epsilon >= {r.epsilon_lower_bound:.4g} with {r.confidence:.0%} confidence")
    lines = [
        f"privacy claim refuted for {r.mechanism} by a {' and '.join(kinds)} finding: "
        f"{shown}, but claimed epsilon = {r.claimed_epsilon:.4g} at delta = "
        f"{r.claimed_delta:g}",
        f"  relation : {r.relation}",
        f"  pair     : {r.pair or '(no description)'}",
        f"  claim    : {r.claim_source or '(no source given)'}",
        f"  tester   : {r.tester}; assumes {r.assumptions or 'nothing stated'}",
    ]
    evidence = _evidence(r.details)
    if evidence:
        lines.append(f"  evidence : {evidence}")
    if r.findings:
        lines.append("  by kind  : " + "; ".join(
            f"{f.kind} epsilon >= {f.epsilon_lower_bound:.4g} ({f.tester})" for f in r.findings))
    lines.append(f"  samples  : {r.samples_per_side} per side, {r.pairs_tested} pair(s), {seed}")
    for kind in kinds:
        lines += _ADVICE[kind]
    lines += ["A correct mechanism fails this check with probability at most "
              f"{1 - r.confidence:.2g};", "rerun with the same seed to reproduce."]
    return "\n".join(lines)


def _seed_text(rng: object) -> str:
    """How to rebuild the generator the audit started from (draws taken before it aside)."""
    if not isinstance(rng, np.random.Generator):
        return f"seed {rng}"
    seq = getattr(rng.bit_generator, "seed_seq", None)
    if not isinstance(seq, np.random.SeedSequence):
        return "the Generator passed as rng"
    key = f", spawn key {seq.spawn_key}" if seq.spawn_key else ""
    return f"rng seeded with {seq.entropy!r}{key}"


def _evidence(d: dict) -> str:
    return str(d.get("evidence", ""))


# -- assert_charged -------------------------------------------------------------------------
def assert_charged(ledger: Ledger, events: Any, *, rel_tol: float = 1e-9) -> None:
    """The ledger holds exactly `events` (one event or an iterable) and their cost.

    Events are compared as multisets of leaf releases (`privbandit.accounting.events.
    flatten`), so charging `e` with count=2, charging it twice and expecting
    `RepeatedEvent(e, 2)` all agree; `NotDifferentiallyPrivate` events are
    matched against the ledger's notes by reason.  The cost check composes
    the expected events, in order, into a fresh accountant of the ledger's
    kind and compares epsilon at the ledger's delta with the ledger's spent
    epsilon (relative tolerance `rel_tol`).
    """
    __tracebackhide__ = True
    if not isinstance(ledger, Ledger):
        raise invalid("ledger", ledger, "an accounting.Ledger")
    rel_tol = check_nonnegative("rel_tol", rel_tol)
    expected = _event_list(events)
    want_dp = [e for e in expected if not isinstance(e, NotDifferentiallyPrivate)]
    want_notes = Counter(e.reason for e in expected if isinstance(e, NotDifferentiallyPrivate))
    problems = _multiset_diff(_leaves(want_dp), _leaves(ledger.events), "release")
    problems += _multiset_diff(want_notes, Counter(ledger.summary()["not_dp_releases"]),
                               "not-DP note")
    spent, at_delta = ledger.spent()
    cost = _cost(ledger.accountant, want_dp, at_delta)
    if not math.isclose(spent, cost, rel_tol=rel_tol, abs_tol=1e-300):
        problems.append(f"spent epsilon {spent:.10g} at delta {at_delta:g}, but the expected "
                        f"events cost epsilon {cost:.10g}")
    if problems:
        raise AssertionError(f"ledger {ledger.unit!r} does not hold exactly the expected "
                             "events:\n  " + "\n  ".join(problems)
                             + f"\n  ledger events: {list(ledger.events)!r}")


def _event_list(events: Any) -> list[PrivacyEvent]:
    items = [events] if isinstance(events, PrivacyEvent) else events
    if not isinstance(items, Iterable) or isinstance(items, (str, bytes)):
        raise invalid("events", events, "a PrivacyEvent or an iterable of them")
    items = list(items)
    if not all(isinstance(e, PrivacyEvent) for e in items):
        raise invalid("events", events, "a PrivacyEvent or an iterable of PrivacyEvents")
    return items


def _leaves(events: Iterable[PrivacyEvent]) -> Counter:
    total: Counter = Counter()
    for e in events:
        for leaf, k in flatten(e):
            total[leaf] += k
    return total


def _multiset_diff(want: Counter, have: Counter, what: str) -> list[str]:
    out = [f"missing {what}: {k!r} x{n}" for k, n in (want - have).items()]
    return out + [f"unexpected {what}: {k!r} x{n}" for k, n in (have - want).items()]


def _cost(accountant: Accountant, events: list[PrivacyEvent], delta: float) -> float:
    # A copy keeps the accountant's settings (e.g. RDP orders); the base
    # constructor then empties it, so it starts from no releases.
    fresh = accountant.copy()
    Accountant.__init__(fresh)
    for e in events:
        fresh.compose(e)
    return fresh.epsilon(delta)


# -- assert_lossless ------------------------------------------------------------------------
def assert_lossless(mask: Any, contexts: Any, *, rel_tol: float = 1e-9) -> None:
    """Masking `contexts` loses nothing: sum_j Q^j x^j = Q x, unmasks to x, keeps geometry.

    `mask` is an `OrthogonalMask` (or anything with `q`, `widths` and
    `mask(j, x_j)`); `contexts` is a list of each party's (..., K, d_j)
    arrays or one (..., K, d) array split by `mask.widths`.  Checked, to
    `rel_tol` times the largest context norm: the parties' masked parts add
    up to Q x; Q^T of that sum (or `mask.unmask`) is x; each context's norm
    and the inner products between a party's contexts are unchanged.
    """
    __tracebackhide__ = True
    rel_tol = check_nonnegative("rel_tol", rel_tol)
    q, widths = _mask_parts(mask)
    parts = _split_contexts(contexts, widths)
    full = np.concatenate(parts, axis=-1)
    masked = sum(np.asarray(mask.mask(j, x), dtype=np.float64) for j, x in enumerate(parts))
    unmask = getattr(mask, "unmask", None)
    recovered = unmask(masked) if callable(unmask) else masked @ q
    scale = max(1.0, float(np.max(np.linalg.norm(full, axis=-1), initial=0.0)))
    tol = rel_tol * scale
    checks = [
        ("sum of masked parts vs Q x", masked, full @ q.T),
        ("unmasked sum vs the contexts", recovered, full),
        ("norms of masked vs plain contexts",
         np.linalg.norm(masked, axis=-1), np.linalg.norm(full, axis=-1)),
        ("inner products of masked vs plain contexts",
         masked @ np.swapaxes(masked, -1, -2) / scale, full @ np.swapaxes(full, -1, -2) / scale),
    ]
    problems = []
    for what, got, want in checks:
        err = float(np.max(np.abs(np.asarray(got) - want), initial=0.0))
        if not err <= tol:
            problems.append(f"{what}: max abs error {err:.3g} > tolerance {tol:.3g}")
    if problems:
        raise AssertionError(f"mask with widths {widths} is not lossless on contexts of shape "
                             f"{full.shape}:\n  " + "\n  ".join(problems))


def _mask_parts(mask: Any) -> tuple[np.ndarray, tuple[int, ...]]:
    q = getattr(mask, "q", None)
    widths = getattr(mask, "widths", None)
    if q is None or widths is None or not callable(getattr(mask, "mask", None)):
        raise invalid("mask", mask, "an OrthogonalMask (q, widths, mask(j, contexts))")
    widths = tuple(check_count("widths[...]", w) for w in widths)
    q = np.asarray(q, dtype=np.float64)
    if q.ndim != 2 or q.shape[0] != q.shape[1] or q.shape[1] != sum(widths):
        raise invalid("mask", mask, f"a square q with sum(widths) = {sum(widths)} columns")
    return q, widths


def _split_contexts(contexts: Any, widths: tuple[int, ...]) -> list[np.ndarray]:
    if isinstance(contexts, (list, tuple)):
        parts = [np.asarray(x, dtype=np.float64) for x in contexts]
    else:
        full = np.asarray(contexts, dtype=np.float64)
        if full.ndim < 1 or full.shape[-1] != sum(widths):
            raise invalid("contexts", f"an array of shape {full.shape}",
                          f"(..., K, {sum(widths)}) or a list of per-party arrays")
        parts = np.split(full, np.cumsum(widths)[:-1], axis=-1)
    shapes_ok = len(parts) == len(widths) and all(
        p.ndim >= 1 and p.shape[-1] == w for p, w in zip(parts, widths, strict=False))
    if not shapes_ok or len({p.shape[:-1] for p in parts}) != 1:
        raise invalid("contexts", [p.shape for p in parts],
                      f"one array (..., K, d_j) per party, widths {widths}, same leading shape")
    return parts
