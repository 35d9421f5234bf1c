"""Seed 003's synthetic experiment: VFUCB / VFTS against centralized and partial-local bandits.

The paper's setting (Section 5.1, Appendix D.2): d = 100 features split
[20, 20, 20, 20, 20] over M = 5 parties, K = 10 items a round, x and theta
~ N(0, 0.05 I) normalised, reward x . theta + N(0, 0.05), T = 5000, beta = 0.5
for LinUCB and v = 0.01 for LinTS, several seeds.  For each seed it runs:

- LinUCB / LinTS on the full features (one party holds everything);
- VFUCB / VFTS: the protocol of `privbandit.vertical` (masks sealed for each
  party, masked batches sealed for the active party);
- partial-local LinUCB / LinTS on the active party's columns alone, with
  partial ratios 0.2 and 0.8.

It prints the lossless check (VFUCB's arm equals LinUCB's in every round of
every seed), final cumulative regret (mean and sd over seeds), the orderings
full ~ VF << partial and 0.8 < 0.2, and writes a PNG of the regret curves.
Both sides of the lossless check break exact ties (every item ties at t = 0)
by the lowest index (`vertical.ties.TieTolerant`).

Usage: python examples/vertical_synthetic.py [--seeds 5] [--horizon 5000] [--plain]
                                            [--out vertical_figures]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from privbandit.envs.vertical import FeatureSplit, VerticalSplit, seed003_environment  # noqa: E402
from privbandit.policies import LinTS, LinUCB, Policy  # noqa: E402
from privbandit.runtime import run, run_setup, seed_streams  # noqa: E402
from privbandit.vertical import partial_local_setup, vertical_setup  # noqa: E402
from privbandit.vertical.ties import TieTolerant  # noqa: E402

D, K, M = 100, 10, 5
BETA, V = 0.5, 0.01
RATIOS = (0.2, 0.8)


class Recorded(Policy):
    """Keeps the actions of a policy, for the round-by-round lossless check."""

    def __init__(self, inner: Policy) -> None:
        self.inner, self.dim, self.name, self.actions = inner, inner.dim, inner.name, []

    def select(self, items, user, t, rng):
        return self.inner.select(items, user, t, rng)

    def update(self, items, user, action, feedback, t):
        self.actions.append(action)
        self.inner.update(items, user, action, feedback, t)

    def params(self):
        return self.inner.params()


def ucb(dim: int) -> Policy:
    return TieTolerant(LinUCB(dim, beta=BETA))


def ts(dim: int) -> Policy:
    return LinTS(dim, v=V)


def one_seed(seed: int, horizon: int, seal: bool) -> dict[str, np.ndarray]:
    """Cumulative regret curves of every algorithm on one seed's world, plus the arm check."""
    world = seed003_environment(D, K, rng=seed_streams(seed)["world"])
    curves: dict[str, np.ndarray] = {}
    for family, make in (("ucb", ucb), ("ts", ts)):
        central, vertical = Recorded(make(D)), Recorded(make(D))
        full = run(central, world, horizon, seed)
        vf = run_setup(vertical_setup(vertical, VerticalSplit(world, FeatureSplit.equal(D, M)),
                                      horizon, seed_streams(seed)["secrets"], seal_traffic=seal),
                       seed)
        curves[f"{family}:full"] = full.cumulative_regret()
        curves[f"{family}:vf"] = vf.cumulative_regret()
        curves[f"{family}:mismatch"] = np.array(
            [np.count_nonzero(np.array(central.actions) != np.array(vertical.actions))]
        )
        curves[f"{family}:maxdiff"] = np.array([np.max(np.abs(full.regret - vf.regret))])
        for ratio in RATIOS:
            split = FeatureSplit.with_active_share(D, M, ratio)
            part = run_setup(partial_local_setup(make(split.widths[0]), world, split, horizon),
                             seed)
            curves[f"{family}:partial-{ratio}"] = part.cumulative_regret()
    return curves


def summarize(runs: list[dict[str, np.ndarray]], horizon: int) -> None:
    names = {"ucb": ("LinUCB", "VFUCB"), "ts": ("LinTS", "VFTS")}
    for family, (central, federated) in names.items():
        mismatch = sum(int(r[f"{family}:mismatch"][0]) for r in runs)
        maxdiff = max(float(r[f"{family}:maxdiff"][0]) for r in runs)
        print(f"\n# {central} vs {federated}: arms differing in {mismatch} of "
              f"{horizon * len(runs)} rounds; max per-round regret difference {maxdiff:.3g}")
        final = {}
        for key in ("full", "vf", *(f"partial-{r}" for r in RATIOS)):
            values = np.array([r[f"{family}:{key}"][-1] for r in runs])
            final[key] = values
            spread = values.std(ddof=1)
            print(f"{family}:{key:<12} final regret {values.mean():9.2f} +- {spread:7.2f}")
        full, vf = final["full"].mean(), final["vf"].mean()
        low, high = final["partial-0.2"].mean(), final["partial-0.8"].mean()
        # "full ~ vf": the means differ by less than 3 standard errors of their difference
        se = np.sqrt((final["full"].var(ddof=1) + final["vf"].var(ddof=1)) / len(runs))
        print(f"{family}_full_over_vf: {full / vf:.3f}")
        print(f"{family}_full_minus_vf_in_standard_errors: {(full - vf) / max(se, 1e-300):.2f}")
        print(f"{family}_partial08_over_vf: {high / vf:.2f}")
        print(f"{family}_partial02_over_partial08: {low / high:.2f}")
        print(f"{family}_order_holds (full ~ vf < partial 0.8 < partial 0.2): "
              f"{abs(full - vf) <= 3 * se and vf < high < low}")
        if family == "ucb":
            print(f"vfucb_arm_mismatches: {mismatch}")


def plot(runs: list[dict[str, np.ndarray]], path: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    labels = {"full": "centralized", "vf": "vertical federated",
              **{f"partial-{r}": f"partial-local (ratio {r})" for r in RATIOS}}
    for ax, (family, title) in zip(axes, (("ucb", "LinUCB / VFUCB"), ("ts", "LinTS / VFTS")),
                                   strict=True):
        for key, label in labels.items():
            curves = np.stack([r[f"{family}:{key}"] for r in runs])
            mean, sd = curves.mean(axis=0), curves.std(axis=0, ddof=1)
            t = np.arange(1, curves.shape[1] + 1)
            style = "--" if key == "vf" else "-"
            ax.plot(t, mean, style, label=label)
            ax.fill_between(t, np.maximum(mean - sd, 1e-3), mean + sd, alpha=0.2)
        ax.set_yscale("log")
        ax.set_xlabel("round")
        ax.set_ylabel("cumulative regret")
        ax.set_title(f"{title}: d = {D}, K = {K}, M = {M}, {len(runs)} seeds")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"figure: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--horizon", type=int, default=5000)
    parser.add_argument("--plain", action="store_true", help="do not seal per-round traffic")
    parser.add_argument("--out", type=Path, default=Path("vertical_figures"))
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.seeds, args.horizon = 2, 200
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    runs = [one_seed(seed, args.horizon, not args.plain) for seed in range(args.seeds)]
    summarize(runs, args.horizon)
    plot(runs, args.out / "vertical_synthetic.png")
    print(f"seconds: {time.perf_counter() - started:.1f}")


if __name__ == "__main__":
    main()
