"""Budget against regret for CDP-FCLUB-DC: tight against the paper's calibration.

CDP-FCLUB-DC at epsilon in {0.1, 0.5, 1, 2, 4, 8}, delta = 0.1, with the tree
noise calibrated tightly (exact Gaussian accounting of the nodes a record
meets) or by seed 000's node formula (Algorithm 5, line 3), at the public
code's synthetic setting, T = 10^5, 5 seeds; non-private FCLUB-DC and CLUB
(per local server) on the same seeds as references.  A second grid of larger
budgets (tight only) finds the smallest epsilon at which CDP-FCLUB-DC's mean
final regret falls below CLUB's.

Prints the mean (sd) final regret per epsilon and calibration, the paired
per-seed comparison of tight against paper, the noise (sigma of a tree node)
each calibration adds, and the crossover with CLUB; draws
`fclub_regret_vs_epsilon.png`.

Usage: python examples/fclub_budget.py [--horizon 100000] [--seeds 5] [--workers 2]
       [--large 16 64 ... 1048576] [--out fclub_results]
A quick check: --horizon 5000 --seeds 2 --large 64.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from fclub_common import band, final, groups, pyplot, run

EPSILONS = [0.1, 0.5, 1, 2, 4, 8]
LARGE = [16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0]


def algorithms(large: list[float]) -> list[dict]:
    out = [
        {"name": "cdp-fclub-dc", "label": "CDP-FCLUB-DC",
         "grid": {"epsilon": EPSILONS, "calibration": ["tight", "paper"]}},
        {"name": "fclub-dc", "label": "FCLUB-DC"},
        {"name": "club-per-server", "label": "CLUB"},
    ]
    if large:
        out.append({"name": "cdp-fclub-dc", "label": "CDP-FCLUB-DC (large epsilon)",
                    "grid": {"epsilon": large, "calibration": ["tight"]}})
    return out


def per_seed(group: list[dict]) -> np.ndarray:
    return np.array([r["final_regret"] for r in sorted(group, key=lambda r: r["run"]
                                                         ["seed_index"])])


def report(records: list[dict]) -> None:
    by = groups(records, "epsilon", "calibration")
    club, fdc = final(by[("CLUB", None, None)]), final(by[("FCLUB-DC", None, None)])
    print(f"\nreferences: CLUB {club[0]:.1f} ({club[1]:.1f}), FCLUB-DC {fdc[0]:.1f} "
          f"({fdc[1]:.1f})")
    print(f"{'epsilon':>8s} {'tight':>18s} {'paper':>18s} {'sigma tight':>12s} "
          f"{'sigma paper':>12s} {'tight<paper seeds':>18s}")
    always = True
    for eps in EPSILONS:
        t, p = by[("CDP-FCLUB-DC", eps, "tight")], by[("CDP-FCLUB-DC", eps, "paper")]
        ft, fp = final(t), final(p)
        wins = int((per_seed(t) < per_seed(p)).sum())
        always &= ft[0] < fp[0]
        print(f"{eps:8g} {ft[0]:9.1f} ({ft[1]:6.1f}) {fp[0]:9.1f} ({fp[1]:6.1f}) "
              f"{t[0]['params']['sigma_tree']:12.3g} {p[0]['params']['sigma_tree']:12.3g} "
              f"{wins:>12d} of {len(t)}")
    print(f"tight below paper (mean) at every epsilon: {always}")
    crossing = None
    cells = sorted((k[1], g) for k, g in by.items() if k[0].startswith("CDP") and k[2] == "tight")
    for eps, group in cells:
        mean, sd = final(group)
        marker = "  < CLUB" if mean < club[0] else ""
        if mean < club[0] and crossing is None:
            crossing = eps
        print(f"  tight epsilon {eps:8g}: {mean:9.1f} ({sd:6.1f}){marker}")
    print("smallest epsilon (of the grids) at which CDP-FCLUB-DC beats CLUB: "
          f"{'none' if crossing is None else f'{crossing:g}'}")


def plot(records: list[dict], out: Path) -> Path:
    plt = pyplot()
    by = groups(records, "epsilon", "calibration")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for cal, style in (("tight", "o-"), ("paper", "s--")):
        cells = sorted((k[1], g) for k, g in by.items()
                       if k[0].startswith("CDP") and k[2] == cal)
        eps = [e for e, _ in cells]
        stats = np.array([final(g) for _, g in cells])
        ax.errorbar(eps, stats[:, 0], yerr=stats[:, 1], fmt=style, capsize=3,
                    label=f"CDP-FCLUB-DC, {cal} calibration")
    for label, color in (("CLUB", "tab:red"), ("FCLUB-DC", "tab:green")):
        mean, sd = final(by[(label, None, None)])
        ax.axhline(mean, linestyle=":", color=color, label=f"{label} (non-private)")
        ax.axhspan(mean - sd, mean + sd, color=color, alpha=0.15)
    ax.set(xscale="log", yscale="log", xlabel="epsilon (delta = 0.1)",
           ylabel=f"final regret, T = {records[0]['horizon']}",
           title="CDP-FCLUB-DC: budget against regret (mean, one sd)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "fclub_regret_vs_epsilon.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_curves(records: list[dict], out: Path) -> Path:
    plt = pyplot()
    by = groups(records, "epsilon", "calibration")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, cal in zip(axes, ("tight", "paper"), strict=True):
        for eps in EPSILONS:
            band(ax, by[("CDP-FCLUB-DC", eps, cal)], "cumulative_regret", f"epsilon = {eps:g}")
        band(ax, by[("CLUB", None, None)], "cumulative_regret", "CLUB", linestyle=":")
        ax.set(title=f"{cal} calibration", xlabel="round", ylabel="cumulative regret")
        ax.legend(fontsize=7)
    fig.tight_layout()
    path = out / "fclub_budget_curves.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--large", type=float, nargs="*", default=LARGE)
    parser.add_argument("--out", type=Path, default=Path("fclub_results"))
    args = parser.parse_args()
    records = run("fclub-budget", args.horizon, args.seeds, algorithms(args.large), args.out,
                  args.workers)
    report(records)
    for path in (plot(records, args.out), plot_curves(records, args.out)):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
