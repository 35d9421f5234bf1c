"""CLUB speed at n = 100 users: privbandit's CLUB against a straightforward one, one run.

Setting: seed 000's generator with 100 users in 10 clusters, d = 10,
10 fresh items per round, constant radius beta, T rounds, alpha = 1.5.

- reference ("straightforward"): every round pools the served user's
  component from the per-user Gram matrices and inverts it, solves for the
  user's estimate, and recomputes the connected components of the whole
  graph (scipy) after edge deletions;
- privbandit: `CLUB` (component statistics kept with Sherman-Morrison updates,
  rebuilt only when a component splits; components searched again only
  inside the component that lost edges) on `LinearUsersEnv`, via `run`.

Both see the same environment and make the same decisions up to rounding;
the script checks that their cumulative regrets agree.

Usage: python bench/bench_club.py [--rounds 5000] [--users 100] [--repeats 2]
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.sparse.csgraph import connected_components

from privbandit.envs import seed000_environment
from privbandit.kernels import club_confidence
from privbandit.policies import CLUB
from privbandit.runtime import run, seed_streams

BETA = 0.3
ALPHA = 1.5


def straightforward_club(env, rounds: int, seed: int) -> float:
    """CLUB with the pooled inverse and the components recomputed every round."""
    n, d = env.n_users, env.dim
    gram = np.tile(np.eye(d), (n, 1, 1))
    b = np.zeros((n, d))
    counts = np.zeros(n)
    theta = np.zeros((n, d))
    adj = np.ones((n, n), dtype=bool)
    np.fill_diagonal(adj, False)
    _, comp = connected_components(adj, directed=False)
    env.reset(seed_streams(seed)["rounds"])
    total = 0.0
    for t in range(rounds):
        _, user, items = env.observe(t)
        members = np.flatnonzero(comp == comp[user])
        pooled = gram[members].sum(axis=0) - (members.size - 1) * np.eye(d)
        inv = np.linalg.inv(pooled)
        est = inv @ b[members].sum(axis=0)
        scores = items @ est + BETA * np.sqrt(np.sum((items @ inv) * items, axis=1))
        a = int(np.argmax(scores))
        out = env.act(t, a)
        total += out.regret
        x = items[a]
        gram[user] += np.outer(x, x)
        b[user] += out.feedback * x
        counts[user] += 1
        theta[user] = np.linalg.solve(gram[user], b[user])
        nbrs = np.flatnonzero(adj[user])
        far = nbrs[np.linalg.norm(theta[nbrs] - theta[user], axis=1)
                   > ALPHA * (club_confidence(counts[user]) + club_confidence(counts[nbrs]))]
        if far.size:
            adj[user, far] = adj[far, user] = False
            _, comp = connected_components(adj, directed=False)
    return total


def privbandit_club(env, rounds: int, seed: int) -> float:
    policy = CLUB(env.dim, env.n_users, alpha=ALPHA, beta=BETA)
    return run(policy, env, rounds, seed).total_regret


def best_of(repeats: int, fn, *args) -> tuple[float, float]:
    best, value = float("inf"), 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.users, args.clusters, args.repeats = 300, 20, 2, 1

    env = seed000_environment(seed_streams(args.seed)["world"], n_users=args.users,
                              n_clusters=args.clusters)
    t_ref, reg_ref = best_of(args.repeats, straightforward_club, env, args.rounds, args.seed)
    t_new, reg_new = best_of(args.repeats, privbandit_club, env, args.rounds, args.seed)
    print(f"setting: seed000 n={args.users} m={args.clusters} d={env.dim} K={env.n_items} "
          f"T={args.rounds} beta={BETA} alpha={ALPHA} (best of {args.repeats})")
    print(f"straightforward: {t_ref:.3f} s, cumulative regret {reg_ref:.3f}")
    print(f"privbandit:      {t_new:.3f} s, cumulative regret {reg_new:.3f}")
    print(f"same_regret: {abs(reg_ref - reg_new) <= 1e-6 * max(1.0, abs(reg_ref))}")
    print(f"straightforward_rounds_per_s: {args.rounds / t_ref:.0f}")
    print(f"privbandit_rounds_per_s: {args.rounds / t_new:.0f}")
    print(f"speedup: {t_ref / t_new:.2f}")


if __name__ == "__main__":
    main()
