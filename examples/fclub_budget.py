"""Does private federation pay its way?  CDP-FCLUB-DC+ and CDP-FCLUB-DC against going alone.

At delta = 1e-5, the guarded private federation CDP-FCLUB-DC+ (each local
server keeps its users' raw data and acts on the tighter of its own bound and
a private federated one) and the paper's CDP-FCLUB-DC (tree-privatized
uploads) are compared with going alone (CLUB on each local server) and with
non-private FCLUB-DC, at the public code's synthetic setting (d = 10, 20
users in 4 clusters, 5 local servers, 10 items per round), for each horizon
(default: the public code's T = 131,071 and T = 10^6), 5 paired seeds.

Prints, per horizon, the mean (sd) final regret per epsilon, its ratio to
going alone and the final cluster error, then `key: value` lines:
`alone_regret_T<T>`, `guarded_over_alone_max_T<T>` (the largest ratio over
the epsilon grid; target <= 1.05), `guarded_rise_over_sd_T<T>` (the largest
increase of mean regret from one epsilon to a larger one, in units of the
seeds' spread; <= 1 means regret does not rise with epsilon beyond the
spread), `cluster_error_eps8_T<T>` (target <= 0.2 at T = 131,071),
`break_even_epsilon_T<T>` (the smallest epsilon at which CDP-FCLUB-DC+ is
below going alone with the paired 95% interval over seeds excluding zero;
inf: none; targets <= 8 at 131,071 and <= 1 at 10^6) and
`paper_over_alone_eps<e>_T<T>`.  Draws `fclub_break_even.png`.

With `--ratings FILE` (a MovieLens or Yelp rating file, `privbandit.data`)
the world is built from real ratings instead, at the same sizes
(`fclub_common.ratings_world`), and the keys end in `_ratings`.

Usage: python examples/fclub_budget.py [--horizons 131071 1000000] [--seeds 5]
       [--epsilons 0.5 1 2] [--workers 2] [--out fclub_results] [--ratings FILE]
       [--smoke]
"""
from __future__ import annotations

import argparse
from pathlib import Path

from break_even import figures, plot
from fclub_common import ratings_world, run

from privbandit.studies.summary import summary_rows

EPSILONS = {131_071: [0.5, 1, 2, 4, 8, 16], 1_000_000: [0.5, 1, 2]}
PAPER_EPSILONS = {131_071: [1, 8]}  # the paper's algorithm, for reference
GUARDED, ALONE, PAPER = "CDP-FCLUB-DC+", "alone", "CDP-FCLUB-DC"


def algorithms(horizon: int, epsilons: list[float]) -> list[dict]:
    out = [{"name": "club-per-server", "label": ALONE},
           {"name": "cdp-fclub-dc+", "label": GUARDED, "grid": {"epsilon": epsilons}}]
    if horizon in PAPER_EPSILONS:
        out += [{"name": "fclub-dc", "label": "FCLUB-DC"},
                {"name": "cdp-fclub-dc", "label": PAPER,
                 "grid": {"epsilon": PAPER_EPSILONS[horizon]}}]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizons", type=int, nargs="+", default=sorted(EPSILONS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", type=float, nargs="+", default=None,
                        help="the guarded algorithm's grid at every horizon")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("fclub_results"))
    parser.add_argument("--ratings", type=Path, default=None,
                        help="a rating file: a real-data world instead of the synthetic one")
    parser.add_argument("--smoke", action="store_true", help="a tiny run (T = 3000, 2 seeds)")
    args = parser.parse_args()
    world = None if args.ratings is None else ratings_world(args.ratings)
    tag = "" if world is None else "-ratings"
    if args.smoke:
        args.horizons, args.seeds, args.epsilons, args.workers = [3000], 2, [1.0, 8.0], 1
    found: dict[str, float] = {}
    per_horizon = {}
    for horizon in args.horizons:
        eps = args.epsilons or EPSILONS.get(horizon, EPSILONS[131_071])
        records = run(f"fclub-break-even-T{horizon}{tag}", horizon, args.seeds,
                      algorithms(horizon, eps), args.out, args.workers, environment=world)
        per_horizon[horizon] = rows = summary_rows(records, (GUARDED, ALONE))
        found.update(figures(rows, horizon, GUARDED, ALONE, PAPER))
    suffix = tag.replace("-", "_")
    path = args.out / f"fclub_break_even{suffix}.png"
    print(f"wrote {plot(per_horizon, found, path, GUARDED, ALONE)}")
    for key, value in found.items():
        print(f"{key}{suffix}: {value:.4g}" if isinstance(value, float)
              else f"{key}{suffix}: {value}")


if __name__ == "__main__":
    main()
