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
      suite_summary, SUITE_SAMPLES; positive controls in `privbandit.audits.controls`,
      broken building blocks in `privbandit.audits.broken`; attacks in `privbandit.audits.attacks`.

See docs/audits.md for the method and how to audit your own mechanism.
"""
from importlib import import_module

# name -> submodule.  Loaded on first use, so the pytest plugin (a submodule)
# costs an unrelated test session next to nothing.
_NAMES = {
    "AuditCase": "cases",
    "AuditReport": "report",
    "CONSISTENT": "report",
    "Claim": "claims",
    "DiffprivlibMechanism": "adapters",
    "GaussianDPTester": "testers",
    "LinearDiscriminant": "statistics",
    "LowerBound": "testers",
    "Mechanism": "protocols",
    "NeighbouringPair": "claims",
    "OpenDPMechanism": "adapters",
    "PairGenerator": "protocols",
    "Projection": "statistics",
    "ReleaseAdapter": "adapters",
    "SUITE_SAMPLES": "suite",
    "Scalar": "statistics",
    "Statistic": "protocols",
    "StreamAdapter": "streams",
    "Tester": "protocols",
    "ThresholdTester": "testers",
    "VIOLATION": "report",
    "cp_lower": "binomial",
    "cp_upper": "binomial",
    "format_table": "report",
    "run_audit": "runner",
    "run_cases": "suite",
    "standard_suite": "suite",
    "suite_failures": "suite",
    "suite_summary": "suite",
    "tree_factory": "streams",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str):
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)
