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
4. One run (canaries, `privbandit.audits.one_run`): a Gaussian mechanism on
   sums of unit vectors, (2, 1e-5)-DP, m = 10,000 orthogonal canaries, one
   release, 100 guesses each way, at 95%: the f-DP bound for the Gaussian
   trade-off curve (method "fdp", the largest of the SNJ, GDP and f-DP
   bounds; each also alone, same run, same count), its ratio to the
   method's ideal for that m and k (every guess right) and to the bound
   the method gives in expectation for a mechanism exactly at its claim
   (an optimal scorer, computed), the seconds, and whether the same
   mechanism with half its noise is caught in one run.  Then one run
   against many runs on the same mechanisms (that Gaussian, and Laplace
   noise of scale 1 on counts, eps = 1): the bound, the pipeline runs and
   the seconds each needs (docs/one_run_audits.md); and the textbook NumPy
   Laplace on 0 vs 1: a floating-point violation whose distributional bound
   stays below the claim.
5. Attacks: mask recovery error against known pairs and rounds observed
   (d_j = 3 inside d = 10), and the differencing attack on C-anonymous
   elicitation against C, the others' reward rate and the Laplace option.

Run: .venv/bin/python bench/bench_audits.py [--quick] [--smoke]
(about ten minutes on an idle machine; --smoke: every part at a tiny size, seconds)
"""
from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from scipy import optimize, stats

from privbandit.audits import (
    Claim,
    GaussianDPTester,
    NeighbouringPair,
    Projection,
    ReleaseAdapter,
    ThresholdTester,
    run_audit,
)
from privbandit.audits.assertions import ClaimRefuted, assert_consistent
from privbandit.audits.attacks import differencing_attack, pca_curve, recovery_curve
from privbandit.audits.broken import NoiseScaleSampler
from privbandit.audits.cases import CANARY, gaussian_vector_case, laplace_means_case
from privbandit.audits.one_run import format_one_run_table, one_run_audit
from privbandit.audits.one_run_bounds import gdp_epsilon
from privbandit.audits.one_run_fdp import fdp_epsilon
from privbandit.audits.one_run_protocols import sum_canaries
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


@dataclass(frozen=True)
class Sizes:
    """How much each part runs: full, --quick, or --smoke (a tiny run for the tests)."""

    tight_samples: int = 10**6
    suite_cases: int | None = None  # all
    gauss_seeds: int = 100
    gauss_samples: int = 10_000
    alarm_seeds: int = 20
    alarm_cases: int | None = None  # all correct ones
    mask_rounds: tuple = (10, 100, 1000, 10000, 100000)
    attack_runs: int = 20000
    one_run_canaries: int = 10_000
    many_runs: tuple = (10_000, 100_000)
    one_run_seeds: int = 10
    textbook_samples: int = 100_000
    attack_grid: tuple = tuple((c, p, e) for e in (None, 1.0) for c in (2, 5, 10, 20)
                               for p in (0.1, 0.5, 0.9))


QUICK = Sizes(gauss_seeds=10, alarm_seeds=3)
SMOKE = Sizes(tight_samples=4000, suite_cases=3, gauss_seeds=2, gauss_samples=2000,
              alarm_seeds=1, alarm_cases=1, mask_rounds=(10, 100), attack_runs=500,
              one_run_canaries=1000, many_runs=(2000,), textbook_samples=2000,
              one_run_seeds=2,
              attack_grid=((10, 0.5, None), (10, 0.5, 1.0)))


def tightness(case, tester, batch_size: int, rng: np.random.Generator, samples: int):
    """(report, seconds, seconds to draw the outputs alone)."""
    batch_size = min(batch_size, samples)
    start = time.perf_counter()
    report = run_audit(case.mechanism, case.pair, tester, case.claim,
                       samples=samples, rng=rng, confidence=0.95, name=case.name,
                       batch_size=batch_size)
    seconds = time.perf_counter() - start
    draw = np.random.default_rng(0)
    start = time.perf_counter()
    for dataset in (case.pair.dataset, case.pair.neighbour):
        for lo in range(0, samples, batch_size):
            case.mechanism(dataset, draw, min(batch_size, samples - lo))
    return report, seconds, time.perf_counter() - start


def underdeclared_gaussian(seeds: int, samples: int) -> int:
    """How many of `seeds` audits (assert_consistent defaults) refute eps 1.61 vs 1."""
    mech = GaussianVector.from_privacy(1.0, 1e-5, 1.0)
    pair = NeighbouringPair(0.0, 2.0, "scalars at distance 2 (sensitivity 2 declared as 1)")
    caught = 0
    for seed in range(seeds):
        try:
            assert_consistent(ReleaseAdapter(mech.release), pair, (1.0, 1e-5), samples=samples,
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


def expected_at_claim(mu: float, m: int, k: int, delta: float, confidence: float) -> float:
    """The best bound (f-DP or GDP) at the expected count of an optimal scorer on a
    mechanism at its claim: scores N(mu, 1) (in) or N(0, 1) (out), half each; k guessed
    each way."""
    mix_sf = lambda t: 0.5 * (stats.norm.sf(t) + stats.norm.sf(t - mu))
    top = optimize.brentq(lambda t: m * mix_sf(t) - k, -40, 40)
    bottom = optimize.brentq(lambda t: m * (1 - mix_sf(t)) - k, -40, 40)
    right = int(round(0.5 * m * (stats.norm.sf(top - mu) + stats.norm.cdf(bottom))))
    return max(gdp_epsilon(m, 2 * k, right, delta, confidence),
               fdp_epsilon(m, 2 * k, right, delta, confidence))


def one_run(m: int, rng: np.random.Generator) -> dict[str, float]:
    """The one-run figures (see the module docstring, part 4)."""
    correct = GaussianVector.from_privacy(2.0, 1e-5, 1.0)  # float-safe default sampler
    half = GaussianVector.from_privacy(2.0, 1e-5, 1.0, sampler=NoiseScaleSampler(GRID, 0.5))
    claim = Claim.from_event(correct.event, 1e-5)
    k = max(1, m // 100)
    g_ok, g_half = rng.spawn(2)
    start = time.perf_counter()
    ok = one_run_audit(sum_canaries(correct.release, m, m, name="GaussianVector sum (2,1e-5)"),
                       claim, guesses=(k, k), rng=g_ok, confidence=0.95, method="fdp")
    seconds = time.perf_counter() - start
    bad = one_run_audit(sum_canaries(half.release, m, m, name="same, half the noise"), claim,
                        guesses=(k, k), rng=g_half, confidence=0.95, method="fdp")
    print(format_one_run_table([ok, bad]))
    bounds, ideals = ok.details["bounds"], ok.details["ideals"]
    for u in bounds:
        print(f"  {u:4s} alone: eps >= {bounds[u]:.4g}, ideal {ideals[u]:.4g}, "
              f"ratio {bounds[u] / ideals[u]:.3f}")
    print(f"  reported: {ok.epsilon_lower_bound:.4g} from {ok.details['bound_from']}")
    reference = expected_at_claim(correct.event.mu, m, k, 1e-5, 0.95)
    print(f"a mechanism exactly at its claim gives {reference:.4g} in expectation with this m "
          f"and k (optimal scorer); every guess right would give {ok.ideal_epsilon:.4g}")
    return {
        "one_run_epsilon_lower_bound": ok.epsilon_lower_bound,
        "one_run_ideal": ok.ideal_epsilon,
        "one_run_over_ideal": ok.epsilon_lower_bound / ok.ideal_epsilon,
        "one_run_fdp_over_ideal": bounds["fdp"] / ideals["fdp"],
        "one_run_gdp_over_ideal": bounds["gdp"] / ideals["gdp"],
        "one_run_snj_over_ideal": bounds["snj"] / ideals["snj"],
        "one_run_fdp_over_gdp": bounds["fdp"] / max(bounds["gdp"], 1e-12),
        "one_run_over_expected_at_claim": ok.epsilon_lower_bound / reference,
        "one_run_over_claim": ok.epsilon_lower_bound / claim.epsilon,
        "one_run_seconds": seconds,
        "one_run_half_noise_bound": bad.epsilon_lower_bound,
        "one_run_half_noise_caught": int(bad.violation),
    }


def laplace_counts(total: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Counts released with float-safe Laplace noise of scale 1: eps = 1 per unit count."""
    return GRID.add_laplace(total, 1.0, rng)


def one_vs_many(m: int, many: tuple, seeds: int,
                rng: np.random.Generator) -> dict[str, float]:
    """Bound, pipeline runs and seconds: one run with m canaries (over `seeds` seeds: one
    run's bound is a random variable) vs many runs per side."""
    gauss = GaussianVector.from_privacy(2.0, 1e-5, 1.0)
    rows = [("gaussian", gauss.release, Claim.from_event(gauss.event, 1e-5), "fdp",
             GaussianDPTester(Projection(np.ones(1)))),
            ("laplace", laplace_counts, Claim(1.0, 0.0, "scale 1 on counts"), "snj",
             ThresholdTester(Projection(np.ones(1))))]
    k = max(1, m // 100)
    figures = {}
    print(f"{'mechanism':11s} {'audit':38s} {'runs':10s} seconds  eps lower  / claim")
    for (label, release, claim, method, tester), g in zip(rows, rng.spawn(len(rows)),
                                                          strict=True):
        g_one, g_many = g.spawn(2)
        start = time.perf_counter()
        reports = [one_run_audit(sum_canaries(release, m, m), claim, guesses=(k, k),
                                 method=method, rng=s, confidence=0.95)
                   for s in g_one.spawn(seeds)]
        bounds = [r.epsilon_lower_bound for r in reports]
        for u in reports[0].details["bounds"]:  # each method alone, same counts
            alone = np.mean([r.details["bounds"][u] for r in reports])
            figures[f"one_vs_many_{label}_{u}_mean_over_ideal"] = (
                alone / reports[0].details["ideals"][u])
            figures[f"one_vs_many_{label}_{u}_mean_over_claim"] = alone / claim.epsilon
        spread = f"{np.mean(bounds):.4g} ({min(bounds):.3g}-{max(bounds):.3g})"
        print(f"{label:11s} {f'one run, {m:,} canaries, {seeds} seeds':38s} {1:<10,d} "
              f"{(time.perf_counter() - start) / seeds:7.2f}  {spread}  "
              f"{np.mean(bounds) / claim.epsilon:.3f}")
        pair = NeighbouringPair(np.zeros(1), np.ones(1), "one unit vector added")
        for samples, g_s in zip(many, g_many.spawn(len(many)), strict=True):
            start = time.perf_counter()
            bound = run_audit(ReleaseAdapter(release), pair, tester, claim, samples=samples,
                              rng=g_s, confidence=0.95).epsilon_lower_bound
            what = f"{samples:,} runs per side ({tester.name})"
            print(f"{label:11s} {what:38s} {2 * samples:<10,d} "
                  f"{time.perf_counter() - start:7.2f}  {bound:9.4g}  "
                  f"{bound / claim.epsilon:.3f}")
        figures[f"one_vs_many_{label}_one_run_mean_over_claim"] = np.mean(bounds) / claim.epsilon
        figures[f"one_vs_many_{label}_one_run_min_over_claim"] = min(bounds) / claim.epsilon
        figures[f"one_vs_many_{label}_many_over_claim"] = bound / claim.epsilon
    return figures


def textbook_laplace(samples: int, rng: np.random.Generator) -> dict[str, float]:
    """x + rng.laplace(0, 1/eps), eps = 1, on 0 vs 1: which kind of finding refutes it."""
    def textbook(dataset, g, n):
        return dataset + g.laplace(0.0, 1.0, n)

    def float_safe(dataset, g, n):
        return laplace_counts(np.full(n, float(dataset)), g)

    pair = NeighbouringPair(0.0, 1.0, "scalars at distance 1", "0 vs 1")
    reports = [run_audit(f, pair, Claim(1.0), samples=samples, rng=g, name=name) for f, name, g
               in zip((textbook, float_safe), ("textbook numpy laplace", "float-safe laplace"),
                      rng.spawn(2), strict=True)]
    print(format_table(reports))
    bad, good = reports
    return {
        "textbook_laplace_floating_point_only": int(bad.violation_kinds == ("floating-point",)),
        "textbook_laplace_distributional_bound": bad.finding("distributional").epsilon_lower_bound,
        "textbook_laplace_floating_point_bound": bad.finding("floating-point").epsilon_lower_bound,
        "float_safe_laplace_findings_above_claim": len(good.violation_kinds),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="10 Gaussian seeds and 3 no-false-alarm seeds instead of 100 and 20")
    parser.add_argument("--smoke", action="store_true", help="every part at a tiny size")
    args = parser.parse_args()
    size = SMOKE if args.smoke else QUICK if args.quick else Sizes()
    rng = np.random.default_rng(20240601)
    g_lap, g_gauss, g_suite, g_mask, g_anon, g_alarm, g_one = rng.spawn(7)
    figures: dict[str, float] = {}

    print(f"== tightness ({size.tight_samples:,} runs per side, 95% confidence)")
    lap, lap_s, lap_ref = tightness(laplace_means_case(GRID, "grid"),
                                    ThresholdTester(Projection(np.eye(3)[0])), 100_000, g_lap,
                                    size.tight_samples)
    gauss, gauss_s, gauss_ref = tightness(gaussian_vector_case(GRID, "grid"),
                                          GaussianDPTester(Projection(CANARY)), 2**18, g_gauss,
                                          size.tight_samples)
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
    cases = standard_suite()[:size.suite_cases]
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

    gauss_seeds, alarm_seeds = size.gauss_seeds, size.alarm_seeds
    print(f"\n== under-declared Gaussian (true eps 1.61, claim 1), assert_consistent defaults, "
          f"{size.gauss_samples:,} runs, {gauss_seeds} seeds")
    caught = underdeclared_gaussian(gauss_seeds, size.gauss_samples)
    print(f"refuted in {caught} of {gauss_seeds} seeds (target >= 95 of 100)")
    figures[f"underdeclared_gaussian_caught_of_{gauss_seeds}"] = caught

    print(f"\n== negative controls: {alarm_seeds} seeds per correct case, default battery, 99%")
    correct = [c for c in cases if not c.control][:size.alarm_cases]
    alarms, audits = false_alarms(correct, alarm_seeds, g_alarm)
    print(f"{alarms} false alarms in {audits} audits (stated failure probability 1% per audit, "
          f"i.e. {0.01 * audits:.1f} expected at most)")
    figures["negative_control_audits"] = audits
    figures["negative_control_false_alarms"] = alarms

    print(f"\n== one run: {size.one_run_canaries:,} canaries, Gaussian sum (2, 1e-5), f-DP, 95%")
    g_one, g_compare, g_text = g_one.spawn(3)
    figures.update(one_run(size.one_run_canaries, g_one))
    print("\n== one run vs many runs, same mechanisms, 95%")
    figures.update(one_vs_many(size.one_run_canaries, size.many_runs, size.one_run_seeds,
                               g_compare))
    print(f"\n== textbook NumPy Laplace vs the float-safe sampler, 0 vs 1, eps = 1, "
          f"{size.textbook_samples:,} runs per side, default battery, 99%")
    figures.update(textbook_laplace(size.textbook_samples, g_text))

    print("\n== masks: known-plaintext recovery of a d_j = 3 block in d = 10")
    for method in ("lstsq", "procrustes"):
        for r in recovery_curve(3, 10, [1, 2, 3, 5, 10][:5 if size.mask_rounds[-1] > 100 else 3],
                                g_mask, method=method):
            print(f"{method:10s} pairs={r.observed:3d}  block error {r.block_error:.3g}  "
                  f"context error {r.context_error:.3g}")
            if r.observed == 3:
                figures[f"mask_d3_block_error_3_pairs_{method}"] = r.block_error
    print("known-sample PCA from traffic alone (unpaired plaintexts)")
    for r in pca_curve(3, 10, list(size.mask_rounds), g_mask):
        print(f"rounds={r.observed:6d}  block error {r.block_error:.3g}  "
              f"subspace error {r.subspace_error:.3g}  context error {r.context_error:.3g}")
    figures[f"mask_pca_block_error_{r.observed:.0e}_rounds".replace("+0", "")] = r.block_error

    print(f"\n== k-anonymous elicitation: differencing attack ({size.attack_runs} runs per "
          "canary value)")
    print("C   rate  laplace  accuracy  exact     advantage  eps lower (95%)")
    grid = size.attack_grid
    for (c, p, e), g in zip(grid, g_anon.spawn(len(grid)), strict=True):
        r = differencing_attack(c, p, size.attack_runs, g, laplace_epsilon=e)
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
