"""CDP-FedC3UCB-H at epsilon in {1, 4, 16} beside the non-private FedC3UCB-H, seed 001's setting.

|U| = 40, J = 10, d = 20, 200 items per round, K = 4, T = 10^6, 3 seeds;
each agent's budget (epsilon, delta = 1e-6) covers one observation (one
round's examined items and click) of that agent, spent by its tree
privatizer (tight calibration by default; --calibration paper for seed 000's
node formula).  Runs are study runs kept under --out; the non-private runs
have the same keys as those of examples/cascade_synthetic.py, so with the
same --out they are reused.

Usage: python examples/cascade_private.py [--horizon 1000000] [--seeds 3]
       [--epsilons 1 4 16] [--calibration tight] [--workers 2] [--out cascade_results]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from privbandit.studies.runner import run_study
from privbandit.studies.spec import study_from_dict

SETTING = {"n_users": 40, "dim": 20, "n_items": 200, "list_len": 4, "n_clusters": 10}
BASE_SEED = 2024  # as in cascade_synthetic.py: same worlds, reusable non-private runs
DELTA = 1e-6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0, 16.0])
    parser.add_argument("--calibration", choices=("tight", "paper"), default="tight")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("cascade_results"))
    args = parser.parse_args()
    spec = study_from_dict({
        "name": "cascade-cdp", "horizon": args.horizon, "seeds": args.seeds,
        "base_seed": BASE_SEED, "max_points": 400, "environment": SETTING,
        "algorithm": [
            {"name": "fedc3ucb-h"},
            {"name": "cdp-fedc3ucb-h", "params": {"delta": DELTA},
             "grid": {"epsilon": args.epsilons, "calibration": [args.calibration]}},
        ],
    })
    records = run_study(spec, args.out, workers=args.workers).records
    rows: dict[str, list[dict]] = {}
    for rec in records:
        eps = rec["run"]["cell"].get("epsilon")
        rows.setdefault("non-private" if eps is None else f"eps = {eps:g}", []).append(rec)
    print(f"\n== CDP-FedC3UCB-H, J = 10, delta = {DELTA:g}, calibration = {args.calibration}; "
          f"mean (sd) over seeds ==")
    print(f"{'budget':12s} {'regret':>20s} {'comm':>14s} {'final cluster err':>18s} {'sigma':>8s}")
    order = ["non-private"] + [f"eps = {e:g}" for e in sorted(args.epsilons)]
    for key in order:
        recs = rows[key]
        reg = np.array([r["final_regret"] for r in recs])
        com = np.array([r["comm"]["rounds"] for r in recs])
        err = np.array([r["cluster_error"][-1] for r in recs])
        sigma = recs[0]["privacy"]["details"].get("sigma")
        sd = reg.std(ddof=1) if reg.size > 1 else 0.0
        sigma_s = f"{sigma:8.2f}" if sigma is not None else f"{'-':>8s}"
        print(f"{key:12s} {reg.mean():12.1f} ({sd:6.1f}) {com.mean():8.1f} ({com.std():4.1f})"
              f" {err.mean():18.3f} {sigma_s}")
    for key in order[1:]:
        spent = [led["epsilon_spent"] for r in rows[key] for led in r["ledgers"]]
        print(f"{key}: {len(spent)} agent ledgers (40 per run), epsilon spent "
              f"{min(spent):.4f}..{max(spent):.4f}, one release each")


if __name__ == "__main__":
    main()
