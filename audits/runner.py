"""`run_audit`: run any mechanism on neighbouring inputs and bound its epsilon.

    run_audit(mechanism, pairs, tester, claim, *, samples, rng,
              confidence=0.95, name=None, pair_count=1, batch_size=None)
        -> AuditReport

- `mechanism(dataset, rng, n) -> outputs`: n independent runs, leading axis n
  (a plain callable: an adapter, a bandit transcript builder, a broken
  control).  The audit layer never looks inside it.
- `pairs`: one `NeighbouringPair`, a sequence of them, or a generator
  `pairs(rng) -> NeighbouringPair` called `pair_count` times.
- `tester`: `ThresholdTester`, `GaussianDPTester` or anything with
  `bound(outputs0, outputs1, *, delta, confidence) -> LowerBound`.
- `claim`: the `Claim` under test; its delta is the delta the tester bounds at.

Each side of each pair draws `samples` runs from its own child generator
(`rng.spawn`), so reports are reproducible bit for bit from the seed.  With m
pairs each is tested at confidence 1 - (1 - confidence) / m (union bound) and
the largest lower bound is reported, so it still holds at `confidence`.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count
from privbandit.mechanisms.errors import ShapeError

from .claims import Claim, NeighbouringPair
from .report import AuditReport
from .testers import LowerBound, check_confidence

Mechanism = Callable[[Any, np.random.Generator, int], Any]


def run_audit(
    mechanism: Mechanism,
    pairs: "NeighbouringPair | Sequence[NeighbouringPair] | Callable",
    tester: Any,
    claim: Claim,
    *,
    samples: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
    name: "str | None" = None,
    pair_count: int = 1,
    batch_size: "int | None" = None,
) -> AuditReport:
    """Audit `mechanism` against `claim`; see the module docstring."""
    if not callable(mechanism):
        raise invalid("mechanism", mechanism, "a callable (dataset, rng, n) -> n outputs")
    if not isinstance(claim, Claim):
        raise invalid("claim", claim, "an audits.Claim")
    if not isinstance(rng, np.random.Generator):
        raise invalid("rng", rng, "a numpy.random.Generator")
    samples = check_count("samples", samples, minimum=4)
    confidence = check_confidence(confidence)
    if batch_size is not None:
        batch_size = check_count("batch_size", batch_size)
    start = time.perf_counter()
    pair_list = _pairs(pairs, check_count("pair_count", pair_count), rng)
    per_pair = 1.0 - (1.0 - confidence) / len(pair_list)
    results: list[tuple[NeighbouringPair, LowerBound]] = []
    for pair, (rng0, rng1) in zip(pair_list, (rng.spawn(2) for _ in pair_list), strict=True):
        out0 = _draw(mechanism, pair.dataset, rng0, samples, batch_size)
        out1 = _draw(mechanism, pair.neighbour, rng1, samples, batch_size)
        results.append((pair, tester.bound(out0, out1, delta=claim.delta, confidence=per_pair)))
    best_pair, best = max(results, key=lambda r: r[1].epsilon)
    details = dict(best.details)
    if len(results) > 1:
        details["per_pair"] = [
            {"pair": p.description, "epsilon_lower_bound": b.epsilon} for p, b in results
        ]
    return AuditReport(
        mechanism=name or _name(mechanism),
        relation=best_pair.relation,
        pair=best_pair.description,
        claimed_epsilon=claim.epsilon,
        claimed_delta=claim.delta,
        claim_source=claim.source,
        tester=getattr(tester, "name", type(tester).__name__),
        assumptions=getattr(tester, "assumptions", ""),
        epsilon_lower_bound=float(best.epsilon),
        confidence=confidence,
        samples_per_side=samples,
        pairs_tested=len(results),
        wall_time_s=time.perf_counter() - start,
        details=details,
    )


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
    chunks = [np.asarray(mechanism(dataset, g, k)) for g, k in zip(streams, sizes, strict=True)]
    for chunk, k in zip(chunks, sizes, strict=True):
        if chunk.ndim == 0 or chunk.shape[0] != k:
            raise ShapeError(
                f"mechanism {_name(mechanism)} returned outputs of shape {chunk.shape} for "
                f"n={k}; it must return n runs along axis 0"
            )
    return chunks[0] if len(chunks) == 1 else np.concatenate(chunks)


def _name(mechanism) -> str:
    return str(
        getattr(mechanism, "name", None) or getattr(mechanism, "__name__", None)
        or type(mechanism).__name__
    )
