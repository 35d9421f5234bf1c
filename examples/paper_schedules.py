"""The papers' private algorithms with each release structure, against going alone.

CDP-FCLUB-DC (seed 000's world, the main job's: 20 users, 4 clusters, d = 10,
5 servers) and CDP-FedC3UCB-H (seed 001's: 40 agents, 10 clusters, d = 20,
K = 4) run with the paper's release structure (`schedule = "every-round"`: the
stream steps at every observation and the upload trigger reads each noisy
prefix) and with data-independent batches (`fixed`: horizon // 32 rounds;
`doubling`: epochs from 64 rounds), each record in one release, at delta = 1e-5
and the tree mechanism.
Going alone (CLUB per server; FedInd) is the reference; the guarded
algorithms, which do better, are compared in fclub_budget.py and
cascade_private.py.

Prints a table per family (mean (sd) final regret over the seeds, its ratio
to going alone, the final cluster error), then one `key: value` line per cell:
`<family>_<label>_eps<e>_over_alone`, and `<family>_alone_regret`.

Usage: python examples/paper_schedules.py [--horizon 65536] [--cascade-horizon 20000]
       [--seeds 3] [--epsilons 1 8] [--families fclub cascade] [--workers 2]
       [--out schedule_results] [--smoke]
"""
from __future__ import annotations

import argparse
from pathlib import Path

from privbandit.studies.runner import run_study
from privbandit.studies.spec import study_from_dict
from privbandit.studies.summary import summary_rows

FCLUB_VARIANTS = {
    "every-round": {"schedule": "every-round"},
    "fixed": {"schedule": "fixed"},
    "doubling": {"schedule": "doubling", "batch": 64},
}
CASCADE_VARIANTS = FCLUB_VARIANTS
FAMILIES = {  # family: (private algorithm, going alone, variants, environment)
    "fclub": ("cdp-fclub-dc", "club-per-server", FCLUB_VARIANTS, {}),
    "cascade": ("cdp-fedc3ucb-h", "fedind", CASCADE_VARIANTS, {}),
}


def study(family: str, horizon: int, seeds: int, epsilons: list[float], smoke: bool) -> dict:
    private, alone, variants, env = FAMILIES[family]
    if smoke:
        env = ({"users": 8, "clusters": 2, "dim": 4, "items": 6} if family == "fclub" else
               {"users": 8, "clusters": 2, "dim": 5, "items": 20})
    algorithms = [{"name": alone, "label": "alone"}]
    algorithms += [{"name": private, "label": label, "params": {"delta": 1e-5, **settings},
                    "grid": {"epsilon": epsilons}}
                   for label, settings in variants.items()]
    return study_from_dict({"name": f"{family}-schedules-T{horizon}", "horizon": horizon,
                            "seeds": seeds, "environment": env, "algorithm": algorithms})


def table(family: str, rows: list[dict]) -> dict[str, float]:
    alone = next(r for r in rows if r["label"] == "alone")
    print(f"\n== {family}: final regret mean (sd) over {alone['seeds']} seeds, delta = 1e-5 ==")
    print(f"{'release structure':20s} {'epsilon':>8s} {'regret':>18s} {'/ alone':>8s} "
          f"{'cluster err':>12s}")
    out = {f"{family}_alone_regret": alone["regret_mean"]}
    for r in rows:
        ratio = r["regret_mean"] / alone["regret_mean"]
        err = r["cluster_error"]
        print(f"{r['label']:20s} {str(r['epsilon']):>8s} {r['regret_mean']:9.1f} "
              f"({r['regret_sd']:6.1f}) {ratio:8.3f} {err if err == '' else f'{err:.2f}':>12}")
        if r["label"] != "alone":
            key = r["label"].replace("-", "_").replace("+", "_")
            out[f"{family}_{key}_eps{r['epsilon']:g}_over_alone"] = ratio
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=65_536, help="CDP-FCLUB-DC's")
    parser.add_argument("--cascade-horizon", type=int, default=20_000)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 8.0])
    parser.add_argument("--families", nargs="+", choices=sorted(FAMILIES),
                        default=list(FAMILIES))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("schedule_results"))
    parser.add_argument("--smoke", action="store_true", help="a tiny run (T = 600, 2 seeds)")
    args = parser.parse_args()
    if args.smoke:
        args.horizon = args.cascade_horizon = 600
        args.seeds, args.epsilons, args.workers = 2, [8.0], 1
    found: dict[str, float] = {}
    horizons = {"fclub": args.horizon, "cascade": args.cascade_horizon}
    for family in args.families:
        horizon = horizons[family]
        spec = study(family, horizon, args.seeds, args.epsilons, args.smoke)
        records = run_study(spec, args.out / spec.name, workers=args.workers,
                            progress=True).records
        found.update(table(family, summary_rows(records)))
    for key, value in found.items():
        print(f"{key}: {value:.4g}")


if __name__ == "__main__":
    main()
