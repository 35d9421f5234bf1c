"""LinUCB speed: privbandit's LinUCB + environment against a straightforward loop, one run.

Setting: one user, d = 20, K = 200 fresh unit-norm Gaussian items per round,
Bernoulli(clip(x . theta, 0, 1)) rewards, constant radius beta, T rounds.

- reference ("straightforward"): each round draws its K contexts with one RNG
  call, recomputes A^-1 with np.linalg.inv, and scores the items (vectorized);
- privbandit: `LinUCB` (Sherman-Morrison inverse, determinant-lemma log-det,
  input checks) on `LinearUsersEnv` (contexts, arrivals and reward noise drawn
  in blocks of rounds), driven by `privbandit.run.run`.

Both use NumPy's default bit generator (PCG64), so the ratio measures the
implementation, not the random number generator.  A third line times the
policies alone on the same pre-drawn contexts.

Usage: python bench/bench_linucb.py [--rounds 20000] [--dim 20] [--items 200] [--repeats 3]
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from privbandit.envs import LinearUsersEnv, SphereItems
from privbandit.policies import LinUCB
from privbandit.run import run

BETA = 0.5


def straightforward_run(theta: np.ndarray, rounds: int, n_items: int, seed: int) -> float:
    """Textbook LinUCB: contexts drawn per round, inverse recomputed per round."""
    rng = np.random.default_rng(seed)
    d = theta.size
    gram = np.eye(d)
    b = np.zeros(d)
    regret = 0.0
    for _ in range(rounds):
        x = rng.standard_normal((n_items, d))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        inv = np.linalg.inv(gram)
        est = inv @ b
        scores = x @ est + BETA * np.sqrt(np.sum((x @ inv) * x, axis=1))
        a = int(np.argmax(scores))
        means = np.clip(x @ theta, 0.0, 1.0)
        reward = 1.0 if rng.random() < means[a] else 0.0
        regret += means.max() - means[a]
        gram += np.outer(x[a], x[a])
        b += reward * x[a]
    return regret


def privbandit_run(theta: np.ndarray, rounds: int, n_items: int, seed: int) -> float:
    env = LinearUsersEnv(theta[None, :], SphereItems(theta.size, n_items))
    return run(LinUCB(theta.size, 1, beta=BETA), env, rounds, seed).total_regret


def policies_only(theta: np.ndarray, rounds: int, n_items: int, seed: int) -> tuple[float, float]:
    """Seconds of the two policies alone (select + update) on the same pre-drawn contexts."""
    rng = np.random.default_rng(seed)
    d = theta.size
    block = 256
    contexts = rng.standard_normal((block, n_items, d))
    contexts /= np.linalg.norm(contexts, axis=2, keepdims=True)
    contexts.flags.writeable = False
    rewards = rng.random(block)

    start = time.perf_counter()
    gram, b = np.eye(d), np.zeros(d)
    for t in range(rounds):
        x = contexts[t % block]
        inv = np.linalg.inv(gram)
        a = int(np.argmax(x @ (inv @ b) + BETA * np.sqrt(np.sum((x @ inv) * x, axis=1))))
        gram += np.outer(x[a], x[a])
        b += rewards[t % block] * x[a]
    naive = time.perf_counter() - start

    start = time.perf_counter()
    policy = LinUCB(d, 1, beta=BETA)
    for t in range(rounds):
        x = contexts[t % block]
        a = policy.select(x, 0, t, rng)
        policy.update(x, 0, a, rewards[t % block], t)
    fast = time.perf_counter() - start
    return naive, fast


def best_of(repeats: int, fn, *args) -> tuple[float, float]:
    """(fastest wall time, the function's value) over `repeats` calls."""
    best, value = float("inf"), 0.0
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000)
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    theta = np.random.default_rng(args.seed).standard_normal(args.dim)
    theta /= np.linalg.norm(theta)
    t_ref, reg_ref = best_of(args.repeats, straightforward_run, theta, args.rounds, args.items,
                             args.seed)
    t_new, reg_new = best_of(args.repeats, privbandit_run, theta, args.rounds, args.items,
                             args.seed)
    pol = [policies_only(theta, args.rounds, args.items, args.seed) for _ in range(args.repeats)]
    p_ref, p_new = min(p[0] for p in pol), min(p[1] for p in pol)

    print(f"setting: d={args.dim} K={args.items} T={args.rounds} beta={BETA} "
          f"(best of {args.repeats})")
    print(f"straightforward: {t_ref:.3f} s, cumulative regret {reg_ref:.1f}")
    print(f"privbandit:      {t_new:.3f} s, cumulative regret {reg_new:.1f}")
    print(f"straightforward_rounds_per_s: {args.rounds / t_ref:.0f}")
    print(f"privbandit_rounds_per_s: {args.rounds / t_new:.0f}")
    print(f"speedup: {t_ref / t_new:.2f}")
    print(f"policy_only_speedup: {p_ref / p_new:.2f}")


if __name__ == "__main__":
    main()
