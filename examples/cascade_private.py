"""Private federated cascading bandits against agents that go alone (FedInd), seed 001's setting.

At delta = 1e-5, the guarded CDP-FedC3UCB-H+ (each agent learns from its own
data as FedInd does and acts on the tighter of its own bound and a private
federated one built from its cluster mates' noisy continual releases) is
compared with FedInd, and at T = 131,071 also with the paper-style
CDP-FedC3UCB-H (tree-privatized uploads at the paper's trigger times) and
non-private FedC3UCB-H, on
|U| = 40 agents in J = 10 clusters, d = 20, 200 items per round, K = 4, for
each horizon (default: 131,071 and 10^6), 5 paired seeds.

Prints, per horizon, mean (sd) final regret per epsilon, its ratio to FedInd
and the final cluster error, then `key: value` lines:
`fedind_regret_T<T>`, `guarded_over_fedind_max_T<T>` (target <= 1 at every
epsilon >= 0.5), `guarded_rise_over_sd_T<T>`, `break_even_epsilon_T<T>` (the
smallest epsilon significantly below FedInd, paired over seeds; inf: none) and
`paper_over_fedind_eps<e>_T<T>`, and where FedC3UCB-H ran,
`<guarded|paper>_over_fedc3ucb_h_eps<e>_T<T>`.  Draws `cascade_break_even.png`.

Usage: python examples/cascade_private.py [--horizons 131071 1000000] [--seeds 5]
       [--epsilons 0.5 1 4] [--workers 2] [--out cascade_results] [--smoke]
"""
from __future__ import annotations

import argparse
from pathlib import Path

from break_even import figures, plot

from privbandit.studies.runner import run_study
from privbandit.studies.spec import study_from_dict
from privbandit.studies.summary import summary_rows

SETTING = {"users": 40, "dim": 20, "items": 200, "list_len": 4, "clusters": 10}
BASE_SEED = 2024  # as in cascade_synthetic.py: the same worlds
EPSILONS = {131_071: [0.5, 1, 4, 16], 1_000_000: [0.5, 1, 4]}
PAPER_EPSILONS = {131_071: [1, 4, 16]}
GUARDED, FEDIND, PAPER, FED = "CDP-FedC3UCB-H+", "FedInd", "CDP-FedC3UCB-H", "FedC3UCB-H"


def algorithms(horizon: int, epsilons: list[float]) -> list[dict]:
    out = [{"name": "fedind", "label": FEDIND},
           {"name": "cdp-fedc3ucb-h+", "label": GUARDED, "grid": {"epsilon": epsilons}}]
    if horizon in PAPER_EPSILONS:
        out.append({"name": "cdp-fedc3ucb-h", "label": PAPER,
                    "grid": {"epsilon": PAPER_EPSILONS[horizon]}})
        out.append({"name": "fedc3ucb-h", "label": FED})
    return out


def over_federated(rows: list[dict], horizon: int) -> dict[str, float]:
    """Each private row's mean regret over non-private FedC3UCB-H's (none when it did not
    run at this horizon)."""
    fed = next((r["regret_mean"] for r in rows if r["label"] == FED), None)
    if fed is None:
        return {}
    return {f"{key}_over_fedc3ucb_h_eps{r['epsilon']:g}_T{horizon}": r["regret_mean"] / fed
            for key, label in (("guarded", GUARDED), ("paper", PAPER))
            for r in rows if r["label"] == label}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizons", type=int, nargs="+", default=sorted(EPSILONS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epsilons", type=float, nargs="+", default=None,
                        help="the guarded algorithm's grid at every horizon")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("cascade_results"))
    parser.add_argument("--smoke", action="store_true", help="a tiny run (T = 2000, 2 seeds)")
    args = parser.parse_args()
    setting = dict(SETTING)
    if args.smoke:
        args.horizons, args.seeds, args.epsilons, args.workers = [2000], 2, [1.0, 8.0], 1
        setting.update(users=8, clusters=2, dim=5, items=20)
    found: dict[str, float] = {}
    per_horizon = {}
    for horizon in args.horizons:
        eps = args.epsilons or EPSILONS.get(horizon, EPSILONS[131_071])
        spec = study_from_dict({
            "name": f"cascade-break-even-T{horizon}", "horizon": horizon, "seeds": args.seeds,
            "base_seed": BASE_SEED, "max_points": 300, "environment": setting,
            "algorithm": algorithms(horizon, eps)})
        records = run_study(spec, args.out / spec.name, workers=args.workers,
                            progress=True).records
        per_horizon[horizon] = rows = summary_rows(records, (GUARDED, FEDIND))
        found.update(figures(rows, horizon, GUARDED, FEDIND, PAPER))
        found.update(over_federated(rows, horizon))
    path = args.out / "cascade_break_even.png"
    print(f"wrote {plot(per_horizon, found, path, GUARDED, FEDIND)}")
    for key, value in found.items():
        print(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}")


if __name__ == "__main__":
    main()
