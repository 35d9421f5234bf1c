"""privbandit layer: empirical privacy audits, positive controls and attacks.

Imports `accounting` and `mechanisms` only.  Core API:

    run_audit(mechanism, pairs, tester, claim, *, samples, rng, confidence=0.95,
              name=None, pair_count=1, batch_size=None) -> AuditReport
    Claim(epsilon, delta=0.0, source="");  Claim.from_event(event, delta=0.0, accountant=None)
    NeighbouringPair(dataset, neighbour, relation, description="")
    ThresholdTester(statistic=Scalar(), candidates=256, holdout=0.2)
    GaussianDPTester(statistic=Scalar(), candidates=256, holdout=0.2)
    Scalar(), Projection(direction), LinearDiscriminant(ridge=1e-6)
    AuditReport (.verdict, .to_dict(), .to_json(), .from_dict()), format_table(reports)
    ReleaseAdapter(release, name, batched=True), OpenDPMechanism(measurement, name),
    DiffprivlibMechanism(mechanism_class, name, params)

See docs/audits.md for the method and how to audit your own mechanism.
"""
from .adapters import DiffprivlibMechanism, OpenDPMechanism, ReleaseAdapter
from .binomial import cp_lower, cp_upper
from .claims import Claim, NeighbouringPair
from .protocols import Mechanism, PairGenerator, Statistic, Tester
from .report import CONSISTENT, VIOLATION, AuditReport, format_table
from .runner import run_audit
from .statistics import LinearDiscriminant, Projection, Scalar
from .testers import GaussianDPTester, LowerBound, ThresholdTester

__all__ = [
    "CONSISTENT", "VIOLATION", "AuditReport", "Claim", "DiffprivlibMechanism",
    "GaussianDPTester", "LinearDiscriminant", "LowerBound", "Mechanism", "NeighbouringPair",
    "OpenDPMechanism", "PairGenerator", "Projection", "ReleaseAdapter", "Scalar", "Statistic",
    "Tester", "ThresholdTester", "cp_lower", "cp_upper", "format_table", "run_audit",
]
