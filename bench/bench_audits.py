"""Audits at full counts: tightness, the suite, the targets of the default battery, attacks.

1. Tightness.  LaplaceMeans at eps = 1 (default grid sampler), 10^6 runs per
   side, threshold tester: the lower bound must reach >= 0.97.  A
   GaussianVector that is exactly (1, 1e-5)-DP, 10^6 runs per side,
   Gaussian-DP tester: >= 0.95.  Ratios: lower bound / claim, and audit time
   / the time to draw the same outputs alone (measured in the same run).
2. The standard suite (our mechanisms with the default and the exact
   sampler, OpenDP and diffprivlib, the positive controls), every case at its
   own budget with the default battery (no tester named); 99% confidence.
3. Targets of the battery: an under-declared Gaussian (sensitivity 2 declared
   as 1: true eps 1.61 against a claim of 1) refuted by `assert_consistent`
   with its defaults at 10k runs, over 100 seeds (target >= 95); every
   correct case of the suite audited over 20 seeds at its budget, counting
   false alarms against the stated failure probability (1% per audit).
4. Attacks: mask recovery error against known pairs and rounds observed
   (d_j = 3 inside d = 10), and the differencing attack on C-anonymous
   elicitation against C, the others' reward rate and the Laplace option.

Run: .venv/bin/python bench/bench_audits.py [--quick]   (about ten minutes on an idle machine)
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from privbandit.audits import (
    GaussianDPTester,
    NeighbouringPair,
    Projection,
    ReleaseAdapter,
    ThresholdTester,
    run_audit,
)
from privbandit.audits.assertions import ClaimRefuted, assert_consistent
from privbandit.audits.attacks import differencing_attack, pca_curve, recovery_curve
from privbandit.audits.cases import CANARY, gaussian_vector_case, laplace_means_case
from privbandit.audits.report import format_table
from privbandit.audits.suite import (
    expected_verdict,
    run_case,
    run_cases,
    standard_suite,
    suite_failures,
)
from privbandit.mechanisms import GaussianVector
from privbandit.mechanisms.samplers import GRID

TIGHT_SAMPLES = 10**6


def tightness(case, tester, batch_size: int, rng: np.random.Generator):
    """(report, seconds, seconds to draw the outputs alone)."""
    start = time.perf_counter()
    report = run_audit(case.mechanism, case.pair, tester, case.claim,
                       samples=TIGHT_SAMPLES, rng=rng, confidence=0.95, name=case.name,
                       batch_size=batch_size)
    seconds = time.perf_counter() - start
    draw = np.random.default_rng(0)
    start = time.perf_counter()
    for dataset in (case.pair.dataset, case.pair.neighbour):
        for lo in range(0, TIGHT_SAMPLES, batch_size):
            case.mechanism(dataset, draw, min(batch_size, TIGHT_SAMPLES - lo))
    return report, seconds, time.perf_counter() - start


def underdeclared_gaussian(seeds: int) -> int:
    """How many of `seeds` audits (assert_consistent defaults, 10k runs) refute eps 1.61 vs 1."""
    mech = GaussianVector.from_privacy(1.0, 1e-5, 1.0)
    pair = NeighbouringPair(0.0, 2.0, "scalars at distance 2 (sensitivity 2 declared as 1)")
    caught = 0
    for seed in range(seeds):
        try:
            assert_consistent(ReleaseAdapter(mech.release), pair, (1.0, 1e-5), samples=10_000,
                              rng=seed)
        except ClaimRefuted:
            caught += 1
    return caught


def false_alarms(cases, seeds: int, rng: np.random.Generator) -> tuple[int, int]:
    """(violations, audits) over `seeds` audits of each correct case at its own budget."""
    alarms = audits = 0
    for case, g in zip(cases, rng.spawn(len(cases)), strict=True):
        reports = run_cases([case] * seeds, rng=g)
        bad = sum(r.verdict == "violation" for r in reports)
        print(f"{case.name:48s} {seeds} audits at {reports[0].samples_per_side} runs/side: "
              f"{bad} false alarms, largest bound {max(r.epsilon_lower_bound for r in reports):.3f}"
              f" vs claim {case.claim.epsilon:.3f}", flush=True)
        alarms, audits = alarms + bad, audits + seeds
    return alarms, audits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="10 Gaussian seeds and 3 no-false-alarm seeds instead of 100 and 20")
    args = parser.parse_args()
    rng = np.random.default_rng(20240601)
    g_lap, g_gauss, g_suite, g_mask, g_anon, g_alarm = rng.spawn(6)
    figures: dict[str, float] = {}

    print("== tightness (10^6 runs per side, 95% confidence)")
    lap, lap_s, lap_ref = tightness(laplace_means_case(GRID, "grid"),
                                    ThresholdTester(Projection(np.eye(3)[0])), 100_000, g_lap)
    gauss, gauss_s, gauss_ref = tightness(gaussian_vector_case(GRID, "grid"),
                                          GaussianDPTester(Projection(CANARY)), 2**18, g_gauss)
    print(format_table([lap, gauss]))
    figures.update({
        "laplace_eps1_lower_bound": lap.epsilon_lower_bound,
        "laplace_tightness_ratio": lap.epsilon_lower_bound / lap.claimed_epsilon,
        "laplace_audit_seconds": lap_s,
        "laplace_audit_over_sampling_ratio": lap_s / lap_ref,
        "gaussian_1_1e-5_lower_bound": gauss.epsilon_lower_bound,
        "gaussian_tightness_ratio": gauss.epsilon_lower_bound / gauss.claimed_epsilon,
        "gaussian_audit_seconds": gauss_s,
        "gaussian_audit_over_sampling_ratio": gauss_s / gauss_ref,
    })

    print("\n== standard suite (each case at its own budget, default battery, 99%)")
    cases = standard_suite()
    reports = [run_case(c, rng=g) for c, g in zip(cases, g_suite.spawn(len(cases)), strict=True)]
    print(format_table(reports, {c.name: expected_verdict(c) for c in cases}))
    for c, r in zip(cases, reports, strict=True):
        print(f"  {c.name[:48]:48s} found by {r.tester}: {r.details.get('evidence', '')[:90]}")
    failures = suite_failures(cases, reports)
    for line in failures:
        print("FAIL", line)
    figures["suite_audits"] = len(reports)
    figures["suite_failures"] = len(failures)
    figures["controls_caught"] = sum(r.verdict == "violation" for c, r in
                                     zip(cases, reports, strict=True) if c.control)
    figures["controls_total"] = sum(c.control for c in cases)

    gauss_seeds, alarm_seeds = (10, 3) if args.quick else (100, 20)
    print(f"\n== under-declared Gaussian (true eps 1.61, claim 1), assert_consistent defaults, "
          f"10k runs, {gauss_seeds} seeds")
    caught = underdeclared_gaussian(gauss_seeds)
    print(f"refuted in {caught} of {gauss_seeds} seeds (target >= 95 of 100)")
    figures[f"underdeclared_gaussian_caught_of_{gauss_seeds}"] = caught

    print(f"\n== negative controls: {alarm_seeds} seeds per correct case, default battery, 99%")
    alarms, audits = false_alarms([c for c in cases if not c.control], alarm_seeds, g_alarm)
    print(f"{alarms} false alarms in {audits} audits (stated failure probability 1% per audit, "
          f"i.e. {0.01 * audits:.1f} expected at most)")
    figures["negative_control_audits"] = audits
    figures["negative_control_false_alarms"] = alarms

    print("\n== masks: known-plaintext recovery of a d_j = 3 block in d = 10")
    for method in ("lstsq", "procrustes"):
        for r in recovery_curve(3, 10, [1, 2, 3, 5, 10], g_mask, method=method):
            print(f"{method:10s} pairs={r.observed:3d}  block error {r.block_error:.3g}  "
                  f"context error {r.context_error:.3g}")
            if r.observed == 3:
                figures[f"mask_d3_block_error_3_pairs_{method}"] = r.block_error
    print("known-sample PCA from traffic alone (20000 unpaired plaintexts)")
    for r in pca_curve(3, 10, [10, 100, 1000, 10000, 100000], g_mask):
        print(f"rounds={r.observed:6d}  block error {r.block_error:.3g}  "
              f"subspace error {r.subspace_error:.3g}  context error {r.context_error:.3g}")
    figures["mask_pca_block_error_1e5_rounds"] = r.block_error

    print("\n== k-anonymous elicitation: differencing attack (20000 runs per canary value)")
    print("C   rate  laplace  accuracy  exact     advantage  eps lower (95%)")
    grid = [(c, p, e) for e in (None, 1.0) for c in (2, 5, 10, 20) for p in (0.1, 0.5, 0.9)]
    for (c, p, e), g in zip(grid, g_anon.spawn(len(grid)), strict=True):
        r = differencing_attack(c, p, 20000, g, laplace_epsilon=e)
        exact = f"{r.exact_accuracy:.4f}" if r.exact_accuracy is not None else "-"
        print(f"{c:<3d} {p:<5g} {str(e):8s} {r.accuracy:.4f}    {exact:9s} {r.advantage:.4f}     "
              f"{r.epsilon_lower_bound:.3f}")
        if (c, p) == (10, 0.5):
            tag = "plain" if e is None else "laplace1"
            figures[f"anonymity_C10_p05_{tag}_accuracy"] = r.accuracy
            figures[f"anonymity_C10_p05_{tag}_eps_lower"] = r.epsilon_lower_bound

    print()
    for key, value in figures.items():
        print(f"{key}: {value:.6g}")


if __name__ == "__main__":
    main()
