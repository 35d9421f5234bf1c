"""The private variant: Algorithm 1 on Laplace-noised C-anonymous sums, regret against epsilon.

N = 100, K = 5, C = 5, U = 20, T = 10^5, LP decomposition.  With
`laplace_epsilon`, every group sum the aggregator releases carries Laplace
noise of scale 1 / epsilon (Bernoulli rewards in [0, 1]): each round is
epsilon-DP for one user's reward in that round (record level), and a user
grouped in r rounds spends r * epsilon by basic composition, which the run's
ledger (charged before each release) reports.  BaSE's elimination width grows
with the noise (variance proxy + 4 / epsilon^2), so regret rises as epsilon falls.

Usage: python examples/anonymous_private.py [--seeds 3] [--horizon 100000]
"""
from __future__ import annotations

import argparse

import numpy as np

from privbandit.anonymous import AnonymousBaSE
from privbandit.envs.anonymous import AnonymousBanditEnv, clustered_means
from privbandit.runtime import play_algorithm

N, K, C, U = 100, 5, 5, 20
EPSILONS = (None, 5.0, 2.0, 1.0, 0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--horizon", type=int, default=10**5)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.seeds, args.horizon = 2, 2000
    alg = AnonymousBaSE(N, K, C, U, args.horizon)
    print(f"{'epsilon/round':>13s} {'regret mean':>12s} {'sd':>8s} {'rounds released':>16s} "
          f"{'user-level eps (ledger)':>24s}")
    for epsilon in EPSILONS:
        regret, spent, rounds = [], [], []
        for seed in range(args.seeds):
            means = clustered_means(N, K, U, np.random.default_rng(seed))
            env = AnonymousBanditEnv(means, C, laplace_epsilon=epsilon)
            result = play_algorithm(alg, env, np.random.default_rng(seed), seed)
            regret.append(result.total_regret)
            rounds.append(result.comm["rounds"])
            spent.append(result.ledgers[0]["epsilon_spent"] if result.ledgers else float("nan"))
        label = "none" if epsilon is None else f"{epsilon:g}"
        print(f"{label:>13s} {np.mean(regret):12.0f} {np.std(regret, ddof=1):8.0f} "
              f"{np.mean(rounds):16.0f} {np.mean(spent):24.0f}")


if __name__ == "__main__":
    main()
