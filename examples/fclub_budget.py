"""Does private federation pay its way?  The private FCLUB entries against going alone and FCLUB-DC.

At delta = 1e-5 and the public code's synthetic setting (d = 10, 20 users in 4
clusters, 5 local servers, 10 items per round), for each horizon (default: the
public code's T = 131,071, 5 paired seeds, and T = 10^6, one seed):

- CDP-FCLUB-DC ("cdp-fclub-dc"), which acts on released statistics only:
  every user's record enters the user's reward-only stream (exact public Gram
  matrix, noisy reward moments) released on the geometric schedule;
- CDP-FCLUB-DC+ ("cdp-fclub-dc+"), the guarded federation (each server acts on
  its own raw data on local rounds, never released; shared rounds are chosen
  from released data and released reward-only);
- going alone (CLUB on each local server) and non-private FCLUB-DC.

Prints, per horizon and private entry, the mean (sd) final regret per epsilon,
its ratio to FCLUB-DC with Fieller's 95% interval over paired seeds, the
paired difference to going alone, and FGR = (alone - private) / (alone -
FCLUB-DC), the federation gain recovered, with its interval; then `key:
value` lines: `<entry>_over_fclub_dc_eps<e>_T<T>`, `<entry>_fgr_eps<e>_T<T>`,
`<entry>_vs_alone_eps<e>_T<T>` (below / no / above: where the paired interval
of private - alone lies) and `<entry>_break_even_epsilon_T<T>` (the smallest
epsilon significantly below going alone; inf: none), with entry `released`
or `guarded`.  Draws `fclub_budget.png` (final regret against epsilon).

Usage: python examples/fclub_budget.py [--horizons 131071 1000000] [--seeds 5]
       [--long-seeds 1] [--epsilons 1 4 16 64] [--workers 2] [--out fclub_results]
       [--smoke]
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from fclub_common import pyplot, run

from privbandit.studies.paired import break_even, compare
from privbandit.studies.summary import summary_rows

EPSILONS = {131_071: [1, 4, 16, 64], 1_000_000: [1, 4]}
ALONE, FED = "alone", "FCLUB-DC"
ENTRIES = {"released": ("cdp-fclub-dc", "CDP-FCLUB-DC"),
           "guarded": ("cdp-fclub-dc+", "CDP-FCLUB-DC+")}
LONG = 1_000_000  # from this horizon on, --long-seeds seeds


def algorithms(epsilons: list[float]) -> list[dict]:
    out = [{"name": "club-per-server", "label": ALONE}, {"name": "fclub-dc", "label": FED}]
    out += [{"name": name, "label": label, "grid": {"epsilon": epsilons}}
            for name, label in ENTRIES.values()]
    return out


def _interval(low: float, high: float, fmt: str) -> str:
    return f"[{low:{fmt}}, {high:{fmt}}]" if math.isfinite(low) and math.isfinite(high) else \
        "[-inf, inf]"


def figures(records: list[dict], horizon: int) -> dict[str, object]:
    """Print one horizon's tables and return its key figures."""
    rows = summary_rows(records)
    mean = {(r["label"], r["epsilon"]): r for r in rows}
    alone, fed = mean[(ALONE, "")], mean[(FED, "")]
    print(f"\n== T = {horizon:,}, delta = 1e-5, {alone['seeds']} seeds ==")
    print(f"alone {alone['regret_mean']:.1f} ({alone['regret_sd']:.1f}), FCLUB-DC "
          f"{fed['regret_mean']:.1f} ({fed['regret_sd']:.1f})")
    out: dict[str, object] = {}
    for key, (_, label) in ENTRIES.items():
        over_fed = {p.epsilon: p for p in compare(records, label, FED)}
        paired = compare(records, label, ALONE, FED)
        print(f"{label}: epsilon, regret (sd), / FCLUB-DC [interval], private - alone "
              "[interval], FGR [interval], significant, cluster error")
        for p in paired:
            r, q = mean[(label, p.epsilon)], over_fed[p.epsilon]
            print(f"  {p.epsilon:6g} {r['regret_mean']:9.1f} ({r['regret_sd']:6.1f}) "
                  f"{q.ratio:6.3f} {_interval(q.ratio_low, q.ratio_high, '.3f'):>18} "
                  f"{p.diff:+9.1f} {_interval(p.diff_low, p.diff_high, '+.1f'):>20} "
                  f"{p.fgr:+7.0%} {_interval(p.fgr_low, p.fgr_high, '+.0%'):>18} "
                  f"{p.significant:>6} {r['cluster_error']}")
            tag = f"eps{p.epsilon:g}_T{horizon}"
            out[f"{key}_over_fclub_dc_{tag}"] = q.ratio
            out[f"{key}_fgr_{tag}"] = p.fgr
            out[f"{key}_vs_alone_{tag}"] = p.significant
        out[f"{key}_break_even_epsilon_T{horizon}"] = break_even(paired)
    return out


def plot(per_horizon: dict[int, list[dict]], path: Path) -> Path:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(per_horizon), figsize=(5.5 * len(per_horizon), 4),
                             squeeze=False)
    for ax, (horizon, records) in zip(axes[0], per_horizon.items(), strict=True):
        rows = summary_rows(records)
        for label, style in ((ALONE, "--"), (FED, ":")):
            r = next(r for r in rows if r["label"] == label)
            ax.axhline(r["regret_mean"], linestyle=style, color="gray", label=label)
        for _, label in ENTRIES.values():
            mine = sorted((r for r in rows if r["label"] == label), key=lambda r: r["epsilon"])
            ax.errorbar([r["epsilon"] for r in mine], [r["regret_mean"] for r in mine],
                        yerr=[r["regret_sd"] for r in mine], marker="o", capsize=3, label=label)
        ax.set(xscale="log", xlabel="epsilon (delta = 1e-5)", ylabel="final regret",
               title=f"T = {horizon:,}")
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizons", type=int, nargs="+", default=sorted(EPSILONS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--long-seeds", type=int, default=1,
                        help=f"seeds at horizons of {LONG:,} rounds or more")
    parser.add_argument("--epsilons", type=float, nargs="+", default=None,
                        help="the private entries' grid at every horizon")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("fclub_results"))
    parser.add_argument("--smoke", action="store_true", help="a tiny run (T = 2000, 2 seeds)")
    args = parser.parse_args()
    if args.smoke:
        args.horizons, args.seeds, args.epsilons, args.workers = [2000], 2, [1.0, 64.0], 1
    found: dict[str, object] = {}
    per_horizon = {}
    for horizon in args.horizons:
        eps = args.epsilons or EPSILONS.get(horizon, EPSILONS[131_071])
        seeds = args.long_seeds if horizon >= LONG else args.seeds
        records = run(f"fclub-budget-T{horizon}", horizon, seeds, algorithms(eps), args.out,
                      args.workers)
        per_horizon[horizon] = records
        found.update(figures(records, horizon))
    print(f"wrote {plot(per_horizon, args.out / 'fclub_budget.png')}")
    for key, value in found.items():
        print(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}")


if __name__ == "__main__":
    main()
