"""privbandit layer: empirical privacy audits, positive controls and attacks.

Imports `accounting` and `mechanisms` only (never `privbandit`).  Core API:

    run_audit(mechanism, pairs, claim, *, samples=100_000, rng=0, confidence=0.99,
              tester=None, delta=None, name=None, pair_count=1, batch_size=None,
              float_model=None, value=None) -> AuditReport
      (or run_audit(mechanism, pairs, tester, claim, ...)); tester None = Battery()
      mechanism(dataset, rng, n) -> n outputs (leading axis n), an object with
      release(value, rng), ReleaseAdapter(release, batched=False) (the shape sum_canaries
      takes too), or a foreign object; NaN or infinite outputs: a non-finite finding
      pairs: NeighbouringPair | sequence of them | (rng -> NeighbouringPair)
    Claim(epsilon, delta=0.0, source="");  Claim.from_event(event, delta=0.0, accountant=None)
    NeighbouringPair(dataset, neighbour, relation, description="")
    Battery(float_model=None, value=None); ThresholdTester(statistic=Auto());
    GaussianDPTester(statistic=Auto(), on_mismatch="fallback"); EventSearchTester();
    ClassifierTester(); FloatTester(model, value); TimingTester()
      .bound(outputs0, outputs1, *, delta, confidence) -> LowerBound
    Sampler models: NumpyLaplaceModel, InverseCDFGaussianModel, GridModel, InverseModel
    Auto(), Scalar(), Projection(direction), LinearDiscriminant(ridge=1e-6)
    AuditReport: .verdict, .findings (a Finding per kind: DISTRIBUTIONAL, FLOATING_POINT,
      NON_FINITE),
      .violation_kinds, .to_dict(), .to_json(), AuditReport.from_dict(d);
      format_table(reports, expected=None); run_audit(..., kinds="distributional") runs
      distributional testers only
    Adapters: ReleaseAdapter(release, name, batched=True),
      OpenDPMechanism(measurement, name).claim(d_in, delta),
      DiffprivlibMechanism(mechanism_class, name, params).claim(), DiffprivlibFunction,
      as_mechanism(obj), as_release(obj), StreamAdapter(factory, name) with
      tree_factory(shape, horizon, ...),
      SecureSumAdapter(parties, dim, sigma, scale) (n secure sums as one)
    End to end on neighbouring environments: audit_pairs({name: run}, delta, claimed_epsilon)
      -> EnvironmentAuditReport, run(0) the first world and run(1) its neighbour, releases
      forced (forced_replay; privbandit.auditing.end_to_end builds the pairs of a registry entry);
      record(first) once, then audit_replays(recorded, {name: neighbour}, ...); every run
      checked against its ledgers' charges (check_recorded); no flip touching a release:
      "inconclusive"
    Black box, whole transcripts: audit_transcripts(sample, n, claim, *, rng) -> AuditReport,
      sample(which, rng) -> Transcript of Release(round, values, channel)
    One run (canaries): one_run_audit(protocol, claim, *, guesses=None, rng=0, confidence=0.99,
      method="snj"|"gdp"|"fdp") -> OneRunReport; CanaryProtocol(canaries, build, pipeline,
      score, relation, name); sum_canaries(mechanism, dim, canaries), user_round_canaries(run,
      score, canaries); bounds in privbandit.audits.one_run_bounds (Steinke-Nasr-Jagielski)
      and privbandit.audits.one_run_fdp (f-DP, Gaussian trade-off curves)
    Hypothesis: privbandit.audits.strategies.audit_settings, the profile for audits inside
      @given (no deadline, few examples, no shrinking of audit failures)
    Defaults: DEFAULT_CONFIDENCE = 0.99, DEFAULT_SAMPLES = 100_000 (privbandit.audits.defaults)
    Suite: AuditCase, standard_suite(exact, foreign, controls), run_cases, suite_failures,
      suite_summary; positive controls in `privbandit.audits.controls`,
      broken building blocks in `privbandit.audits.broken`; attacks in `privbandit.audits.attacks`.

See docs/audits.md for the method and how to audit your own mechanism.
"""
from importlib import import_module

# name -> submodule.  Loaded on first use, so the pytest plugin (a submodule)
# costs an unrelated test session next to nothing.
_NAMES = {
    "Auto": "statistics",
    "AuditCase": "cases",
    "Battery": "battery",
    "EnvironmentAuditReport": "environment",
    "audit_pairs": "environment",
    "audit_replays": "environment",
    "check_recorded": "environment",
    "record": "environment",
    "UnrecordedReleaseError": "environment",
    "forced_replay": "environment",
    "ClassifierTester": "classifier",
    "DEFAULT_CONFIDENCE": "defaults",
    "DEFAULT_SAMPLES": "defaults",
    "DISTRIBUTIONAL": "findings",
    "DiffprivlibFunction": "adapters",
    "EventSearchTester": "events",
    "FLOATING_POINT": "findings",
    "Finding": "findings",
    "FloatTester": "floating",
    "GridModel": "floating",
    "InverseCDFGaussianModel": "floating",
    "InverseModel": "floating",
    "NumpyLaplaceModel": "floating",
    "TesterAssumptionError": "testers",
    "TimingTester": "timing",
    "as_mechanism": "adapters",
    "as_release": "adapters",
    "NON_FINITE": "findings",
    "AuditReport": "report",
    "CONSISTENT": "report",
    "CanaryProtocol": "one_run",
    "OneRunReport": "one_run",
    "format_one_run_table": "one_run",
    "one_run_audit": "one_run",
    "sum_canaries": "one_run_protocols",
    "user_round_canaries": "one_run_protocols",
    "Claim": "claims",
    "ClaimRefuted": "assertions",
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
    "SecureSumAdapter": "secure",
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
    "Release": "transcript",
    "Transcript": "transcript",
    "audit_transcripts": "transcript",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str):
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)
