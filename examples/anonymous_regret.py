"""Seed 004's simulations: Algorithm 1 (three decompositions) against explore-then-commit.

Setting (ours; the paper's supplement is not available): N = 100 users, K = 5
arms, C = 5, Bernoulli rewards; each user's K means are uniform on [0, 1] with
the largest planted on the user's cluster arm, U = 20 users per arm
(`clustered_means`).  For every seed the same instance is played by

- Algorithm 1 (`AnonymousBaSE`, minimax grid, B = ceil(log2 log2 T), gamma = 0.25)
  with the LP (anonymity polytope + Carathéodory), randomized-matching and
  greedy decompositions; free users play an arbitrary (uniformly drawn) active
  arm, as the paper allows;
- the greedy variant again with free users on their current leader
  (`fill="leader"`, an ablation: it removes most of greedy's waste);
- Algorithm 2 (`AnonymousExploreThenCommit`) with the paper's constant c = 10
  (it explores for the whole horizon below T ~ 2.4e6), with c = 1 (exploration
  dominates the regret: the T^(2/3) regime of Theorem 2) and with c = 0.3 (the
  best of 0.1, 0.2, 0.3, 0.5 in a 3-seed sweep at T = 1e5; its commit-phase
  mistakes still weigh at these T, so its slope is below 2/3).

It prints mean and sd of the total pseudo-regret over seeds for each T, the
log-log slope of regret against T (fit on the means, and mean +- sd of the
per-seed fits), paired win counts (how many seeds LP / randomized beat greedy and
ETC), and writes a log-log PNG with the fitted slopes.

Usage: python examples/anonymous_regret.py [--seeds 10] [--horizons 1e4,3e4,1e5,3e5]
                                           [--out anonymous_figures]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from privbandit.anonymous import AnonymousBaSE, AnonymousExploreThenCommit  # noqa: E402
from privbandit.envs.anonymous import AnonymousBanditEnv, clustered_means  # noqa: E402
from privbandit.runtime import play_algorithm  # noqa: E402

N, K, C, U = 100, 5, 5, 20

ALGORITHMS = {
    "Alg. 1, LP": lambda t: AnonymousBaSE(N, K, C, U, t, decomposition="lp"),
    "Alg. 1, randomized": lambda t: AnonymousBaSE(N, K, C, U, t, decomposition="randomized"),
    "Alg. 1, greedy": lambda t: AnonymousBaSE(N, K, C, U, t, decomposition="greedy"),
    "Alg. 1, greedy, leader fill": lambda t: AnonymousBaSE(
        N, K, C, U, t, decomposition="greedy", fill="leader"),
    "Alg. 2, ETC c=0.3": lambda t: AnonymousExploreThenCommit(N, K, C, t, explore_constant=0.3),
    "Alg. 2, ETC c=1": lambda t: AnonymousExploreThenCommit(N, K, C, t, explore_constant=1.0),
    "Alg. 2, ETC c=10 (paper)": lambda t: AnonymousExploreThenCommit(N, K, C, t),
}
WINNERS = ("Alg. 1, LP", "Alg. 1, randomized")
RIVALS = ("Alg. 1, greedy", "Alg. 2, ETC c=0.3", "Alg. 2, ETC c=1", "Alg. 2, ETC c=10 (paper)")


def run_all(seeds: int, horizons: list[int]) -> dict[str, np.ndarray]:
    """Total regret, {algorithm: (seeds, horizons)}."""
    regret = {name: np.zeros((seeds, len(horizons))) for name in ALGORITHMS}
    for seed in range(seeds):
        start = time.perf_counter()
        means = clustered_means(N, K, U, np.random.default_rng(seed))
        for h, horizon in enumerate(horizons):
            for name, make in ALGORITHMS.items():
                env = AnonymousBanditEnv(means, C)
                result = play_algorithm(make(horizon), env, np.random.default_rng([seed, horizon]),
                                        seed)
                regret[name][seed, h] = result.total_regret
        print(f"seed {seed} done in {time.perf_counter() - start:.1f} s", flush=True)
    return regret


def slopes(horizons: list[int], regret: np.ndarray) -> tuple[float, float, float]:
    """(slope of the mean curve, mean and sd of per-seed slopes) on log-log axes."""
    x = np.log(horizons)
    mean_fit = np.polyfit(x, np.log(regret.mean(axis=0)), 1)[0]
    per_seed = np.array([np.polyfit(x, np.log(r), 1)[0] for r in regret])
    return float(mean_fit), float(per_seed.mean()), float(per_seed.std(ddof=1))


def report(regret: dict[str, np.ndarray], horizons: list[int]) -> dict[str, float]:
    seeds = next(iter(regret.values())).shape[0]
    print(f"\ntotal pseudo-regret, mean +- sd over {seeds} seeds")
    print(f"{'algorithm':28s}" + "".join(f"{f'T={t:.0e}':>22s}" for t in horizons) + "   slope")
    fitted = {}
    for name, r in regret.items():
        fit, seed_mean, seed_sd = slopes(horizons, r)
        fitted[name] = fit
        cells = "".join(f"{m:>13.0f} +- {s:<6.0f}" for m, s in
                        zip(r.mean(axis=0), r.std(axis=0, ddof=1), strict=True))
        print(f"{name:28s}{cells}   {fit:.3f} (per seed {seed_mean:.3f} +- {seed_sd:.3f})")
    print("\npaired wins (seeds where the first has less regret than the second)")
    for a in WINNERS:
        for b in RIVALS:
            wins = (regret[a] < regret[b]).sum(axis=0)
            cells = "  ".join(
                f"T={t:.0e}: {w}/{seeds}" for t, w in zip(horizons, wins, strict=True)
            )
            print(f"  {a} < {b}: {cells}")
    return fitted


def plot(regret: dict[str, np.ndarray], horizons: list[int], fitted: dict[str, float],
         path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 5))
    x = np.asarray(horizons, dtype=float)
    for name, r in regret.items():
        mean, sd = r.mean(axis=0), r.std(axis=0, ddof=1)
        ax.errorbar(x, mean, yerr=sd, marker="o", capsize=3,
                    label=f"{name} (slope {fitted[name]:.2f})")
    anchor = regret["Alg. 1, LP"].mean(axis=0)[0]
    ax.plot(x, anchor * (x / x[0]) ** 0.5, "k:", label="slope 1/2")
    ax.plot(x, anchor * (x / x[0]) ** (2 / 3), "k--", label="slope 2/3")
    ax.set(xscale="log", yscale="log", xlabel="horizon T", ylabel="total pseudo-regret",
           title=f"Anonymous bandits: N={N}, K={K}, C={C}, U={U}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--horizons", default="1e4,3e4,1e5,3e5")
    parser.add_argument("--out", type=Path, default=Path("anonymous_figures"))
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.seeds, args.horizons = 2, "2e3,4e3"
    horizons = [int(float(h)) for h in args.horizons.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    regret = run_all(args.seeds, horizons)
    fitted = report(regret, horizons)
    path = args.out / "anonymous_regret.png"
    plot(regret, horizons, fitted, path)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
