"""Anonymous bandits (seed 004) at N = 100 users, K = 5 arms, C = 5, T = 10^5: one run each.

Runs Algorithm 1 with each decomposition (LP, randomized, greedy) and
Algorithm 2 (explore-then-commit, c = 0.3) on one environment (U = 20 users per
arm), and times them against a reference measured in the same run: the
mechanism alone, i.e. as many `elicit_feedback` calls as the algorithm made, on
a fixed assignment, with nothing else (the floor any implementation pays).
Target: every algorithm under 30 s.

Run: /tmp/venv/bin/python bench/bench_anonymous.py [--rounds 100000] [--seed 0]
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from privbandit.anonymous import AnonymousBaSE, AnonymousExploreThenCommit
from privbandit.envs.anonymous import AnonymousBanditEnv, clustered_means
from privbandit.mechanisms.anonymous import elicit_feedback
from privbandit.runtime import play_algorithm

N, K, C, U = 100, 5, 5, 20
BUDGET = 30.0


def elicitation_floor(env: AnonymousBanditEnv, calls: int, seed: int) -> float:
    """Seconds for `calls` elicitations of one fixed assignment (the mechanism alone)."""
    rng = np.random.default_rng(seed)
    assignment = np.arange(N) % K
    env.play(assignment[None, :], np.array([calls * (2 * C + 2)]))  # released once each
    start = time.perf_counter()
    for _ in range(calls):
        elicit_feedback(env.aggregator, assignment, rng)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10**5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.rounds = 2000
    means = clustered_means(N, K, U, np.random.default_rng(args.seed))
    env = AnonymousBanditEnv(means, C)
    algorithms = {
        f"alg1_{d}": AnonymousBaSE(N, K, C, U, args.rounds, decomposition=d)
        for d in ("lp", "randomized", "greedy")
    }
    algorithms["alg2_etc"] = AnonymousExploreThenCommit(N, K, C, args.rounds,
                                                        explore_constant=0.3)
    figures: dict[str, object] = {}
    print(f"N={N} K={K} C={C} U={U} T={args.rounds} seed={args.seed}")
    for name, alg in algorithms.items():
        started = time.perf_counter()
        result = play_algorithm(alg, env, np.random.default_rng(args.seed))
        seconds = time.perf_counter() - started
        calls = result.comm["rounds"] // (2 * C + 2)
        floor = elicitation_floor(env, calls, args.seed)
        print(f"{name:18s} {seconds:6.2f} s  elicitations {calls:6d}  mechanism alone "
              f"{floor:5.2f} s  regret {result.total_regret:10.0f}  "
              f"final cluster error {result.cluster_error[-1]:.2f}")
        if "decompose" in result.timings:
            figures[f"{name}_decompose_seconds"] = round(result.timings["decompose"], 3)
        figures[f"{name}_seconds"] = round(seconds, 3)
        figures[f"{name}_over_mechanism"] = round(seconds / floor, 2)
        figures[f"{name}_regret"] = round(result.total_regret)
    slowest = max(v for k, v in figures.items() if k.endswith("_seconds")
                  and not k.endswith("decompose_seconds"))
    figures["slowest_seconds"] = slowest
    figures["budget_seconds"] = BUDGET
    figures["within_budget"] = "yes" if slowest < BUDGET else "no"
    for key, value in figures.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
