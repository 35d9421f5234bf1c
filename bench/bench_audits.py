"""Audits at full counts: tightness, the suite table, and the attacks' figures.

1. Tightness.  LaplaceMeans at eps = 1 (fast sampler), 10^6 runs per side,
   threshold tester: the lower bound must reach >= 0.97.  A GaussianVector
   that is exactly (1, 1e-5)-DP (analytic calibration), 10^6 runs per side,
   Gaussian-DP tester: >= 0.95.  Each must take < 10 s.  Ratios: lower bound
   / claim, and audit time / the time to draw the same outputs alone (the
   reference measured in the same run).
2. The standard suite (our mechanisms with both samplers, OpenDP and
   diffprivlib, the positive controls) at 10^5 runs per side, 5000 where every
   draw goes through OpenDP or the tree is rebuilt per release; 99% confidence.
3. Attacks: mask recovery error against known pairs and rounds observed
   (d_j = 3 inside d = 10), and the differencing attack on C-anonymous
   elicitation against C, the others' reward rate and the Laplace option.

Run: /tmp/venv/bin/python bench/bench_audits.py   (about two minutes on an idle machine)
"""
from __future__ import annotations

import time

import numpy as np

from privbandit.audits import run_audit
from privbandit.audits.attacks import differencing_attack, pca_curve, recovery_curve
from privbandit.audits.cases import gaussian_vector_case, laplace_means_case
from privbandit.audits.report import format_table
from privbandit.audits.suite import expected_verdict, run_cases, standard_suite, suite_failures
from privbandit.mechanisms.samplers import FAST

TIGHT_SAMPLES = 10**6
SUITE_FULL, SUITE_SLOW = 10**5, 5000


def tightness(case, batch_size: int, rng: np.random.Generator):
    """(report, seconds, seconds to draw the outputs alone)."""
    start = time.perf_counter()
    report = run_audit(case.mechanism, case.pair, case.tester, case.claim,
                       samples=TIGHT_SAMPLES, rng=rng, confidence=0.95, name=case.name,
                       batch_size=batch_size)
    seconds = time.perf_counter() - start
    draw = np.random.default_rng(0)
    start = time.perf_counter()
    for dataset in (case.pair.dataset, case.pair.neighbour):
        for lo in range(0, TIGHT_SAMPLES, batch_size):
            case.mechanism(dataset, draw, min(batch_size, TIGHT_SAMPLES - lo))
    return report, seconds, time.perf_counter() - start


def main() -> None:
    rng = np.random.default_rng(20240601)
    g_lap, g_gauss, g_suite, g_mask, g_anon = rng.spawn(5)
    figures: dict[str, float] = {}

    print("== tightness (10^6 runs per side, 95% confidence)")
    lap, lap_s, lap_ref = tightness(laplace_means_case(FAST, "numpy"), 100_000, g_lap)
    gauss, gauss_s, gauss_ref = tightness(gaussian_vector_case(FAST, "numpy"), 2**18, g_gauss)
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

    print(f"\n== standard suite ({SUITE_FULL} runs per side; {SUITE_SLOW} for slow draws)")
    cases = standard_suite()
    # every draw through OpenDP, or a tree rebuilt per release: the smaller count
    slow = [("opendp" in c.name or "redrawing" in c.name) for c in cases]
    spawned = g_suite.spawn(len(cases))
    reports = [run_cases([c], samples=SUITE_SLOW if s else SUITE_FULL, rng=g, confidence=0.99)[0]
               for c, s, g in zip(cases, slow, spawned, strict=True)]
    print(format_table(reports, {c.name: expected_verdict(c) for c in cases}))
    failures = suite_failures(cases, reports)
    for line in failures:
        print("FAIL", line)
    figures["suite_audits"] = len(reports)
    figures["suite_failures"] = len(failures)

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
