"""Should the guarded federation share more, now that a shared round costs only its reward noise?

CDP-FCLUB-DC+ acts on each server's raw data on local rounds and puts a public
coin's share of rounds (`rate`) on the shared track, where the billboard
chooses the item from released data and the record enters the user's
reward-only stream. By default 1% of rounds are shared, at most 16 per user
unless its released cluster spans servers (`cap`). This study raises the
rate, with no cap, up to every round shared (rate 1: raw data never chooses
an action, so it adds nothing), and sets it beside CDP-FCLUB-DC (every
action from released statistics, its own detection), going alone and
FCLUB-DC.

The world is the main job's (`privbandit tradeoff`: seed 000's synthetic
world with 40 users in 4 clusters on 5 servers, d = 10, 10 items a round).
The defaults are T = 65,536, 3 paired seeds, δ = 1e-5 and ε ∈ {4, 16}.

Prints, per entry and ε: the mean (sd) final regret, the ratio to going
alone with Fieller's 95% interval over paired seeds, and the final cluster
error. Then one `key: value` line per figure: `<label>_over_alone_eps<e>`,
and `best_guarded_rate_eps<e>`, the rate whose mean regret is lowest.

    python examples/guarded_sharing.py [--horizon 65536] [--seeds 3]
        [--rates 0.1 0.5 1] [--epsilons 4 16] [--workers 2] [--out sharing_results] [--smoke]
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

from fclub_common import run

from privbandit.studies.paired import compare
from privbandit.studies.summary import summary_rows

WORLD = {"dim": 10, "users": 40, "clusters": 4, "servers": 5, "items": 10}
ALONE, FED, RELEASED, DEFAULT = "alone", "FCLUB-DC", "CDP-FCLUB-DC", "guarded-default"


def algorithms(rates: list[float], epsilons: list[float]) -> list[dict]:
    grid = {"epsilon": epsilons}
    out = [{"name": "club-per-server", "label": ALONE}, {"name": "fclub-dc", "label": FED},
           {"name": "cdp-fclub-dc", "label": RELEASED, "grid": grid},
           {"name": "cdp-fclub-dc+", "label": DEFAULT, "grid": grid}]
    out += [{"name": "cdp-fclub-dc+", "label": f"guarded-rate-{r:g}", "grid": grid,
             "params": {"rate": r, "cap": 10**9}} for r in rates]
    return out


def figures(records: list[dict]) -> dict[str, float]:
    rows = {(r["label"], r["epsilon"]): r for r in summary_rows(records)}
    alone, fed = rows[(ALONE, "")], rows[(FED, "")]
    print(f"alone {alone['regret_mean']:.1f} ({alone['regret_sd']:.1f}), FCLUB-DC "
          f"{fed['regret_mean']:.1f} ({fed['regret_sd']:.1f})")
    print("entry, epsilon, regret (sd), / alone [95% interval], cluster error")
    out: dict[str, float] = {}
    labels = sorted({label for label, eps in rows if eps != ""})
    for label in labels:
        for p in compare(records, label, ALONE):
            r = rows[(label, p.epsilon)]
            low, high = (f"{v:.3f}" if math.isfinite(v) else "inf" for v in
                         (p.ratio_low, p.ratio_high))
            print(f"  {label:20s} {p.epsilon:5g} {r['regret_mean']:9.1f} "
                  f"({r['regret_sd']:6.1f}) {p.ratio:6.3f} [{low}, {high}] "
                  f"{r['cluster_error']}")
            out[f"{label}_over_alone_eps{p.epsilon:g}"] = p.ratio
    guarded = [label for label in labels if label.startswith("guarded")]
    for eps in sorted({eps for _, eps in rows if eps != ""}):
        best = min(guarded, key=lambda label: rows[(label, eps)]["regret_mean"])
        out[f"best_guarded_rate_eps{eps:g}"] = (0.01 if best == DEFAULT
                                                else float(best.rsplit("-", 1)[1]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=65_536)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rates", type=float, nargs="+", default=[0.1, 0.5, 1.0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[4.0, 16.0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("sharing_results"))
    parser.add_argument("--smoke", action="store_true", help="a tiny run (T = 1000, 2 seeds)")
    args = parser.parse_args()
    if args.smoke:
        args.horizon, args.seeds, args.rates, args.epsilons, args.workers = (
            1000, 2, [0.5], [16.0], 1)
    records = run(f"guarded-sharing-T{args.horizon}", args.horizon, args.seeds,
                  algorithms(args.rates, args.epsilons), args.out, args.workers,
                  environment=WORLD)
    for key, value in figures(records).items():
        print(f"{key}: {value:.4g}")


if __name__ == "__main__":
    main()
