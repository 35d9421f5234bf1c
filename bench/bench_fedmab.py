"""Federated MAB speed: the epoch-level engine against the round-by-round reference.

Both play the same arms on the same seed (tests/privbandit/fedmab/test_reference.py
checks it); the reference walks the horizon one round at a time, the engine
simulates each epoch at once (binomial sums, one batched Laplace release,
regret rebuilt from epoch counts).  The ratio is measured on one instance in
the same run at the paper's scale (M = 50 agents, K = 100 arms, T = 10^6,
CDP-MAB; the reference runs once, it takes seconds).  DDP-MAB (ring of 50)
and HDP-MAB (10 rings of 10, M = 100) are timed too; engine times are the
median of `--repeats` runs.

Usage: python bench/bench_fedmab.py [--horizon 1000000] [--repeats 5]
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from pathlib import Path

import numpy as np

from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.fedmab import CDPMAB, DDPMAB, HDPMAB, disjoint_union, ring
from privbandit.runtime import play_algorithm

_REF_PATH = Path(__file__).resolve().parents[1] / "tests/privbandit/fedmab/round_reference.py"


def load_reference():
    spec = importlib.util.spec_from_file_location("fedmab_round_reference", _REF_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_seconds(fn, repeats: int) -> float:
    times = []
    for seed in range(repeats):
        start = time.perf_counter()
        fn(seed)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=10**6)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.horizon, args.repeats = 10**4, 1
    ref = load_reference()

    big = MultiAgentBernoulliMAB.uniform(50, 100, np.random.default_rng(1))
    big100 = MultiAgentBernoulliMAB.uniform(100, 100, np.random.default_rng(2))
    cdp, ddp = CDPMAB(1.0, args.horizon), DDPMAB(1.0, args.horizon, ring(50))
    hdp = HDPMAB(1.0, args.horizon, disjoint_union([ring(10)] * 10))
    play_algorithm(cdp, big, np.random.default_rng(99))  # warm-up (imports, caches)
    def timed(alg, world):
        return median_seconds(lambda s: play_algorithm(alg, world, np.random.default_rng(s)),
                              args.repeats)

    t_cdp, t_ddp, t_hdp = timed(cdp, big), timed(ddp, big), timed(hdp, big100)
    # the reference on the same CDP instance (one run: it takes seconds)
    t_ref = median_seconds(
        lambda s: ref.reference_run(big, "cdp", epsilon=1.0, horizon=args.horizon,
                                    rng=np.random.default_rng(s), sampler=cdp.sampler), 1)
    print(f"paper scale: K=100 Bernoulli arms, T={args.horizon}, eps=1, median of "
          f"{args.repeats} runs (seconds per run, including regret curves and ledgers)")
    print(f"  round-level reference (CDP-MAB, M=50): {t_ref:.2f} s for one run")
    print(f"reference_over_engine_ratio: {t_ref / t_cdp:.0f}")
    print(f"cdp_m50_k100_seconds: {t_cdp:.3f}")
    print(f"ddp_ring50_k100_seconds: {t_ddp:.3f}")
    print(f"hdp_m100_10rings_k100_seconds: {t_hdp:.3f}")


if __name__ == "__main__":
    main()
