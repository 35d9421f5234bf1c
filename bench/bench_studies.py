"""Study runner scaling: the same 16-run study on 1 and 2 workers, in one run.

Runs a 16-run study (one algorithm x 16 seeds) through a Dask LocalCluster
with 1 worker process and with 2, and through the local process pool with 1
and 2 workers; each timing is the whole study (scheduling included).  The
results of every executor are checked identical.  The target (issue: studies)
is a speedup of at least 1.6 for 2 workers over 1 on a 2-core machine.

Usage: python bench/bench_studies.py [--algorithm club] [--horizon 4000]
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from privbandit.studies import run_study, study_from_dict


def timed(spec, executor) -> tuple[float, list]:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        outcome = run_study(spec, Path(out), executor=executor, progress=False)
        seconds = time.perf_counter() - start
    strip = [{k: v for k, v in r.items() if k not in ("wall_seconds", "timings")}
             for r in outcome.records]
    return seconds, strip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", default="club")
    parser.add_argument("--horizon", type=int, default=4000)
    args = parser.parse_args()
    spec = study_from_dict({
        "name": "scaling", "horizon": args.horizon, "seeds": 16,
        "environment": {"setting": "seed000", "users": 20, "clusters": 4},
        "algorithm": [{"name": args.algorithm}],
    })
    from distributed import Client, LocalCluster

    times, results = {}, []
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as c, \
                Client(c) as client:
            client.run(lambda: None)  # workers up before the clock starts
            times[f"dask_{workers}"], res = timed(spec, client.get_executor())
            results.append(res)
        with ProcessPoolExecutor(workers) as pool:
            pool.submit(int).result()
            times[f"pool_{workers}"], res = timed(spec, pool)
            results.append(res)
    identical = all(r == results[0] for r in results)
    print(f"16 runs of {args.algorithm}, horizon {args.horizon}")
    print(f"{'executor':<12}{'1 worker s':>12}{'2 workers s':>13}{'speedup':>9}")
    for kind in ("dask", "pool"):
        one, two = times[f"{kind}_1"], times[f"{kind}_2"]
        print(f"{kind:<12}{one:>12.2f}{two:>13.2f}{one / two:>9.2f}")
    print(f"identical_results: {int(identical)}")
    for key, value in times.items():
        print(f"{key}_seconds: {value:.3f}")
    print(f"dask_speedup_2_over_1: {times['dask_1'] / times['dask_2']:.2f}")
    print(f"pool_speedup_2_over_1: {times['pool_1'] / times['pool_2']:.2f}")


if __name__ == "__main__":
    main()
