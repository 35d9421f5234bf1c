"""Replicates in lockstep against separate runs, in one process and one run of this script.

R seeds of one configuration are played (a) one after the other with
`privbandit.run`, as a study used to, and (b) together with
`runtime.lockstep.run_lockstep` (one vectorized pass, a generator per
replicate).  The script checks both give the same regret per replicate and
prints the wall-time ratio separate / lockstep.  Repeats alternate the two
sides, so load changes hit both; the figure is the median of the per-repeat
ratios (best times printed as context).

- `lockstep_speedup_linucb`: LinUCB (one model per user) on seed 000's world,
  d = 10, K = 10, 20 users (the FCLUB world), R = 16;
- `lockstep_speedup_linucb_d20`: one user, d = 20, K = 200 unit-sphere items
  (the world of bench_linucb.py), R = 16: the draw of 4,000 normals a round,
  the same on both sides, bounds this one;
- `lockstep_speedup_fclub`: FCLUB-DC in the main job's world (seed 000,
  d = 10, K = 10, 20 users, 5 servers, the study defaults), through its
  study entry (world built per seed on both sides), R = 16, --fclub-rounds;
- `lockstep_speedup_fclub_private`: CDP-FCLUB-DC acting on raw buffers as
  the paper does ("cdp-fclub-dc-paper": raw buffers, tree privatizers,
  every-round releases, otherwise study defaults, epsilon = 1) in the same world and
  way: each round's noise is drawn per replicate, with its own generator, on
  both sides.  (The defaults acting on released statistics only, and the
  billboard's "cdp-fclub-dc+", have no batched twin yet.)

Usage: python bench/bench_lockstep.py [--rounds 10000] [--fclub-rounds 8192]
                                      [--replicates 16] [--repeats 3] [--smoke]
(--smoke: a tiny run for the tests, seconds)
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from bench_fclub import study_config

from privbandit.envs import LinearUsersEnv, SphereItems, seed000_environment
from privbandit.policies import LinUCB
from privbandit.registry import get_algorithm
from privbandit.runtime import run, seed_streams
from privbandit.runtime.lockstep import run_lockstep


def seeds(n: int) -> list[np.random.SeedSequence]:
    return [np.random.SeedSequence(2026, spawn_key=(i,)) for i in range(n)]


def fclub_world(seed):
    return seed000_environment(seed_streams(seed)["world"])


def sphere_world(seed):
    theta = np.full((1, 20), 20 ** -0.5)
    return LinearUsersEnv(theta, SphereItems(20, 200))


def linucb(env):
    return LinUCB(env.dim, env.n_users, beta=0.5)


def fclub_config(name: str, horizon: int, **params) -> dict:
    """The study's configuration of `name` in the main job's world (private: epsilon 1)."""
    extra = {"epsilon": 1.0} if name.startswith("cdp-") else {}
    return study_config(name, horizon=horizon, **extra, **params)


def fclub_sides(name: str, **params) -> tuple[Callable, Callable]:
    """(separate, lockstep): `name` through its study entry, one seed after the other or
    the seeds in lockstep (world built per seed on both sides)."""
    def fclub_separate(world, policy, horizon: int, n: int) -> np.ndarray:
        entry = get_algorithm(name)
        return np.array([entry.run(fclub_config(name, horizon, **params), s).regret
                         for s in seeds(n)])

    def fclub_lockstep(world, policy, horizon: int, n: int) -> np.ndarray:
        results = get_algorithm(name).run_seeds(fclub_config(name, horizon, **params), seeds(n))
        assert all(r.timings.get("lockstep_replicates") == n for r in results)
        return np.array([r.regret for r in results])

    return fclub_separate, fclub_lockstep


fclub_separate, fclub_lockstep = fclub_sides("fclub-dc")


def separate(world: Callable, policy: Callable, horizon: int, n: int) -> np.ndarray:
    out = []
    for seed in seeds(n):
        env = world(seed)
        out.append(run(policy(env), env, horizon, seed).regret)
    return np.array(out)


def lockstep(world: Callable, policy: Callable, horizon: int, n: int) -> np.ndarray:
    envs = [world(seed) for seed in seeds(n)]
    results = run_lockstep([policy(env) for env in envs], envs, horizon, seeds(n))
    return np.array([r.regret for r in results])


def timed(fn: Callable, *args) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def compare(name: str, sides: tuple[Callable, Callable], args: tuple, repeats: int) -> float:
    """Median over repeats of separate time / lockstep time; checks the regrets agree."""
    ratios, best = [], [np.inf, np.inf]
    for _ in range(repeats):
        t_sep, reg_sep = timed(sides[0], *args)
        t_lock, reg_lock = timed(sides[1], *args)
        np.testing.assert_allclose(reg_lock, reg_sep, rtol=1e-12, atol=1e-12)
        ratios.append(t_sep / t_lock)
        best = [min(best[0], t_sep), min(best[1], t_lock)]
    rounds = args[2] * args[3]
    print(f"{name}: separate {best[0]:.3f} s ({rounds / best[0]:,.0f} rounds/s), "
          f"lockstep {best[1]:.3f} s ({rounds / best[1]:,.0f} rounds/s), "
          f"ratios {', '.join(f'{r:.2f}' for r in ratios)}")
    return statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10_000)
    parser.add_argument("--replicates", type=int, default=16)
    parser.add_argument("--fclub-rounds", type=int, default=8192)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.replicates, args.fclub_rounds, args.repeats = 200, 3, 128, 1
    r, t = args.replicates, args.rounds
    figures = {
        "lockstep_speedup_linucb": compare(
            "linucb d=10 K=10", (separate, lockstep), (fclub_world, linucb, t, r), args.repeats),
        "lockstep_speedup_linucb_d20": compare(
            "linucb d=20 K=200", (separate, lockstep), (sphere_world, linucb, t, r),
            args.repeats),
        "lockstep_speedup_fclub": compare(
            "fclub-dc main-job world", (fclub_separate, fclub_lockstep),
            (None, None, args.fclub_rounds, r), args.repeats),
        "lockstep_speedup_fclub_private": compare(
            "cdp-fclub-dc (raw buffers) main-job world",
            fclub_sides("cdp-fclub-dc-paper", mechanism="tree", schedule="every-round"),
            (None, None, args.fclub_rounds, r), args.repeats),
    }
    for key, value in figures.items():
        print(f"{key}: {value:.2f}")


if __name__ == "__main__":
    main()
