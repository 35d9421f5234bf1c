"""`run_audit`: run any mechanism on neighbouring inputs and bound its epsilon.

    run_audit(mechanism, pairs, claim, *, samples=None, rng=0, confidence=0.99,
              tester=None, delta=None, name=None, pair_count=1, batch_size=None,
              float_model=None, value=None, kinds=None) -> AuditReport
    run_audit(mechanism, pairs, tester, claim, ...)       # the explicit-tester form

Each side of each pair draws `samples` runs from its own child generator
(`rng.spawn`), so reports are reproducible bit for bit from the seed.  With m
pairs each is tested at confidence 1 - (1 - confidence) / m (union bound) and
the largest lower bound is reported, so it still holds at `confidence`.
The report's `findings` hold the largest bound of each kind (distributional,
floating-point) over the pairs, each with its tester and evidence; the
report's bound is the largest of them.  Outputs with NaN or an infinity are a
finding of their own (non-finite: a violation whatever the claim,
`privbandit.audits.non_finite`), checked before any tester reads them.
Outputs that are not numbers (labels, candidates) are mapped to the indices
of their sorted distinct values, shared by both sides (`details["categories"]`).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count
from privbandit.mechanisms.errors import ShapeError

from .adapters import as_mechanism
from .battery import Battery
from .claims import NeighbouringPair
from .defaults import DEFAULT_CONFIDENCE, DEFAULT_SAMPLES, coerce_claim, coerce_rng
from .findings import NON_FINITE, Finding, check_kinds
from .non_finite import non_finite_bound
from .report import AuditReport
from .testers import LowerBound, check_confidence

Mechanism = Callable[[Any, np.random.Generator, int], Any]


def run_audit(
    mechanism: Any,
    pairs: "NeighbouringPair | Sequence[NeighbouringPair] | Callable",
    *args: Any,
    claim: Any = None,
    tester: Any = None,
    samples: "int | None" = None,
    rng: "np.random.Generator | int" = 0,
    confidence: float = DEFAULT_CONFIDENCE,
    delta: "float | None" = None,
    name: "str | None" = None,
    pair_count: int = 1,
    batch_size: "int | None" = None,
    float_model: Any = None,
    value: Any = None,
    kinds: "str | Sequence[str] | None" = None,
) -> AuditReport:
    """Audit `mechanism` on neighbouring inputs against `claim`; return an `AuditReport`.

    Parameters
    ----------
    mechanism : what is audited, in one of two call shapes.  Many runs at once:
        a callable `mechanism(dataset, rng, n)` returning n independent runs
        along axis 0 (an adapter, a bandit transcript builder, a broken
        control).  One run: an object with `release(value, rng)` (every
        mechanism of `privbandit.mechanisms`; called n times), or a plain
        `release(value, rng)` function wrapped as `ReleaseAdapter(release,
        batched=False)` -- the same objects `sum_canaries` takes for a one-run
        audit.  OpenDP measurements and diffprivlib mechanisms are wrapped for
        you (`as_mechanism`); anything else is refused naming the adapter.
    pairs : one `NeighbouringPair`, a sequence of them, or a generator
        `pairs(rng) -> NeighbouringPair` called `pair_count` times.
    claim : the guarantee under test: a `Claim`, an epsilon, an (epsilon,
        delta) tuple or a privacy event (read at `delta` through the pure-DP
        or exact-Gaussian accountant); its delta is the delta the testers
        bound at.  May be given positionally after `pairs`, or after `tester`.
    tester : None (the default battery, `privbandit.audits.battery`) or any
        object with `bound(outputs0, outputs1, *, delta, confidence) ->
        LowerBound`.
    samples : runs per side of each pair (default `DEFAULT_SAMPLES` = 100,000;
        at least 4).
    rng : a `numpy.random.Generator` or an int seed (default 0).
    confidence : of the reported lower bound (default 0.99).
    delta : the delta at which an epsilon or event claim is read (None: 0).
    name : the report's mechanism name (default: the callable's name).
    pair_count : how many pairs a generator `pairs` draws (default 1).
    batch_size : draw the runs in chunks of this many (memory), same numbers.
    float_model, value : add the floating-point reachability tester to the
        battery (`privbandit.audits.floating`; not with an explicit tester).
    kinds : None (every kind of finding) or e.g. "distributional": the
        battery then runs distributional testers only, and an explicit
        tester's bounds of other kinds are dropped
        (`privbandit.audits.findings`).  Non-finite outputs are always checked.

    The verdict is "violation" when the lower bound exceeds the claimed
    epsilon or the mechanism released NaN or an infinity; a correct
    mechanism gets a violation with probability at most 1 - confidence.
    Raises `InvalidParameterError` (a ValueError) for bad arguments, naming
    the value, and `TypeError` when the mechanism cannot be called as
    `mechanism(dataset, rng, n)`.
    """
    tester, claim = _tester_and_claim(args, tester, claim)
    claim = coerce_claim(claim, delta)
    mechanism = as_mechanism(mechanism)
    kinds = check_kinds(kinds)
    if tester is None:
        tester = Battery(float_model, value, kinds=kinds)
    elif not callable(getattr(tester, "bound", None)):
        raise invalid("tester", tester, "None (the default battery) or an object with "
                      "bound(outputs0, outputs1, *, delta, confidence)")
    elif float_model is not None:
        raise invalid("float_model", float_model, "None when an explicit tester is given "
                      "(use FloatTester(model) as the tester)")
    rng = coerce_rng(rng)
    samples = DEFAULT_SAMPLES if samples is None else check_count("samples", samples, minimum=4)
    confidence = check_confidence(confidence)
    if batch_size is not None:
        batch_size = check_count("batch_size", batch_size)
    start = time.perf_counter()
    pair_list = _pairs(pairs, check_count("pair_count", pair_count), rng)
    per_pair = 1.0 - (1.0 - confidence) / len(pair_list)
    results: list[tuple[NeighbouringPair, LowerBound]] = []
    categories: list = []
    for pair, (rng0, rng1) in zip(pair_list, (rng.spawn(2) for _ in pair_list), strict=True):
        out0 = _draw(mechanism, pair.dataset, rng0, samples, batch_size)
        out1 = _draw(mechanism, pair.neighbour, rng1, samples, batch_size)
        out0, out1, categories = _encode(out0, out1)
        garbage = non_finite_bound(out0, out1, delta=claim.delta, confidence=per_pair)
        if garbage is not None:  # the testers cannot read NaN or infinities: a finding as is
            results.append((pair, garbage))
            continue
        kwargs = {"inputs": (pair.dataset, pair.neighbour)} if getattr(
            tester, "needs_inputs", False) else {}
        results.append((pair, tester.bound(out0, out1, delta=claim.delta, confidence=per_pair,
                                           **kwargs)))
    found = _of_kinds(results, kinds, tester)
    best_pair, best = max(found, key=lambda r: r[1].epsilon)
    details = dict(best.details)
    if categories:
        details["categories"] = [str(c) for c in categories[:50]]
    if len(pair_list) > 1:
        details["per_pair"] = [{"pair": p.description, "kind": b.kind,
                                "epsilon_lower_bound": b.epsilon} for p, b in found]
    return AuditReport(
        mechanism=name or _name(mechanism),
        relation=best_pair.relation,
        pair=best_pair.description,
        claimed_epsilon=claim.epsilon,
        claimed_delta=claim.delta,
        claim_source=claim.source,
        tester=getattr(best, "tester", "") or getattr(tester, "name", type(tester).__name__),
        assumptions=best.assumptions or getattr(tester, "assumptions", ""),
        epsilon_lower_bound=float(best.epsilon),
        confidence=confidence,
        samples_per_side=samples,
        pairs_tested=len(pair_list),
        wall_time_s=time.perf_counter() - start,
        details=details,
        findings=_findings(found, kinds),
    )


def _of_kinds(results: list, kinds: tuple[str, ...], tester: Any) -> list:
    """(pair, bound) for each pair and requested kind its tester searched."""
    out = [(pair, found[k]) for pair, b in results
           for found in [b.by_kind()] for k in (*kinds, NON_FINITE) if k in found]
    if not out:
        raise invalid("kinds", kinds, f"kinds that the tester {getattr(tester, 'name', tester)} "
                      f"searches ({sorted(results[0][1].by_kind())})")
    return out


def _findings(results: list, kinds: tuple[str, ...]) -> list[Finding]:
    """The largest bound of each kind over the pairs, with its tester and evidence."""
    out = []
    for kind in (*kinds, NON_FINITE):
        of_kind = [b for _, b in results if b.kind == kind]
        if of_kind:
            b = max(of_kind, key=lambda b: b.epsilon)
            out.append(Finding(kind, float(b.epsilon), b.tester,
                               str(b.details.get("evidence", ""))))
    return out


def _tester_and_claim(args: tuple, tester: Any, claim: Any) -> tuple[Any, Any]:
    """run_audit(m, pairs, claim) or run_audit(m, pairs, tester, claim), or keywords."""
    if len(args) > 2:
        raise invalid("arguments", args, "(claim) or (tester, claim) after mechanism and pairs")
    if len(args) == 2:
        if tester is not None or claim is not None:
            raise invalid("tester", tester, "given once (positionally or by keyword)")
        return args
    if len(args) == 1:
        if claim is not None:
            if tester is not None:
                raise invalid("tester", tester, "given once (positionally or by keyword)")
            return args[0], claim
        return tester, args[0]
    if claim is None:
        raise invalid("claim", None, "given: a Claim, an epsilon, (epsilon, delta) or an event")
    return tester, claim


def _pairs(pairs, count: int, rng: np.random.Generator) -> list[NeighbouringPair]:
    if isinstance(pairs, NeighbouringPair):
        out = [pairs]
    elif callable(pairs):
        out = [pairs(g) for g in rng.spawn(count)]
    elif isinstance(pairs, Sequence):
        out = list(pairs)
    else:
        out = []
    if not out or not all(isinstance(p, NeighbouringPair) for p in out):
        raise invalid(
            "pairs", pairs,
            "a NeighbouringPair, a non-empty sequence of them, or rng -> NeighbouringPair",
        )
    return out


def _draw(mechanism, dataset, rng, n: int, batch_size: "int | None") -> np.ndarray:
    sizes = [n] if batch_size is None else [min(batch_size, n - i) for i in range(0, n, batch_size)]
    streams = rng.spawn(len(sizes))
    try:
        chunks = [np.asarray(mechanism(dataset, g, k)) for g, k in zip(streams, sizes,
                                                                         strict=True)]
    except TypeError as err:
        raise TypeError(
            f"mechanism {_name(mechanism)} failed when called as mechanism(dataset, rng, n): "
            f"{err}.  An audit mechanism returns n runs along axis 0; wrap other objects with "
            "ReleaseAdapter(obj.release), StreamAdapter(factory), OpenDPMechanism(measurement), "
            "DiffprivlibMechanism(cls, params=...) or DiffprivlibFunction(tool, params=...)"
        ) from err
    for chunk, k in zip(chunks, sizes, strict=True):
        if chunk.ndim == 0 or chunk.shape[0] != k:
            raise ShapeError(
                f"mechanism {_name(mechanism)} returned outputs of shape {chunk.shape} for "
                f"n={k}; it must return n runs along axis 0"
            )
    return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)


def _encode(out0: np.ndarray, out1: np.ndarray):
    """Non-numeric outputs as indices into their sorted distinct values (shared by both sides)."""
    if out0.dtype.kind in "biuf" and out1.dtype.kind in "biuf":
        return out0, out1, []
    pooled = np.concatenate([out0.ravel(), out1.ravel()]).astype(str)
    categories, index = np.unique(pooled, return_inverse=True)
    codes = index.astype(float)
    return (codes[: out0.size].reshape(out0.shape), codes[out0.size:].reshape(out1.shape),
            list(categories))


def _name(mechanism) -> str:
    return str(
        getattr(mechanism, "name", None) or getattr(mechanism, "__name__", None)
        or type(mechanism).__name__
    )
