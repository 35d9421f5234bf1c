"""Study runner scaling: the same study on 1 and 2 workers, in one run.

Runs one study (one algorithm x 16 seeds) through the runner's own process
pool (`privbandit.studies.runner.local_pool`: workers with one BLAS thread
each) with 1 and with 2 workers, and through a Dask LocalCluster of 1 and of 2
worker processes (one thread each); each timing is the whole study
(scheduling included) after the workers are up.  The results of every
executor are checked identical.  Targets on a 2-core machine:
`pool_scaling` (wall time on 1 worker over 2 workers) >= 1.7 and
`dask_efficiency` (throughput on 2 Dask workers over twice one worker's) >= 0.8.

Usage: python bench/bench_studies.py [--algorithm linucb] [--horizon 4000] [--smoke]
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from privbandit.studies import run_study, study_from_dict
from privbandit.studies.runner import local_pool


def timed(spec, executor) -> tuple[float, list]:
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        outcome = run_study(spec, Path(out), executor=executor, progress=False)
        seconds = time.perf_counter() - start
    strip = [{k: v for k, v in r.items() if k not in ("wall_seconds", "timings")}
             for r in outcome.records]
    return seconds, strip


def dask_times(spec) -> dict[str, tuple[float, list]]:
    """Timings on Dask LocalClusters of 1 and 2 workers, or {} without the dask extra."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("dask: skipped (install the 'dask' extra)")
        return {}
    out = {}
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            client.run(lambda: None)  # workers up before the clock starts
            out[f"dask_{workers}"] = timed(spec, client.get_executor())
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithm", default="linucb")
    parser.add_argument("--horizon", type=int, default=4000)
    parser.add_argument("--seeds", type=int, default=16)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (tests)")
    args = parser.parse_args()
    horizon, seeds = (50, 2) if args.smoke else (args.horizon, args.seeds)
    spec = study_from_dict({
        "name": "scaling", "horizon": horizon, "seeds": seeds,
        "environment": {"setting": "clustered", "users": 20, "clusters": 4, "dim": 20,
                        "items": 200},
        "algorithm": [{"name": args.algorithm}],
    })
    runs: dict[str, tuple[float, list]] = {}
    for workers in (1, 2):
        with local_pool(workers) as pool:
            list(pool.map(int, range(workers)))  # workers up before the clock starts
            runs[f"pool_{workers}"] = timed(spec, pool)
    if args.smoke:
        print("dask: skipped in --smoke (LocalCluster start-up dominates a tiny run)")
    else:
        runs.update(dask_times(spec))
    results = [res for _, res in runs.values()]
    identical = all(r == results[0] for r in results)
    times = {key: seconds for key, (seconds, _) in runs.items()}
    print(f"{seeds} runs of {args.algorithm}, horizon {horizon}")
    print(f"{'executor':<10}{'1 worker s':>12}{'2 workers s':>13}{'speedup':>9}")
    for kind in ("pool", "dask"):
        if f"{kind}_1" in times:
            one, two = times[f"{kind}_1"], times[f"{kind}_2"]
            print(f"{kind:<10}{one:>12.2f}{two:>13.2f}{one / two:>9.2f}")
    print(f"identical_results: {int(identical)}")
    for key, value in times.items():
        print(f"{key}_seconds: {value:.3f}")
    print(f"pool_scaling: {times['pool_1'] / times['pool_2']:.2f}")
    if "dask_1" in times:
        print(f"dask_efficiency: {times['dask_1'] / (2 * times['dask_2']):.2f}")


if __name__ == "__main__":
    main()
