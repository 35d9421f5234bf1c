"""Seed 004 at small anonymity C: greedy against LP and randomized decompositions.

The setting of `anonymous_regret.py` (N = 100 users, K = 5 arms, U = 20 users
per cluster arm, Bernoulli rewards) at C = 1, 2 and 5, T = 10^5, 5 seeds.
Greedy's approximation ratio is K whatever C, the others' is
max(1, ceil(K (C + 1) / U)); at small C both are small and the elicitation
(2C + 2 rounds) is short, so the decompositions' difference shrinks.

Prints the mean (sd) total pseudo-regret per (C, decomposition), paired wins
of greedy, then `key: value` lines.

Usage: python examples/anonymous_small_c.py [--horizon 100000] [--seeds 5]
       [--thresholds 1 2 5] [--smoke]
"""
from __future__ import annotations

import argparse

import numpy as np

from privbandit.anonymous import AnonymousBaSE
from privbandit.envs.anonymous import AnonymousBanditEnv, clustered_means
from privbandit.runtime import play_algorithm

N, K, U = 100, 5, 20
DECOMPOSITIONS = ("greedy", "lp", "randomized")


def regrets(thresholds: list[int], horizon: int, seeds: int) -> dict[tuple[int, str], np.ndarray]:
    out = {(c, d): np.zeros(seeds) for c in thresholds for d in DECOMPOSITIONS}
    for seed in range(seeds):
        means = clustered_means(N, K, U, np.random.default_rng(seed))
        for c in thresholds:
            for d in DECOMPOSITIONS:
                alg = AnonymousBaSE(N, K, c, U, horizon, decomposition=d)
                result = play_algorithm(alg, AnonymousBanditEnv(means, c),
                                 np.random.default_rng([seed, horizon, c]), seed)
                out[(c, d)][seed] = result.total_regret
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--thresholds", type=int, nargs="+", default=[1, 2, 5])
    parser.add_argument("--smoke", action="store_true", help="a tiny run (checks the script)")
    args = parser.parse_args()
    if args.smoke:
        args.horizon, args.seeds, args.thresholds = 2_000, 2, [1, 2]
    table = regrets(args.thresholds, args.horizon, args.seeds)
    lines = [f"horizon: {args.horizon}", f"seeds: {args.seeds}"]
    print(f"{'C':>3s} {'decomposition':14s} {'total regret':>24s}  greedy wins")
    for c in args.thresholds:
        for d in DECOMPOSITIONS:
            r = table[(c, d)]
            wins = "" if d == "greedy" else f"{int((table[(c, 'greedy')] <= r).sum())}/{r.size}"
            print(f"{c:3d} {d:14s} {r.mean():12.0f} ({r.std(ddof=1):8.0f})  {wins}")
            lines.append(f"c{c}_{d}_regret: {r.mean():.0f}")
        for d in DECOMPOSITIONS[1:]:
            ratio = table[(c, "greedy")].mean() / table[(c, d)].mean()
            lines.append(f"c{c}_greedy_over_{d}: {ratio:.3f}")
    print("\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
