"""Federation at population scale: where FCLUB-DC collapses and why, the set-based
detection that holds, and the oracle ceiling beside them, in one run.

World: seed 000's synthetic setting (d = 10, 4 clusters of equal size, 10
fresh items per round, uniform arrivals) with more users and servers.  Every
point runs, on the same paired seeds (same seed: same world and round stream
for every algorithm, `runtime.seed_streams`):

- alone: "club-per-server" (CLUB on each server, no federation);
- the oracle: "oracle-clusters" (LinUCB pooled per TRUE cluster across all
  servers: it reads the hidden clusters -- a ceiling, not an algorithm);
- "fclub-dc" (the paper's FCLUB-DC, its defaults);
- "fclub-dc-sets" (FCLUB-DC's sharing with split/merge detection over sets:
  the federation recommended here).

Parts:

- diagnosis (why FCLUB-DC collapses), one seed at 200 users on 20 servers:
  at every phase of FCLUB-DC, how pure the servers' local clusters are
  (eq. 3) and how much the global merge (eq. 4, connected components) mixes,
  with the number of eq. 4 links between local clusters of different true
  clusters; and central CLUB's graph over the same 200 users: until when it
  mixes true clusters, the edges left between them, how many components it
  ends with, and its regret over going alone's;
- headline: 200 users, 20 servers, T = --horizon, --seeds paired seeds (the
  ratios to going alone and to the oracle, with their intervals);
- sweep: users x servers (servers <= users), at fixed T (--horizon) and at
  fixed rounds per user (T = --rounds-per-user x users); per point the ratio
  of each algorithm's mean regret to going alone, with Fieller's 95%
  interval over the paired seeds (`studies.paired.fieller_interval`); the
  plot (--plot) draws them;
- rate: rounds per CPU second of "fclub-dc-sets" at 1,000 users and at 20
  users on 5 servers (and at 1,000 users on 50 servers), same T
  (--rate-rounds), the median of --repeats alternating repeats.

Finished points are kept in --out (results.json) and skipped when the
script runs again with the same settings.

Usage: python bench/bench_population.py [--seeds 3] [--horizon 100000]
       [--rounds-per-user 250] [--users 20,50,100,200,500,1000] [--servers 5,20,50]
       [--rate-rounds 50000] [--repeats 3] [--out population_results]
       [--plot population_results/population_sweep.png] [--smoke]
(--smoke: every part at a tiny size, seconds; the tests run it.)
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path

import numpy as np

from privbandit.clustering.phases import ridge_estimates
from privbandit.fclub.algorithm import FederatedClub
from privbandit.kernels import club_confidence, cluster_mixing_rate
from privbandit.registry import get_algorithm
from privbandit.runtime import Setup, play_setup, seed_int, seed_streams
from privbandit.studies.paired import fieller_interval

ALONE, ORACLE, PAPER, SETS = "club-per-server", "oracle-clusters", "fclub-dc", "fclub-dc-sets"
ALGORITHMS = (ALONE, ORACLE, PAPER, SETS)
LABELS = {ALONE: "alone (CLUB per server)", ORACLE: "oracle (reads true clusters)",
          PAPER: "FCLUB-DC", SETS: "FCLUB-DC-sets"}
WORLD = {"setting": "seed000", "dim": 10, "clusters": 4, "items": 10}
BASE_SEED = 38


def seeds_of(count: int) -> list[np.random.SeedSequence]:
    """The paired seeds: children of BASE_SEED by index, as a study derives them."""
    return [np.random.SeedSequence(BASE_SEED, spawn_key=(i,)) for i in range(count)]


def config(name: str, users: int, servers: int, horizon: int) -> dict:
    """`name`'s defaults in seed 000's world with `users` users on `servers` servers."""
    entry = get_algorithm(name)
    return {**entry.defaults, "horizon": horizon,
            "environment": {**WORLD, "users": users, "servers": servers}}


class Results:
    """Final regrets by (algorithm, users, servers, horizon, seeds), kept in a JSON file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = json.loads(path.read_text()) if path.exists() else {}

    def regrets(self, name: str, users: int, servers: int, horizon: int, seeds: int
                ) -> np.ndarray:
        key = f"{name}/{users}u/{servers}s/T{horizon}/{seeds}seeds"
        if key not in self.data:
            start = time.perf_counter()
            runs = get_algorithm(name).run_seeds(config(name, users, servers, horizon),
                                                 seeds_of(seeds))
            self.data[key] = [r.total_regret for r in runs]
            print(f"  {key}: {np.mean(self.data[key]):9.1f} "
                  f"({time.perf_counter() - start:5.1f} s)", flush=True)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.data, indent=1))
        return np.asarray(self.data[key])

    def point(self, users: int, servers: int, horizon: int, seeds: int) -> dict[str, dict]:
        """Each algorithm's regrets and its ratio to going alone (Fieller's interval)."""
        found = {name: self.regrets(name, users, servers, horizon, seeds)
                 for name in ALGORITHMS}
        out = {}
        for name, values in found.items():
            ratio, low, high = fieller_interval(values, found[ALONE])
            out[name] = {"regret": float(values.mean()), "ratio": ratio, "low": low,
                         "high": high}
        oracle = fieller_interval(found[SETS], found[ORACLE])
        out[SETS]["over_oracle"] = oracle
        return out


# -- diagnosis: why FCLUB-DC collapses ------------------------------------------------------
class MeasuredFederation(FederatedClub):
    """FCLUB-DC that records, at every phase, how pure its local clusters are and what the
    global merge (eq. 4) does with them (a measurement of this script, not an algorithm)."""

    truth: np.ndarray

    def _local_clusters(self):
        servers, members = super()._local_clusters()
        self._members = members
        return servers, members

    def _merge(self, merge):
        labels = super()._merge(merge)
        stats, counts, reg = merge
        d = self.config.dim
        theta = ridge_estimates(stats[:, :d, :d], stats[:, :d, d], reg)
        conf = club_confidence(counts)
        gaps = np.linalg.norm(theta[:, None, :] - theta[None, :, :], axis=-1)
        linked = np.triu(gaps < self.config.alpha2 * (conf[:, None] + conf[None, :]), 1)
        major = np.array([np.bincount(self.truth[m]).argmax() for m in self._members])
        wrong = linked & (major[:, None] != major[None, :])
        local = np.empty(self.truth.size, dtype=np.int64)
        merged = np.empty(self.truth.size, dtype=np.int64)
        for c, users in enumerate(self._members):
            local[users], merged[users] = c, labels[c]
        a, b = np.nonzero(wrong)
        smaller = np.minimum(counts[a], counts[b])
        self.phases.append({
            "phase": self._phase, "local_clusters": len(self._members),
            "local_mixing": cluster_mixing_rate(self.truth, local),
            "global_clusters": int(labels.max()) + 1,
            "global_mixing": cluster_mixing_rate(self.truth, merged),
            "wrong_links": int(wrong.sum()), "links": int(linked.sum()),
            "wrong_link_smaller_count": float(np.median(smaller)) if smaller.size else 0.0,
            "median_count": float(np.median(counts))})
        return labels


def diagnose(users: int, servers: int, horizon: int) -> dict[str, float]:
    """FCLUB-DC's phases and central CLUB's graph at the end, one seed (the first)."""
    seed = seeds_of(1)[0]
    streams = seed_streams(seed)
    setup = get_algorithm(PAPER).setup(config(PAPER, users, servers, horizon), seed, streams)
    policy = MeasuredFederation(setup.protocol.config, name=PAPER)
    policy.truth, policy.phases = setup.env.true_clusters(), []
    result = play_setup(Setup(policy, setup.env, horizon), streams, seed_int(seed))
    print(f"\n== why FCLUB-DC collapses: {users} users, {servers} servers, T = {horizon}, "
          f"one seed (regret {result.total_regret:.0f}) ==")
    print("phase  local clusters  local mixing  eq.4 links (between true clusters)  "
          "global clusters  global mixing  median count (of a wrong link's smaller side)")
    for p in policy.phases:
        print(f"{p['phase']:5d}  {p['local_clusters']:14d}  {p['local_mixing']:12.3f}  "
              f"{p['links']:8d} ({p['wrong_links']:6d})  {p['global_clusters']:24d}  "
              f"{p['global_mixing']:13.3f}  {p['median_count']:8.0f} "
              f"({p['wrong_link_smaller_count']:.0f})")
    last = policy.phases[-1]
    central = get_algorithm("club")
    club_setup = central.setup({**central.defaults, "horizon": horizon,
                                "environment": {**WORLD, "users": users}}, seed, streams)
    club = play_setup(club_setup, seed_streams(seed), seed_int(seed))
    truth = club_setup.env.true_clusters()
    graph = club_setup.protocol.graph
    cross = int(np.triu(graph.adjacency & (truth[:, None] != truth[None, :]), 1).sum())
    mixed = np.flatnonzero(club.cluster_mixing > 0)
    until = int(club.cluster_error_rounds[mixed[-1]]) + 1 if mixed.size else 0
    print(f"central CLUB over the {users} users: regret {club.total_regret:.0f}; its graph "
          f"mixes true clusters until round {until} (mixing "
          f"{club.cluster_mixing[mixed[0]] if mixed.size else 0:.3f} at first), "
          f"{cross} edges left between true clusters at the end, final error "
          f"{club.cluster_error[-1]:.3f} in {graph.n_components} components (true: "
          f"{np.unique(truth).size})")
    return {
        f"fclub_dc_local_mixing_max_{users}u_{servers}s":
            max(p["local_mixing"] for p in policy.phases),
        f"fclub_dc_global_mixing_final_{users}u_{servers}s": last["global_mixing"],
        f"fclub_dc_local_clusters_final_{users}u_{servers}s": last["local_clusters"],
        f"fclub_dc_wrong_links_final_{users}u_{servers}s": last["wrong_links"],
        f"fclub_dc_wrong_link_share_final_{users}u_{servers}s":
            last["wrong_links"] / max(last["links"], 1),
        f"club_central_mixing_final_{users}u": float(club.cluster_mixing[-1]),
        f"club_central_rounds_mixed_{users}u": until,
        f"club_central_components_final_{users}u": graph.n_components,
        f"club_central_over_alone_{users}u_{servers}s_seed0": club.total_regret / float(
            get_algorithm(ALONE).run(config(ALONE, users, servers, horizon), seed).total_regret),
    }


# -- headline and sweep -----------------------------------------------------------------------
def headline(results: Results, users: int, servers: int, horizon: int, seeds: int
             ) -> dict[str, float]:
    point = results.point(users, servers, horizon, seeds)
    print(f"\n== {users} users, {servers} servers, T = {horizon}, {seeds} paired seeds "
          f"(mean regret; ratio to alone, 95% interval) ==")
    for name in ALGORITHMS:
        p = point[name]
        print(f"{LABELS[name]:30s} {p['regret']:9.1f}  {p['ratio']:6.3f} "
              f"[{p['low']:.3f}, {p['high']:.3f}]")
    over = point[SETS]["over_oracle"]
    print(f"FCLUB-DC-sets / oracle: {over[0]:.3f} [{over[1]:.3f}, {over[2]:.3f}]")
    at = f"{users}u_{servers}s"
    return {f"fed_over_alone_{at}": point[SETS]["ratio"],
            f"fed_over_alone_{at}_high": point[SETS]["high"],
            f"fed_over_oracle_{at}": over[0], f"fed_over_oracle_{at}_high": over[2],
            f"fclub_dc_over_alone_{at}": point[PAPER]["ratio"],
            f"oracle_over_alone_{at}": point[ORACLE]["ratio"]}


def sweep(results: Results, users: list[int], servers: list[int], horizon: int,
          per_user: int, seeds: int, clusters: int) -> tuple[dict[str, float], list[dict]]:
    rows = []
    for regime in ("fixed T", "fixed rounds per user"):
        print(f"\n== sweep, {regime} ({seeds} paired seeds; mean regret / alone, 95% "
              f"interval) ==")
        print(f"{'users':>5s} {'servers':>7s} {'T':>7s}  " + "  ".join(
            f"{LABELS[n]:>26s}" for n in ALGORITHMS[1:]))
        for n in users:
            for s in (s for s in servers if s <= n):
                t = horizon if regime == "fixed T" else per_user * n
                point = results.point(n, s, t, seeds)
                rows.append({"regime": regime, "users": n, "servers": s, "horizon": t,
                             **{name: point[name] for name in ALGORITHMS}})
                print(f"{n:5d} {s:7d} {t:7d}  " + "  ".join(
                    f"{point[m]['ratio']:7.3f} [{point[m]['low']:6.3f}, {point[m]['high']:6.3f}]"
                    for m in ALGORITHMS[1:]), flush=True)
    worst = max(rows, key=lambda r: r[SETS]["ratio"])
    big = [r for r in rows if r["users"] // clusters >= 40]
    worse = [r for r in rows if r[SETS]["low"] > 1.05]
    print(f"worst FCLUB-DC-sets point: {worst['users']} users, {worst['servers']} servers, "
          f"T = {worst['horizon']} ({worst['regime']})")
    figures = {"worst_fed_over_alone_sweep": worst[SETS]["ratio"],
               "worst_fed_over_alone_sweep_low": worst[SETS]["low"],
               "points_fed_significantly_worse_than_alone_by_5pct": len(worse),
               "worst_fclub_dc_over_alone_sweep": max(r[PAPER]["ratio"] for r in rows),
               "points_in_sweep": len(rows)}
    if big:
        figures["worst_fed_over_alone_40plus_per_cluster"] = max(r[SETS]["ratio"] for r in big)
    return figures, rows


def plot(rows: list[dict], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    regimes = ("fixed T", "fixed rounds per user")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    colours = {ORACLE: "tab:green", PAPER: "tab:red", SETS: "tab:blue"}
    styles = dict(zip(sorted({r["servers"] for r in rows}), ("-", "--", ":", "-.", (0, (1, 4))),
                      strict=False))
    for ax, regime in zip(axes, regimes, strict=True):
        mine = [r for r in rows if r["regime"] == regime]
        for name in (PAPER, SETS, ORACLE):
            for servers, style in styles.items():
                pts = sorted((r for r in mine if r["servers"] == servers),
                             key=lambda r: r["users"])
                if not pts:
                    continue
                x = [r["users"] for r in pts]
                y = np.array([r[name]["ratio"] for r in pts])
                low = np.array([r[name]["low"] for r in pts])
                high = np.array([r[name]["high"] for r in pts])
                err = np.vstack((y - np.where(np.isfinite(low), low, y),
                                 np.where(np.isfinite(high), high, y) - y))
                ax.errorbar(x, y, yerr=err, color=colours[name], linestyle=style, marker="o",
                            markersize=3, capsize=2,
                            label=f"{LABELS[name]}, {servers} servers")
        ax.axhline(1.0, color="black", linewidth=0.8)
        horizon = mine[0]["horizon"] if regime == "fixed T" else None
        ax.set(xscale="log", yscale="log", xlabel="users",
               title=f"{regime}" + (f" (T = {horizon:,})" if horizon else
                                    f" (T = {mine[0]['horizon'] // mine[0]['users']} x users)"))
    axes[0].set_ylabel("regret / going alone (95% interval)")
    axes[1].legend(fontsize=7, ncol=1, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("seed 000's world with more users and servers: below 1, federation pays")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# -- rate -------------------------------------------------------------------------------------
def rate(rounds: int, repeats: int, small: int, large: int, servers: int,
         many_servers: int) -> dict[str, float]:
    """Rounds per CPU second of the recommended federation: `large` against `small` users
    on `servers` servers (and `large` on `many_servers`), alternating, medians."""
    cells = {"small": (small, servers), "large": (large, servers),
             "large_many": (large, many_servers)}
    seconds: dict[str, list[float]] = {k: [] for k in cells}
    entry = get_algorithm(SETS)
    for _ in range(repeats):
        for key, (users, s) in cells.items():
            start = time.process_time()
            entry.run(config(SETS, users, s, rounds), seeds_of(1)[0])
            seconds[key].append(time.process_time() - start)
    per = {k: rounds / statistics.median(v) for k, v in seconds.items()}
    print(f"\n== rate of FCLUB-DC-sets, T = {rounds}, median of {repeats}: "
          + ", ".join(f"{cells[k][0]} users on {cells[k][1]} servers {v:,.0f} rounds/CPU s"
                      for k, v in per.items()))
    return {f"rate_{large}u_over_{small}u": per["large"] / per["small"],
            f"rate_{large}u_{many_servers}s_over_{small}u_{servers}s":
                per["large_many"] / per["small"],
            f"rounds_per_cpu_second_{small}u_{servers}s": per["small"],
            f"rounds_per_cpu_second_{large}u_{servers}s": per["large"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--horizon", type=int, default=100_000)
    parser.add_argument("--rounds-per-user", type=int, default=250)
    parser.add_argument("--users", default="20,50,100,200,500,1000")
    parser.add_argument("--servers", default="5,20,50")
    parser.add_argument("--rate-rounds", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("population_results"))
    parser.add_argument("--plot", type=Path, default=None)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    big, small, few, many, focus = 1000, 20, 5, 50, (200, 20)
    if args.smoke:
        args.seeds, args.horizon, args.rounds_per_user = 2, 300, 25
        args.users, args.servers, args.rate_rounds, args.repeats = "8,16", "4", 300, 1
        big, small, few, many, focus = 40, 8, 2, 8, (16, 4)
    users = [int(u) for u in args.users.split(",") if u]
    servers = [int(s) for s in args.servers.split(",") if s]
    results = Results(args.out / "results.json")
    figures = diagnose(*focus, args.horizon)
    figures.update(headline(results, *focus, args.horizon, args.seeds))
    found, rows = sweep(results, users, servers, args.horizon, args.rounds_per_user,
                        args.seeds, WORLD["clusters"])
    figures.update(found)
    print(f"wrote {plot(rows, args.plot or args.out / 'population_sweep.png')}")
    figures.update(rate(args.rate_rounds, args.repeats, small, big, few, many))
    for key, value in figures.items():
        print(f"{key}: {value:.4g}" if isinstance(value, float) and math.isfinite(value)
              else f"{key}: {value}")


if __name__ == "__main__":
    main()
