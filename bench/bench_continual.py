"""Continual release: noise and speed of the tree, Honaker's estimate and the BLT factorization.

At horizons T = 10**3 and 10**5, with the same (epsilon, delta) = (1, 1e-5),
record-level sensitivity 1 and tight calibration, prints for each mechanism
the worst-prefix and root-mean-square prefix-noise standard deviation (exact,
from the mechanisms' own variance methods), the stream's memory (floats kept
between steps) and increments per second for d = 10, i.e. (d+1) x (d+1)
symmetric increments, with the NumPy sampler (`samplers.FAST`; the exact
OpenDP sampler costs the same for every mechanism per released entry and
would dominate).  The exact square-root factorization (unbounded memory) is
computed alongside as the reference for what the BLT's bounded memory costs.
Timings are the best of several batches run in this process (shared
machine), and the ratios compare mechanisms timed in the same run.  The
variance queries: one `prefix_variances()` and 10,000 `prefix_variance(t)`
calls over T = 10,000, per mechanism (`*_variance_queries_s`).  Ends
with one `key: value` line per figure.

    .venv/bin/python bench/bench_continual.py [--quick]
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from privbandit.accounting import calibrate_gaussian_sigma
from privbandit.mechanisms import continual_release
from privbandit.mechanisms.blt import sqrt_coefficients
from privbandit.mechanisms.factorization import _prefix_units
from privbandit.mechanisms.samplers import FAST

EPSILON, DELTA = 1.0, 1e-5
HORIZONS = (10**3, 10**5)
KINDS = ("tree", "honaker", "mf")
DIM = 11  # d + 1 with d = 10


def variance_query_seconds(horizon: int, calls: int, batches: int) -> dict[str, float]:
    """Best of `batches` timings, per mechanism, of `calls` prefix_variance(t) queries over
    the horizon plus one prefix_variances(), on fresh streams."""
    best = dict.fromkeys(KINDS, math.inf)
    steps = np.linspace(1, horizon, calls).astype(int)
    for _ in range(batches):
        for kind in KINDS:
            _prefix_units.cache_clear()  # cold: the mf table is computed inside the timing
            mech = continual_release(kind, (), horizon, sigma=1.0)
            start = time.perf_counter()
            mech.prefix_variances()
            for t in steps:
                mech.prefix_variance(int(t))
            best[kind] = min(best[kind], time.perf_counter() - start)
    return best


def sqrt_reference(horizon: int) -> tuple[float, float]:
    """(worst, rms) prefix std of the exact square root, calibrated the same way."""
    c = sqrt_coefficients(horizon)
    sigma = calibrate_gaussian_sigma(EPSILON, DELTA, math.sqrt(float(c @ c)))
    rows = sigma**2 * np.cumsum(c * c)  # B = C: row t has the first t coefficients
    return math.sqrt(rows[-1]), math.sqrt(rows.mean())


def increments_per_second(horizon: int, calls: int, batches: int) -> dict[str, float]:
    """Best of `batches` runs of `calls` adds of a d = 10 Gram increment, per mechanism.

    The mechanisms take turns within each round (a fresh stream each time), so
    a burst of load on the shared machine hits them alike.
    """
    rng = np.random.default_rng(0)
    x = rng.standard_normal(DIM)
    increment = np.outer(x, x) / float(x @ x)
    best = dict.fromkeys(KINDS, math.inf)
    n = min(calls, horizon)
    for _ in range(batches):
        for kind in KINDS:
            mech = continual_release(kind, (DIM, DIM), horizon, epsilon=EPSILON, delta=DELTA,
                                     symmetric=True, sampler=FAST)
            start = time.perf_counter()
            for _ in range(n):
                mech.add(increment, rng)
            best[kind] = min(best[kind], (time.perf_counter() - start) / n)
    return {kind: 1.0 / seconds for kind, seconds in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer timed increments")
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    calls, batches = (500, 3) if args.quick else (3000, 7)
    if args.smoke:
        calls, batches = 20, 1
    figures: dict[str, float] = {}
    print("sampler for timings: FAST (numpy, not float-safe); noise figures do not depend on it")
    print(f"{'T':>7} {'mechanism':<10} {'sigma':>9} {'worst std':>10} {'rms std':>9} "
          f"{'x tree':>7} {'floats kept (d=10)':>19} {'increments/s (d=10)':>20}")
    for horizon in HORIZONS:
        worst = {}
        speeds = increments_per_second(horizon, calls, batches)
        for kind in KINDS:
            mech = continual_release(kind, (), horizon, epsilon=EPSILON, delta=DELTA,
                                     sampler=FAST)
            v = mech.prefix_variances()
            assert math.isclose(v.max(), mech.max_prefix_variance(), rel_tol=1e-9)
            worst[kind] = math.sqrt(v.max())
            memory = continual_release(kind, (DIM, DIM), horizon, sigma=1.0, symmetric=True,
                                       sampler=FAST).state_size
            speed = speeds[kind]
            print(f"{horizon:>7} {kind:<10} {mech.sigma:>9.4g} {worst[kind]:>10.4g} "
                  f"{math.sqrt(v.mean()):>9.4g} {worst[kind] / worst['tree']:>7.3f} "
                  f"{memory:>19} {speed:>20.0f}")
            tag = f"{kind}_T{horizon:.0e}".replace("+0", "")
            figures[f"{tag}_max_std"] = worst[kind]
            figures[f"{tag}_rms_std"] = math.sqrt(v.mean())
            figures[f"{tag}_floats_kept_d10"] = memory
            figures[f"{tag}_increments_per_s"] = speed
        sqrt_worst, sqrt_rms = sqrt_reference(horizon)
        print(f"{horizon:>7} {'sqrt':<10} {'':>9} {sqrt_worst:>10.4g} {sqrt_rms:>9.4g} "
              f"{sqrt_worst / worst['tree']:>7.3f} {'T x entries':>19} {'(reference)':>20}")
        figures[f"mf_over_sqrt_max_std_T{horizon:.0e}".replace("+0", "")] = (
            worst["mf"] / sqrt_worst)
        figures[f"sqrt_over_tree_max_std_T{horizon:.0e}".replace("+0", "")] = (
            sqrt_worst / worst["tree"])
    last = f"T{HORIZONS[-1]:.0e}".replace("+0", "")
    tree_speed = figures[f"tree_{last}_increments_per_s"]
    figures["tree_increments_per_s"] = tree_speed
    figures["mf_over_tree_increments_per_s"] = figures[f"mf_{last}_increments_per_s"] / tree_speed
    tree_std = figures[f"tree_{last}_max_std"]
    figures["mf_over_tree_max_std"] = figures[f"mf_{last}_max_std"] / tree_std
    figures["honaker_over_tree_max_std"] = figures[f"honaker_{last}_max_std"] / tree_std
    figures["mf_increments_per_s"] = figures[f"mf_{last}_increments_per_s"]
    queries = variance_query_seconds(10_000, 10_000, 1 if args.smoke else 5)
    for kind in KINDS:
        figures[f"{kind}_variance_queries_s"] = queries[kind]
    figures["mf_over_tree_variance_queries"] = queries["mf"] / queries["tree"]
    for key, value in figures.items():
        print(f"{key}: {value:.6g}")


if __name__ == "__main__":
    main()
