"""Samplers: fast (NumPy floats), default (float-safe grid), exact (OpenDP), and tree `add`.

Measures, in one run: draws per second of a 21 x 21 symmetric Gaussian matrix
and of a 441-vector with each sampler, the latency of one
`TreePrivatizer.add` of a (d+1) x (d+1) symmetric increment at d = 20, and,
for d = 10 (11 x 11 symmetric releases: `SymmetricGaussianMatrix.release` and
a tree step), the default sampler's throughput over the fast one's
(`default_over_float_throughput`, target >= 0.33, from the matrix release).
Timings are the best batch of several (the machine is shared; the least
disturbed batch is the closest to the code's own cost), and a plain NumPy
draw of a 21 x 21 standard normal matrix is timed in the same run as the
reference, so ratios to it do not depend on the load.  Prints a table with
the ratios, then one `key: value` line per figure.

    /tmp/venv/bin/python bench/bench_samplers.py [--quick]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from privbandit.mechanisms.gaussian import SymmetricGaussianMatrix
from privbandit.mechanisms.samplers import FAST, GRID, OpenDPSampler
from privbandit.mechanisms.tree import TreePrivatizer

DIM = 21  # d + 1 with d = 20
TARGET_FAST_US = 50.0
TARGET_EXACT_MS = 5.0
TARGET_DEFAULT_OVER_FLOAT = 0.33
SMALL = 11  # d + 1 with d = 10


def best_seconds(fn, calls: int, batches: int = 7) -> float:
    """The best over `batches` of the mean time of one call."""
    fn()  # warm up (OpenDP builds and caches its measurement)
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return min(times)


def tree_add_seconds(sampler, calls: int, dim: int = DIM) -> float:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(dim)
    increment = np.outer(x, x) / float(x @ x)
    tree = TreePrivatizer((dim, dim), 10**6, epsilon=1.0, delta=1e-5, symmetric=True,
                          sampler=sampler)
    return best_seconds(lambda: tree.add(increment, rng), calls)


def interleaved(make, calls: int, batches: int = 15) -> tuple[float, float, float]:
    """(best fast s, best default s, median of fast/default per batch pair): the two
    samplers alternate batch by batch, so a change of load hits both alike."""
    fns = {s: make(s) for s in (FAST, GRID)}
    for fn in fns.values():
        fn()
    times: dict = {FAST: [], GRID: []}
    for _ in range(batches):
        for s, fn in fns.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            times[s].append((time.perf_counter() - start) / calls)
    ratios = np.array(times[FAST]) / np.array(times[GRID])
    return min(times[FAST]), min(times[GRID]), float(np.median(ratios))


def matrix_release(sampler, dim: int = SMALL):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(dim)
    mech = SymmetricGaussianMatrix.from_privacy(1.0, 1e-5, 1.0, sampler=sampler)
    value = np.outer(x, x) / float(x @ x)
    return lambda: mech.release(value, rng)


def tree_step(sampler, dim: int = SMALL):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(dim)
    increment = np.outer(x, x) / float(x @ x)
    tree = TreePrivatizer((dim, dim), 10**7, epsilon=1.0, delta=1e-5, symmetric=True,
                          sampler=sampler)
    return lambda: tree.add(increment, rng)


def default_over_float(calls: int) -> dict[str, float]:
    """d = 10: throughput of the default (grid) sampler over the fast one, same run."""
    m_fast, m_grid, m_ratio = interleaved(matrix_release, calls)
    t_fast, t_grid, t_ratio = interleaved(tree_step, calls)
    print(f"d = 10, 11 x 11 symmetric: matrix release fast {m_fast * 1e6:.2f} us, default "
          f"{m_grid * 1e6:.2f} us; tree step fast {t_fast * 1e6:.2f} us, default "
          f"{t_grid * 1e6:.2f} us (best batches; ratios: median over interleaved batches)")
    return {
        "matrix_release_fast_us": m_fast * 1e6,
        "matrix_release_default_us": m_grid * 1e6,
        "tree_step_d10_fast_us": t_fast * 1e6,
        "tree_step_d10_default_us": t_grid * 1e6,
        "tree_step_default_over_float_throughput": t_ratio,
        "default_over_float_throughput": m_ratio,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    fast_calls, exact_calls = (300, 4) if args.quick else (3000, 20)
    if args.smoke:
        fast_calls, exact_calls = 10, 1
    exact = OpenDPSampler(k=-40)
    rng = np.random.default_rng(1)

    cases = {
        "sym21": (lambda s: lambda: s.symmetric_gaussian(1.0, DIM, rng), DIM * DIM),
        "vec441": (lambda s: lambda: s.gaussian(1.0, DIM * DIM, rng), DIM * DIM),
    }
    t_ref = best_seconds(lambda: rng.standard_normal((DIM, DIM)), fast_calls)
    figures: dict[str, float] = {"numpy_reference_draw_us": t_ref * 1e6}
    rows = []
    for name, (make, entries) in cases.items():
        t_fast = best_seconds(make(FAST), fast_calls)
        t_exact = best_seconds(make(exact), exact_calls)
        figures[f"fast_{name}_draws_per_s"] = 1 / t_fast
        figures[f"exact_{name}_draws_per_s"] = 1 / t_exact
        figures[f"{name}_fast_over_exact"] = t_exact / t_fast
        rows.append((f"{name} draw ({entries} entries)", t_fast * 1e6, t_exact * 1e6,
                     entries / t_fast, entries / t_exact))
    t_tree_fast = tree_add_seconds(FAST, fast_calls)
    t_tree_exact = tree_add_seconds(exact, exact_calls)
    rows.append(("tree add, d = 20", t_tree_fast * 1e6, t_tree_exact * 1e6, 0.0, 0.0))
    figures["tree_add_fast_us"] = t_tree_fast * 1e6
    figures["tree_add_exact_ms"] = t_tree_exact * 1e3
    figures["tree_add_exact_over_fast"] = t_tree_exact / t_tree_fast
    figures["tree_add_fast_over_numpy_reference"] = t_tree_fast / t_ref

    print(f"{'operation':<28}{'fast us':>11}{'exact us':>12}{'ratio':>9}"
          f"{'fast entries/s':>17}{'exact entries/s':>17}")
    for label, fast_us, exact_us, fast_rate, exact_rate in rows:
        rates = f"{fast_rate:>17.3g}{exact_rate:>17.3g}" if fast_rate else f"{'-':>17}{'-':>17}"
        print(f"{label:<28}{fast_us:>11.2f}{exact_us:>12.1f}{exact_us / fast_us:>9.0f}{rates}")
    print(f"reference: numpy standard_normal((21, 21)) {t_ref * 1e6:.2f} us")
    print(f"targets: tree add fast <= {TARGET_FAST_US:g} us, exact <= {TARGET_EXACT_MS:g} ms")
    figures["tree_add_fast_meets_target"] = float(figures["tree_add_fast_us"] <= TARGET_FAST_US)
    figures["tree_add_exact_meets_target"] = float(
        figures["tree_add_exact_ms"] <= TARGET_EXACT_MS)
    figures["grid_sym21_draws_per_s"] = 1 / best_seconds(
        lambda: GRID.symmetric_gaussian(1.0, DIM, rng), fast_calls)
    figures.update(default_over_float(fast_calls // 3))
    print(f"target: default_over_float_throughput >= {TARGET_DEFAULT_OVER_FLOAT}")
    for key, value in figures.items():
        print(f"{key}: {value:.4g}")


if __name__ == "__main__":
    main()
