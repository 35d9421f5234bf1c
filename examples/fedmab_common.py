"""Helpers shared by the fedmab_*.py examples: seeded sweeps, spread, orderings, plots.

Every run of a sweep gets its own environment (means drawn afresh) and its own
run generator, both from `SeedSequence(seed)`; the same seed gives the same
environment and the same reward/noise streams to every algorithm compared,
so differences between settings are paired.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from privbandit.runtime import play_algorithm  # noqa: E402

POINTS = 200  # points kept per cumulative-regret curve


def parse_args(description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seeds", type=int, default=10, help="runs per setting (>= 10)")
    parser.add_argument("--horizon", type=int, default=10**6)
    parser.add_argument("--out", type=Path, default=Path("fedmab_figures"))
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.seeds, args.horizon = 2, 3000
    args.out.mkdir(parents=True, exist_ok=True)
    return args


def streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    """(environment generator, run generator) of one seed."""
    env_ss, run_ss = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(env_ss), np.random.default_rng(run_ss)


@dataclass
class Sweep:
    """One setting over seeds: per-agent final regret, cost, and sampled curves."""

    label: str
    regret: np.ndarray  # (S,) final cumulative regret per agent
    cost: np.ndarray  # (S,) communication cost
    rounds: np.ndarray  # (P,) rounds at which curves are sampled
    curves: np.ndarray  # (S, P) cumulative regret per agent

    def line(self) -> str:
        r = self.regret
        return (f"{self.label:<32} regret/agent {r.mean():10.1f} +- {r.std(ddof=1):8.1f} "
                f"[{r.min():9.1f}, {r.max():9.1f}]   cost {self.cost.mean():10.1f}")


def sweep(label: str, make_env, make_algo, seeds: int, horizon: int) -> Sweep:
    """Run `make_algo()` on `make_env(env_rng)` for seeds 0..seeds-1."""
    rounds = np.unique(np.linspace(0, horizon - 1, POINTS).astype(np.int64))
    regrets, costs, curves = [], [], []
    for seed in range(seeds):
        env_rng, run_rng = streams(seed)
        env = make_env(env_rng)
        result = play_algorithm(make_algo(), env, run_rng)
        cum = result.cumulative_regret() / env.n_users
        regrets.append(cum[-1])
        costs.append(result.comm["cost"])
        curves.append(cum[rounds])
    return Sweep(label, np.array(regrets), np.array(costs), rounds, np.array(curves))


def report_order(name: str, sweeps: list[Sweep], decreasing: bool = True) -> bool:
    """Print whether mean regret is monotone along `sweeps` and how often per seed."""
    means = [s.regret.mean() for s in sweeps]
    pairs = list(zip(means, means[1:], strict=False))
    holds = all(b < a for a, b in pairs) if decreasing else all(b > a for a, b in pairs)
    stacked = np.stack([s.regret for s in sweeps])
    step = np.diff(stacked, axis=0)
    per_seed = np.all(step < 0 if decreasing else step > 0, axis=0).mean()
    word = "decreases" if decreasing else "increases"
    print(f"ordering [{name}]: mean regret {word} along "
          f"{' -> '.join(s.label for s in sweeps)}: {'yes' if holds else 'NO'} "
          f"(strictly monotone in {per_seed:.0%} of seeds)")
    return holds


def plot_curves(path: Path, title: str, sweeps: list[Sweep]) -> None:
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for s in sweeps:
        mean, std = s.curves.mean(axis=0), s.curves.std(axis=0, ddof=1)
        ax.plot(s.rounds, mean, label=s.label)
        ax.fill_between(s.rounds, mean - std, mean + std, alpha=0.2)
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret per agent")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")


def plot_bars(path: Path, title: str, sweeps: list[Sweep]) -> None:
    """Final regret per agent (mean, std) and mean cost side by side."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.6, 4.0))
    labels = [s.label for s in sweeps]
    x = np.arange(len(sweeps))
    ax1.bar(x, [s.regret.mean() for s in sweeps],
            yerr=[s.regret.std(ddof=1) for s in sweeps], capsize=3)
    ax1.set_ylabel("final regret per agent")
    ax2.bar(x, [s.cost.mean() for s in sweeps], color="tab:orange")
    ax2.set_ylabel("communication cost")
    for ax in (ax1, ax2):
        ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")
