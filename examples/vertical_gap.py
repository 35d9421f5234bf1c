"""Seed 003: estimation error (theta-norm) curves, and where the partial-local gap is large.

Seed 003's synthetic world (unit-norm theta and items, K = 10, Gaussian reward
noise), M = 5 parties, LinUCB with beta = 0.5, T = 5000, 5 seeds.

1. Estimation error: ||theta_hat_t - theta|| against t for LinUCB on the full
   features (VFUCB's is the same: Q^T (Q theta)_hat = theta_hat, Theorem 4.1)
   and for the partial-local LinUCB on the active party's columns (against
   theta's columns it holds), at d = 100, the paper's setting.  Drawn to
   `vertical_theta_error.png`.
2. A sweep over d in {20, 100}, the active party's share of the features in
   {0.2, 0.5, 0.8} and the reward noise variance in {0.05, 0.5}: the ratio of
   the partial-local final regret to the full-feature one (the paper reports
   "more than 10x").

Prints the tables, then `key: value` lines (every ratio, the largest and where).

Usage: python examples/vertical_gap.py [--horizon 5000] [--seeds 5] [--out vertical_figures]
       [--smoke]
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from privbandit.envs.vertical import FeatureSplit, seed003_environment
from privbandit.policies import LinUCB
from privbandit.runtime import run, run_setup, seed_streams
from privbandit.vertical import partial_local_setup

M, K, BETA = 5, 10, 0.5
DIMS, SHARES, NOISES = (20, 100), (0.2, 0.5, 0.8), (0.05, 0.5)


class ThetaError(LinUCB):
    """LinUCB that records ||theta_hat - theta_true|| after every `every` updates."""

    def __init__(self, dim: int, truth: np.ndarray, every: int) -> None:
        super().__init__(dim, beta=BETA)
        self.truth, self.every, self.errors = truth, every, []

    def update(self, items, user, action, feedback, t):
        super().update(items, user, action, feedback, t)
        if t % self.every == 0:
            self.errors.append(float(np.linalg.norm(self.models.theta[0] - self.truth)))


def truth(dim: int, seed: int) -> np.ndarray:
    """The world's theta, drawn as `seed003_environment` draws it from the same stream."""
    g = seed_streams(seed)["world"].standard_normal((1, dim)) * math.sqrt(0.05)
    return (g / np.linalg.norm(g))[0]


def gap(dim: int, share: float, noise: float, horizon: int, seeds: int) -> np.ndarray:
    """Partial-local over full-feature final regret, per seed."""
    out = np.zeros(seeds)
    for seed in range(seeds):
        world = seed003_environment(dim, K, rng=seed_streams(seed)["world"], noise_var=noise)
        split = FeatureSplit.with_active_share(dim, M, share)
        full = run(LinUCB(dim, beta=BETA), world, horizon, seed).total_regret
        part = run_setup(partial_local_setup(LinUCB(split.widths[0], beta=BETA), world, split,
                                             horizon), seed).total_regret
        out[seed] = part / full
    return out


def theta_curves(horizon: int, seeds: int, every: int) -> dict[str, np.ndarray]:
    dim, curves = 100, {"full": [], "partial-0.2": [], "partial-0.8": []}
    for seed in range(seeds):
        world = seed003_environment(dim, K, rng=seed_streams(seed)["world"])
        th = truth(dim, seed)
        full = ThetaError(dim, th, every)
        run(full, world, horizon, seed)
        curves["full"].append(full.errors)
        for share in (0.2, 0.8):
            split = FeatureSplit.with_active_share(dim, M, share)
            d0 = split.widths[0]
            part = ThetaError(d0, th[:d0], every)
            run_setup(partial_local_setup(part, world, split, horizon), seed)
            curves[f"partial-{share}"].append(part.errors)
    return {k: np.array(v) for k, v in curves.items()}


def plot(curves: dict[str, np.ndarray], every: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, c in curves.items():
        x = np.arange(c.shape[1]) * every + 1
        m, s = c.mean(axis=0), c.std(axis=0)
        ax.plot(x, m, label={"full": "LinUCB = VFUCB (d = 100)"}.get(name, name))
        ax.fill_between(x, m - s, m + s, alpha=0.2)
    ax.set(xlabel="round", ylabel="||theta_hat - theta||", yscale="log",
           title="Estimation error, seed 003 synthetic (mean, 1 sd)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=5000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("vertical_figures"))
    parser.add_argument("--smoke", action="store_true", help="a tiny run (checks the script)")
    args = parser.parse_args()
    dims = DIMS
    if args.smoke:
        args.horizon, args.seeds, dims = 200, 2, (20,)
    args.out.mkdir(parents=True, exist_ok=True)
    every = max(1, args.horizon // 100)
    curves = theta_curves(args.horizon, args.seeds, every)
    path = args.out / "vertical_theta_error.png"
    plot(curves, every, path)
    lines = [f"horizon: {args.horizon}", f"seeds: {args.seeds}", f"figure: {path}"]
    for name, c in curves.items():
        lines.append(f"theta_error_final_{name.replace('-', '_')}: {c[:, -1].mean():.3f}")
    print(f"{'d':>4} {'share':>6} {'noise':>6} {'partial / full regret':>28}")
    best = (0.0, "")
    for dim in dims:
        for noise in NOISES:
            for share in SHARES:
                r = gap(dim, share, noise, args.horizon, args.seeds)
                print(f"{dim:4d} {share:6.1f} {noise:6.2f} {r.mean():12.2f} "
                      f"(seeds {r.min():.2f}..{r.max():.2f})")
                tag = f"d{dim}_share{share:g}_noise{noise:g}"
                lines.append(f"gap_{tag}: {r.mean():.2f}")
                best = max(best, (r.mean(), tag))
    lines += [f"gap_max: {best[0]:.2f}", f"gap_max_at: {best[1]}"]
    print("\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
