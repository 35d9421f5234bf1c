"""privbandit layer: empirical privacy audits, positive controls and attacks.

Imports `accounting` and `mechanisms` only (never `privbandit`).  Core API:

    run_audit(mechanism, pairs, tester, claim, *, samples, rng, confidence=0.95,
              name=None, pair_count=1, batch_size=None) -> AuditReport
      mechanism(dataset, rng, n) -> n outputs (leading axis n)
      pairs: NeighbouringPair | sequence of them | (rng -> NeighbouringPair)
    Claim(epsilon, delta=0.0, source="");  Claim.from_event(event, delta=0.0, accountant=None)
    NeighbouringPair(dataset, neighbour, relation, description="")
    ThresholdTester(statistic=Scalar(), candidates=256, holdout=0.2)
    GaussianDPTester(statistic=Scalar(), candidates=256, holdout=0.2)
      .bound(outputs0, outputs1, *, delta, confidence) -> LowerBound
    Scalar(), Projection(direction), LinearDiscriminant(ridge=1e-6)
    AuditReport: .verdict, .to_dict(), .to_json(), AuditReport.from_dict(d);
      format_table(reports, expected=None)
    Adapters: ReleaseAdapter(release, name, batched=True),
      OpenDPMechanism(measurement, name).claim(d_in, delta),
      DiffprivlibMechanism(mechanism_class, name, params).claim(),
      StreamAdapter(factory, name) with tree_factory(shape, horizon, sigma, clip_norm=...)
    Suite: AuditCase, standard_suite(exact, foreign, controls), run_cases, suite_failures,
      suite_summary, SUITE_SAMPLES; positive controls in `audits.controls`,
      broken building blocks in `audits.broken`; attacks in `audits.attacks`.

See docs/audits.md for the method and how to audit your own mechanism.
"""
from .adapters import DiffprivlibMechanism, OpenDPMechanism, ReleaseAdapter
from .binomial import cp_lower, cp_upper
from .cases import AuditCase
from .claims import Claim, NeighbouringPair
from .protocols import Mechanism, PairGenerator, Statistic, Tester
from .report import CONSISTENT, VIOLATION, AuditReport, format_table
from .runner import run_audit
from .statistics import LinearDiscriminant, Projection, Scalar
from .streams import StreamAdapter, tree_factory
from .suite import SUITE_SAMPLES, run_cases, standard_suite, suite_failures, suite_summary
from .testers import GaussianDPTester, LowerBound, ThresholdTester

__all__ = [
    "CONSISTENT", "SUITE_SAMPLES", "VIOLATION", "AuditCase", "AuditReport", "Claim",
    "DiffprivlibMechanism", "GaussianDPTester", "LinearDiscriminant", "LowerBound", "Mechanism",
    "NeighbouringPair", "OpenDPMechanism", "PairGenerator", "Projection", "ReleaseAdapter",
    "Scalar", "Statistic", "StreamAdapter", "Tester", "ThresholdTester", "cp_lower", "cp_upper",
    "format_table", "run_audit", "run_cases", "standard_suite", "suite_failures",
    "suite_summary", "tree_factory",
]
