"""LinUCB speed: privbandit's LinUCB + environment against a straightforward loop, one run.

Setting: one user, d = 20, K = 200 fresh unit-norm Gaussian items per round,
Bernoulli(clip(x . theta, 0, 1)) rewards, constant radius beta, T rounds.

- reference ("straightforward"): each round draws its K contexts with one RNG
  call, recomputes A^-1 with np.linalg.inv, and scores the items (vectorized);
- privbandit: `LinUCB` (Sherman-Morrison inverse, determinant-lemma log-det,
  input checks) on `LinearUsersEnv` (contexts, arrivals and reward noise drawn
  in blocks of rounds), driven by `privbandit.run`;
- privbandit, pipelined: the same with `env.prefetch = True`, so the next
  block is drawn on a second core while the policy plays the current one
  (same rounds, same regret; the script checks).  Its wall-clock time uses
  two cores: `speedup_prefetch_cpu` compares process CPU seconds.

Both use NumPy's default bit generator (PCG64), so the ratio measures the
implementation, not the random number generator.  A third line times the
policies alone on the same pre-drawn contexts.

Drawing the T x K x d standard normals of the contexts is work both sides do
alike, and it bounds the ratio: `speedup_ceiling` is the straightforward
loop's time over the time of those draws alone (the speedup of a LinUCB that
cost nothing else).  Repeats alternate between the two implementations, so a
change of machine load hits both; `speedup` compares the best times,
`speedup_median` is the median of the per-repeat ratios and `speedup_cpu`
compares best process CPU times (steadier on a shared machine).

`policy_over_draw` is the time per round of the privbandit run over the time
to draw only that round's contexts (the item source's blocks, same
generator kind); `policy_over_draw_lockstep` the same for --replicates seeds
played in lockstep (`runtime.lockstep`, the worlds drawing straight into the
stacked buffers) over drawing their contexts; `policy_over_draw_lockstep_prefetch`
with each world's prefetching drawer on (wall time: the draws leave the critical
path when a second core is free; `..._cpu` compares CPU seconds, both threads).

Usage: python bench/bench_linucb.py [--rounds 20000] [--dim 20] [--items 200] [--repeats 3]
                                    [--replicates 16] [--smoke]
(--smoke: a tiny run for the tests, seconds)
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from privbandit.envs import LinearUsersEnv, SphereItems
from privbandit.envs.blocks import block_rounds
from privbandit.policies import LinUCB
from privbandit.runtime import run
from privbandit.runtime.lockstep import run_lockstep

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


def privbandit_run(
    theta: np.ndarray, rounds: int, n_items: int, seed: int, prefetch: bool = False
) -> float:
    env = LinearUsersEnv(theta[None, :], SphereItems(theta.size, n_items))
    env.prefetch = prefetch
    return run(LinUCB(theta.size, 1, beta=BETA), env, rounds, seed).total_regret


def pipelined_run(theta: np.ndarray, rounds: int, n_items: int, seed: int) -> float:
    return privbandit_run(theta, rounds, n_items, seed, prefetch=True)


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


def contexts_only(theta: np.ndarray, rounds: int, n_items: int, seed: int) -> None:
    """Draw the normals of every round's contexts, in the environment's blocks, and nothing else."""
    rng = np.random.default_rng(seed)
    d = theta.size
    block = block_rounds(n_items * d, None)
    for start in range(0, rounds, block):
        rng.standard_normal((min(block, rounds - start), n_items, d))


def item_draws(theta: np.ndarray, rounds: int, n_items: int, seed: int, worlds: int = 1) -> None:
    """Draw every round's contexts (the environment's item source, in its blocks) of
    `worlds` worlds, each with its own generator, and nothing else."""
    source, block = SphereItems(theta.size, n_items), block_rounds(n_items * theta.size, None)
    for rng in (np.random.default_rng([seed, w]) for w in range(worlds)):
        for start in range(0, rounds, block):
            source.draw(min(block, rounds - start), rng)


def lockstep_runs(theta: np.ndarray, rounds: int, n_items: int, seed: int, worlds: int,
                  prefetch: bool = False) -> None:
    """`worlds` seeds of the privbandit run played in lockstep (`runtime.run_lockstep`),
    each world's next block drawn on its worker thread when `prefetch`."""
    envs = [LinearUsersEnv(theta[None, :], SphereItems(theta.size, n_items))
            for _ in range(worlds)]
    for env in envs:
        env.prefetch = prefetch
    seeds = [np.random.SeedSequence([seed, w]) for w in range(worlds)]
    run_lockstep([LinUCB(theta.size, 1, beta=BETA) for _ in envs], envs, rounds, seeds)


def policy_over_draw(run_args: tuple, repeats: int, worlds: int) -> dict[str, float]:
    """Seconds per round of a LinUCB run over seconds to draw that round's contexts alone:
    single run, `worlds` replicates in lockstep, and in lockstep with the prefetching
    drawer (wall time: the draws overlap the policy on a second core; and CPU time, the
    work of both threads), medians of alternating repeats."""
    single, lock, pipe, pipe_cpu = [], [], [], []
    for _ in range(repeats):
        single.append(timed(privbandit_run, *run_args)[0] / timed(item_draws, *run_args)[0])
        draws = timed(item_draws, *run_args, worlds)
        lock.append(timed(lockstep_runs, *run_args, worlds)[0] / draws[0])
        wall, cpu, _ = timed(lockstep_runs, *run_args, worlds, True)
        pipe.append(wall / draws[0])
        pipe_cpu.append(cpu / draws[1])
    print(f"policy over draw: single {', '.join(f'{v:.2f}' for v in single)}; "
          f"lockstep of {worlds} {', '.join(f'{v:.2f}' for v in lock)}; "
          f"with prefetch {', '.join(f'{v:.2f}' for v in pipe)} "
          f"(CPU {', '.join(f'{v:.2f}' for v in pipe_cpu)})")
    return {"policy_over_draw": float(np.median(single)),
            "policy_over_draw_lockstep": float(np.median(lock)),
            "policy_over_draw_lockstep_prefetch": float(np.median(pipe)),
            "policy_over_draw_lockstep_prefetch_cpu": float(np.median(pipe_cpu))}


def timed(fn, *args) -> tuple[float, float, Any]:
    """(wall seconds, process CPU seconds, the function's value) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = fn(*args)
    return time.perf_counter() - wall, time.process_time() - cpu, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000)
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--replicates", type=int, default=16)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.dim, args.items, args.repeats, args.replicates = 300, 5, 20, 1, 2

    theta = np.random.default_rng(args.seed).standard_normal(args.dim)
    theta /= np.linalg.norm(theta)
    run_args = (theta, args.rounds, args.items, args.seed)
    sides = {"ref": straightforward_run, "new": privbandit_run, "pipe": pipelined_run,
             "draws": contexts_only}
    runs: dict[str, list] = {k: [] for k in sides}
    for _ in range(args.repeats):  # alternate, so load changes hit every side alike
        for k, fn in sides.items():
            runs[k].append(timed(fn, *run_args))
    t_ref, t_new, t_pipe, t_draws = (min(r[0] for r in runs[k]) for k in sides)
    c_ref, c_new, c_pipe = (min(r[1] for r in runs[k]) for k in ("ref", "new", "pipe"))
    reg_ref, reg_new, reg_pipe = (runs[k][-1][2] for k in ("ref", "new", "pipe"))
    if reg_pipe != reg_new:
        raise SystemExit(f"prefetch changed the run: regret {reg_pipe} != {reg_new}")

    def median_ratio(side: str) -> float:
        return float(np.median([r[0] / n[0] for r, n in zip(runs["ref"], runs[side], strict=True)]))

    pol = [policies_only(*run_args) for _ in range(args.repeats)]
    p_ref, p_new = min(p[0] for p in pol), min(p[1] for p in pol)

    print(f"setting: d={args.dim} K={args.items} T={args.rounds} beta={BETA} "
          f"(best of {args.repeats})")
    print(f"straightforward: {t_ref:.3f} s, cumulative regret {reg_ref:.1f}")
    print(f"privbandit:      {t_new:.3f} s, cumulative regret {reg_new:.1f}")
    print(f"pipelined:       {t_pipe:.3f} s wall, {c_pipe:.3f} s CPU (two threads), same regret")
    print(f"contexts alone:  {t_draws:.3f} s (the normals both draw)")
    print(f"straightforward_rounds_per_s: {args.rounds / t_ref:.0f}")
    print(f"privbandit_rounds_per_s: {args.rounds / t_new:.0f}")
    print(f"privbandit_prefetch_rounds_per_s: {args.rounds / t_pipe:.0f}")
    print(f"speedup: {t_ref / t_new:.2f}")
    print(f"speedup_median: {median_ratio('new'):.2f}")
    print(f"speedup_cpu: {c_ref / c_new:.2f}")
    print(f"speedup_prefetch: {t_ref / t_pipe:.2f}")
    print(f"speedup_prefetch_median: {median_ratio('pipe'):.2f}")
    print(f"speedup_prefetch_cpu: {c_ref / c_pipe:.2f}")
    print(f"speedup_ceiling: {t_ref / t_draws:.2f}")
    print(f"policy_only_speedup: {p_ref / p_new:.2f}")
    for key, value in policy_over_draw(run_args, args.repeats, args.replicates).items():
        print(f"{key}: {value:.2f}")


if __name__ == "__main__":
    main()
