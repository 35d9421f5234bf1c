"""Federated cascades against going alone and the oracle: the recommended and private entries.

Seed 001's world (|U| = 40 agents, d = 20, 200 fresh items per round, lists
of K = 4), delta = 1e-5, paired seeds (base seed 2024, the worlds of
cascade_synthetic.py).  For each number of clusters J (--clusters, default
10 and 5) and horizon (default T = 131,071 with --seeds 5, and T = 10^6 with
--long-seeds 2):

- FedInd (going alone), `oracle-cascade` (ORACLE: FedInd's agent pooled per
  true cluster, the ceiling) and `fedc3ucb-sets` (recommended: agents alone
  until split/merge proves a set shares preferences); FedC3UCB-H (the
  paper's algorithm) at T = 131,071;
- at J = 10 and T = 131,071, the private entries: `cdp-fedc3ucb-sets` at each
  epsilon of --epsilons (records "displayed"), with records "first" at
  epsilon 4, and at epsilon 10^6 (a measuring device: noise negligible, so
  what remains is lag, estimator and detection); CDP-FedC3UCB-H and the
  guarded CDP-FedC3UCB-H+ at epsilon 4; and two yardsticks run beside the study
  on the same seeds: `KnownClusters` (cdp-fedc3ucb-sets at epsilon 4 told the
  true clusters: what the noise costs with perfect detection) and
  `OneNoisePerCluster` (the same with each cluster's sum carrying one stream's
  noise, as a secure sum with distributed noise would: what paying the noise
  once per cluster could recover).

Prints, per (J, T), each entry's mean (sd) final regret, its ratio to FedInd
with Fieller's 95% interval, the paired difference to FedInd with its t
interval and where it lies (below / no / above 0), FGR = (FedInd - entry) /
(FedInd - oracle) with Fieller's interval, the final cluster error, the
communication (messages), the round at which the detected clusters are first the
true ones (the latest over seeds) and the share of later checkpoints at which they
still are (the worst seed's); then `key: value` lines `<entry>_<figure>_J<J>_T<T>`, entry
`sets` (fedc3ucb-sets), `h` (fedc3ucb-h) or `private_<record>_eps<e>`,
figure `over_fedind`, `vs_fedind` (below / no / above), `fgr` (with `_low`,
`_high`), `clusters_found_at`, `clusters_kept`, `known_clusters_eps4_T<T>`,
`one_noise_eps4_T<T>` (each with `_over_fedind` and its interval),
`detection_cost_eps4_T<T>` and `per_agent_noise_cost_eps4_T<T>` (the entry
minus the yardstick, paired, with `_low`, `_high`), and
`private_<record>_eps<e>_over_sets_J<J>_T<T>` (with its interval).

With --resolutions, first a sweep of fedc3ucb-sets' merge resolution at the
first horizon (--long-seeds seeds; `sweep_r<r>_fgr_J<J>_T<T>` lines).

Usage: python examples/cascade_private.py [--horizons 131071 1000000] [--seeds 5]
       [--long-seeds 2] [--clusters 10 5] [--epsilons 1 4 16 64]
       [--resolutions 0.2 0.25 0.3] [--workers 2] [--out cascade_results] [--smoke]
"""
from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from privbandit.accounting.ledger import Ledger
from privbandit.cascade import ReleasedSetCascade
from privbandit.registry import get_algorithm
from privbandit.runtime import Setup, play_setup, seed_streams
from privbandit.studies.paired import compare, fieller_interval, mean_interval
from privbandit.studies.runner import run_study
from privbandit.studies.spec import study_from_dict
from privbandit.studies.summary import summary_rows

SETTING = {"users": 40, "dim": 20, "items": 200, "list_len": 4}
BASE_SEED = 2024
SHORT, LONG = 131_071, 1_000_000
ALONE, ORACLE, SETS, PAPER = "FedInd", "oracle", "fedc3ucb-sets", "FedC3UCB-H"
NO_NOISE = 1e6  # epsilon of the measuring rung: the noise is negligible there


class KnownClusters(ReleasedSetCascade):
    """A yardstick, NOT an algorithm: cdp-fedc3ucb-sets told the TRUE clusters (the hidden
    ones) instead of detecting them -- the same releases, models and noise, so its regret
    is what the noise costs once detection is perfect."""

    def __init__(self, *args, truth: np.ndarray, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.truth = np.asarray(truth)

    def _detect(self) -> np.ndarray:
        return self.truth


class OneNoisePerCluster(KnownClusters):
    """A yardstick, NOT an algorithm: `KnownClusters` whose cluster sums carry the noise of
    ONE stream, as a secure sum with distributed noise would give them.  Modelled, as the
    ladder of examples/private_frontier.py models it: every agent's stream is calibrated at
    sigma / sqrt(m), m the smallest true cluster's size, so a cluster of m' >= m agents sums
    to a noise of variance (m' / m) sigma**2 (one stream's when the clusters are equal).  An
    agent's own stream alone is then NOT private at the budget (its ledgers are ample):
    only the sums are, which is what the secure sum would release."""

    def __init__(self, *args, truth: np.ndarray, **kwargs) -> None:
        super().__init__(*args, truth=truth, **kwargs)
        smallest = int(np.bincount(np.unique(self.truth, return_inverse=True)[1]).min())
        ample = [Ledger(ledger.unit, 1e12, 0.5, accountant="exact-gaussian")
                 for ledger in self.streams.ledgers]
        self.streams = self.reward_streams(
            sigma=self.streams.streams[0].sigma / math.sqrt(smallest), ledgers=ample)


def known_clusters(records: list[dict], setting: dict, horizon: int, epsilon: float
                   ) -> dict[str, object]:
    """Run the KnownClusters and OneNoisePerCluster rungs on the seeds of the study's
    private entry at `epsilon` and print them against the entry and FedInd (paired)."""
    entry = _final(records, private_label("displayed", epsilon))
    alone = _final(records, ALONE)
    config = {"horizon": horizon, "environment": setting, "epsilon": epsilon}
    known: dict[type, dict[int, float]] = {KnownClusters: {}, OneNoisePerCluster: {}}
    for index in sorted(entry):
        seed = np.random.SeedSequence(BASE_SEED, spawn_key=(index,))
        for cls, regrets in known.items():
            streams = seed_streams(seed)
            built = get_algorithm("cdp-fedc3ucb-sets").setup(config, seed, streams)
            p = built.protocol
            rung = cls(p.dim, p.n_users, p.n_items, p.list_len, horizon, p.plan,
                       detection=p.sets.clustering, truth=built.env.true_clusters())
            regrets[index] = play_setup(Setup(rung, built.env, horizon), streams).total_regret
    tag = f"eps{epsilon:g}_T{horizon}"
    out: dict[str, object] = {}
    for cls, key, what in ((KnownClusters, "known_clusters", "what detecting the clusters costs"),
                           (OneNoisePerCluster, "one_noise", "what per-agent noise costs")):
        regrets = known[cls]
        mean = float(np.mean(list(regrets.values())))
        diff = mean_interval([entry[i] - regrets[i] for i in regrets])
        ratio = fieller_interval([regrets[i] for i in regrets], [alone[i] for i in regrets])
        print(f"{key} (yardstick), epsilon {epsilon:g}: {mean:.1f} "
              f"({np.std(list(regrets.values()), ddof=1):.1f}), {ratio[0]:.3f}x FedInd "
              f"{_interval(ratio[1], ratio[2], '.3f')}; the entry minus it: {diff[0]:+.1f} "
              f"{_interval(diff[1], diff[2], '+.1f')} ({what}, with detection)")
        cost = "detection_cost" if cls is KnownClusters else "per_agent_noise_cost"
        out.update({f"{key}_{tag}": mean, f"{key}_over_fedind_{tag}": ratio[0],
                    f"{key}_over_fedind_low_{tag}": ratio[1],
                    f"{key}_over_fedind_high_{tag}": ratio[2], f"{cost}_{tag}": diff[0],
                    f"{cost}_low_{tag}": diff[1], f"{cost}_high_{tag}": diff[2]})
    return out


def _final(records: list[dict], label: str) -> dict[int, float]:
    return {r["run"]["seed_index"]: r["final_regret"] for r in records
            if r["run"]["label"] == label}


def private_label(record: str, epsilon: float) -> str:
    return f"cdp-sets-{record}-eps{epsilon:g}".replace("e+0", "e")


def algorithms(horizon: int, clusters: int, epsilons: list[float], private: bool) -> list[dict]:
    out = [{"name": "fedind", "label": ALONE}, {"name": "oracle-cascade", "label": ORACLE},
           {"name": "fedc3ucb-sets", "label": SETS}]
    if horizon <= SHORT:
        out.append({"name": "fedc3ucb-h", "label": PAPER})
    if not private:
        return out
    for record, grid in (("displayed", [*epsilons, NO_NOISE]), ("first", [4.0])):
        out += [{"name": "cdp-fedc3ucb-sets", "label": private_label(record, e),
                 "params": {"epsilon": e, "record": record}} for e in grid]
    out += [{"name": "cdp-fedc3ucb-h", "label": "CDP-FedC3UCB-H-eps4", "params": {"epsilon": 4}},
            {"name": "cdp-fedc3ucb-h+", "label": "CDP-FedC3UCB-H+-eps4",
             "params": {"epsilon": 4}}]
    return out


def _interval(low: float, high: float, fmt: str) -> str:
    return (f"[{low:{fmt}}, {high:{fmt}}]" if math.isfinite(low) and math.isfinite(high)
            else "[-inf, inf]")


def _key(label: str) -> str:
    if label == SETS:
        return "sets"
    if label == PAPER:
        return "h"
    return label.lower().replace("cdp-sets-", "private_").replace("-", "_").replace("+", "plus")


def found_at(records: list[dict], label: str) -> tuple[float, float]:
    """(the latest round, over the label's seeds, at which the detected clusters are first
    the true ones -- inf if never --, and the share of the later checkpoints at which
    they still are, the worst seed's)."""
    latest, kept = 0.0, 1.0
    for r in records:
        if r["run"]["label"] != label:
            continue
        error, rounds = np.asarray(r["cluster_error"]), np.asarray(r["cluster_error_rounds"])
        exact = np.flatnonzero(error == 0)
        if exact.size == 0:
            return math.inf, 0.0
        latest = max(latest, float(rounds[exact[0]]))
        kept = min(kept, float(np.mean(error[exact[0]:] == 0)))
    return latest, kept


def figures(records: list[dict], clusters: int, horizon: int) -> dict[str, object]:
    """Print one (J, T) table and return its key figures."""
    rows = {r["label"]: r for r in summary_rows(records)}
    alone, oracle = rows[ALONE], rows[ORACLE]
    tag = f"J{clusters}_T{horizon}"
    print(f"\n== J = {clusters}, T = {horizon:,}, delta = 1e-5, {alone['seeds']} seeds ==")
    print(f"FedInd {alone['regret_mean']:.1f} ({alone['regret_sd']:.1f}), oracle "
          f"{oracle['regret_mean']:.1f} ({oracle['regret_sd']:.1f})")
    print(f"{'entry':26s} {'regret (sd)':>17s} {'/ FedInd [95%]':>24s} "
          f"{'- FedInd [95%]':>27s} {'sig':>5s} {'FGR [95%]':>24s} {'err':>5s} {'comm':>7s} "
          f"{'found at':>9s} {'kept':>5s}")
    out: dict[str, object] = {f"fedind_{tag}": alone["regret_mean"],
                              f"oracle_{tag}": oracle["regret_mean"]}
    for label, row in rows.items():
        if label in (ALONE, ORACLE):
            continue
        (p,) = compare(records, label, ALONE, ORACLE)
        err = row["cluster_error"]
        print(f"{label:26s} {row['regret_mean']:9.1f} ({row['regret_sd']:6.1f}) {p.ratio:6.3f} "
              f"{_interval(p.ratio_low, p.ratio_high, '.3f'):>17} {p.diff:+9.1f} "
              f"{_interval(p.diff_low, p.diff_high, '+.1f'):>17} {p.significant:>5s} "
              f"{p.fgr:+6.0%} {_interval(p.fgr_low, p.fgr_high, '+.0%'):>17} "
              f"{err if err == '' else f'{err:.2f}':>5} {row['comm_messages_mean']:7.0f} "
              f"{found_at(records, label)[0]:9.0f} {found_at(records, label)[1]:5.0%}")
        key = _key(label)
        out.update({f"{key}_over_fedind_{tag}": p.ratio, f"{key}_vs_fedind_{tag}": p.significant,
                    f"{key}_fgr_{tag}": p.fgr, f"{key}_fgr_low_{tag}": p.fgr_low,
                    f"{key}_fgr_high_{tag}": p.fgr_high,
                    f"{key}_clusters_found_at_{tag}": found_at(records, label)[0],
                    f"{key}_clusters_kept_{tag}": found_at(records, label)[1]})
        if key.startswith("private") and SETS in rows:
            (q,) = compare(records, label, SETS)
            out.update({f"{key}_over_sets_{tag}": q.ratio,
                        f"{key}_over_sets_low_{tag}": q.ratio_low,
                        f"{key}_over_sets_high_{tag}": q.ratio_high})
    return out


def resolution_sweep(resolutions: list[float], clusters: int, horizon: int, seeds: int,
                     setting: dict, out: Path, workers: int) -> dict[str, object]:
    """fedc3ucb-sets at each merge resolution beside FedInd and the oracle (paired seeds):
    print and return each one's FGR."""
    spec = study_from_dict({
        "name": f"sweep-J{clusters}-T{horizon}", "horizon": horizon, "seeds": seeds,
        "base_seed": BASE_SEED, "max_points": 300,
        "environment": spec_setting(setting, clusters),
        "algorithm": [{"name": "fedind", "label": ALONE},
                      {"name": "oracle-cascade", "label": ORACLE},
                      {"name": "fedc3ucb-sets", "label": "sets",
                       "grid": {"resolution": resolutions}}]})
    records = run_study(spec, out / spec.name, workers=workers, progress=True).records
    print(f"\n== resolution sweep, J = {clusters}, T = {horizon:,}, {seeds} seeds ==")
    found: dict[str, object] = {}
    for p in compare(records, "sets", ALONE, ORACLE):
        r = dict(p.cell)["resolution"]
        mine = [x["final_regret"] for x in records if x["run"]["label"] == "sets"
                and x["run"]["cell"]["resolution"] == r]
        print(f"resolution {r:g}: {np.mean(mine):.1f} ({np.std(mine, ddof=1):.1f}), "
              f"FGR {p.fgr:+.0%} {_interval(p.fgr_low, p.fgr_high, '+.0%')}")
        found[f"sweep_r{r:g}_fgr_J{clusters}_T{horizon}"] = p.fgr
    return found


def spec_setting(setting: dict, clusters: int) -> dict:
    return {**setting, "clusters": clusters}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizons", type=int, nargs="+", default=[SHORT, LONG])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--long-seeds", type=int, default=2, help="seeds at T >= 10^6")
    parser.add_argument("--clusters", type=int, nargs="+", default=[10, 5])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0, 16.0, 64.0])
    parser.add_argument("--resolutions", type=float, nargs="*", default=[],
                        help="also sweep fedc3ucb-sets' merge resolution (at the first horizon, "
                        "--long-seeds seeds)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("cascade_results"))
    parser.add_argument("--smoke", action="store_true", help="a tiny run (T = 2000, 2 seeds)")
    args = parser.parse_args()
    setting, private_at = dict(SETTING), (10, SHORT)
    if args.smoke:
        args.horizons, args.seeds, args.long_seeds, args.clusters = [2000], 2, 2, [2]
        args.epsilons, args.workers, private_at = [4.0], 1, (2, 2000)
        args.resolutions = [0.3, 0.6]
        setting.update(users=8, dim=5, items=20)
    found: dict[str, object] = {}
    for clusters in args.clusters if args.resolutions else ():
        found.update(resolution_sweep(args.resolutions, clusters, args.horizons[0],
                                      args.long_seeds, setting, args.out, args.workers))
    for clusters in args.clusters:
        for horizon in args.horizons:
            private = (clusters, horizon) == private_at
            spec = study_from_dict({
                "name": f"cascade-J{clusters}-T{horizon}", "horizon": horizon,
                "seeds": args.long_seeds if horizon >= LONG else args.seeds,
                "base_seed": BASE_SEED, "max_points": 300,
                "environment": spec_setting(setting, clusters),
                "algorithm": algorithms(horizon, clusters, args.epsilons, private)})
            records = run_study(spec, args.out / spec.name, workers=args.workers,
                                progress=True).records
            found.update(figures(records, clusters, horizon))
            if private:
                found.update(known_clusters(records, spec_setting(setting, clusters), horizon,
                                            4.0))
    for key, value in found.items():
        print(f"{key}: {value:.4g}" if isinstance(value, float) else f"{key}: {value}")


if __name__ == "__main__":
    main()
