"""What bounds private federation acting on released statistics: lag, noise, or detection?

Seed 000's synthetic world (d = 10, 20 users in 4 clusters, 5 servers, 10
items per round), delta = 1e-5, paired seeds.  A ladder of algorithms, each
adding one cost to the one before:

- `oracle`: LinUCB pooled per TRUE cluster over all servers, every
  observation used at once (it reads the hidden clusters: a ceiling, not an
  algorithm);
- `oracle+lag`: the same, its models refreshed only at the releases of the
  geometric schedule (what acting on released statistics costs without noise);
- `oracle+noise`: the same releases made private -- one reward-only stream
  per true cluster (exact Gram, noisy moments; the width of
  `privbandit.private.RewardNoiseRidge`): the least noise any design that acts
  on released data can carry at this budget, the clusters given;
- `oracle+users`: one stream per user, summed over the true cluster, with the
  noise bound uniform over every set of users (`sum_noise_bound`): what
  releasing per user (needed to find clusters) adds;
- `oracle+sum`: one sum per TRUE cluster released through the seam of the
  cluster sums (`private.TrustedSums`, a trusted aggregator; the secure sum's
  noise is the same): the oracle with a secure sum;
- `oracle+share`: the same at the cluster streams' share of the budget of
  `release = "cluster-sum"` (what giving detection and histories their
  shares costs with the clusters given);
- `cdp-fclub-dc`: the registry entry (per-user streams), which also detects
  the clusters from its releases;
- `cdp-fclub-dc+sum`: the entry with cluster sums (`release = "cluster-sum"`);
- `cdp-fclub-dc+routed`: the entry routing each record, at the full budget, to
  its user's stream or, once the user is settled, to its cluster's secure sum
  (`release = "routed"`; `--keep` and `--settle` set its keys).

Prints the mean (sd) final regret of each rung per epsilon, then `key: value`
lines `<rung>_eps<e>` (mean final regret), `alone`, `fclub_dc` (going alone
and non-private FCLUB-DC on the same seeds), and for every private rung its
federation gain recovered against the oracle, (alone - rung) / (alone -
oracle), `fgr_oracle_<rung>_eps<e>`, beside the one against FCLUB-DC,
`fgr_fclub_dc_<rung>_eps<e>`.

Usage: python examples/private_frontier.py [--horizon 131071] [--seeds 3]
       [--epsilons 1 4] [--keep 0.1] [--settle 0] [--smoke]
"""
from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

import numpy as np

from privbandit.accounting import ExactGaussianAccountant, gdp_mu
from privbandit.fclub import server_of_users
from privbandit.fclub.released import ReleasedPlan
from privbandit.mechanisms.noise_bounds import vector_noise_norm_bound
from privbandit.policies.base import Policy
from privbandit.private import (
    ReleasePlan,
    RewardNoiseRidge,
    RewardStreams,
    TrustedSums,
    exact_gram_scores,
)
from privbandit.registry import get_algorithm
from privbandit.runtime import run_setup
from privbandit.schema import defaults

ENVIRONMENT = {"dim": 10, "users": 20, "clusters": 4, "servers": 5, "items": 10}
RUNGS = ("oracle+lag", "oracle+noise", "oracle+sum", "oracle+share", "oracle+servers",
         "oracle+users")


class OracleCluster(Policy):
    """LinUCB pooled per true cluster (`labels`), acting on released statistics.

    mode: "oracle" (every observation at once, no privacy), "oracle+lag" (models
    refreshed at the plan's releases), "oracle+noise" (one reward-only stream per
    cluster), "oracle+sum" / "oracle+share" (one sum per cluster through the seam, at
    the full budget / the cluster streams' share), "oracle+servers" (one stream per
    server and cluster) or "oracle+users" (one per user, summed over the cluster).  Reads the
    hidden clusters: a yardstick for the ladder of costs, never a deployable algorithm.
    """

    name = "oracle"

    def __init__(self, labels: np.ndarray, dim: int, plan: ReleasePlan, mode: str,
                 servers: np.ndarray) -> None:
        self.labels, self.mode, self.schedule = np.asarray(labels), mode, plan.releases
        self.dim, m = dim, int(self.labels.max()) + 1
        self.sums = _true_sums(self.labels, dim, plan, mode) if mode in (
            "oracle+sum", "oracle+share") else None
        # each (server, true cluster) block of users: one stream in "oracle+servers"
        _, blocks = np.unique(servers * m + self.labels, return_inverse=True)
        self.unit_of = {"oracle+noise": self.labels, "oracle+servers": blocks}.get(
            mode, np.arange(self.labels.size))
        units = int(self.unit_of.max()) + 1
        self.streams = (RewardStreams([np.arange(units)], dim, plan, feature_bound=1.0)
                        if mode in ("oracle+noise", "oracle+servers", "oracle+users") else None)
        self.ridge = RewardNoiseRidge(dim, 1.0, 0.5, 1.0, 0.1)
        self.gram, self.b = np.zeros((m, dim, dim)), np.zeros((m, dim))  # raw, all data
        self.model = [self.ridge.model(np.zeros((dim, dim)), np.zeros(dim), 0.0)] * m

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        self._rng = rng
        mod = self.model[self.labels[user]]
        return int(np.argmax(exact_gram_scores(mod.theta, mod.inverse, items, mod.beta,
                                               mod.noise_bound)))

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        x, y, k = items[action], min(max(float(feedback), 0.0), 1.0), self.labels[user]
        self.gram[k] += np.outer(x, x)
        self.b[k] += y * x
        if self.streams is not None:
            self.streams.enter(int(self.unit_of[user]), (x, y), by="oracle")
        if self.sums is not None:
            self.sums[0].observe(int(user), x, y)
        if self.mode == "oracle":
            self.model[k] = self.ridge.model(self.gram[k], self.b[k], 0.0)
        elif self.schedule.is_release(t):
            self._refresh()

    def _refresh(self) -> None:
        if self.sums is not None:
            sums, streams, failure = self.sums
            for k, stream in enumerate(streams):
                out = stream.step(self._rng)
                bound = vector_noise_norm_bound(out.variance, self.dim, failure) \
                    if out.variance > 0 else 0.0
                self.model[k] = self.ridge.model(out.gram, out.moments, bound)
            return
        if self.streams is None:
            self.model = [self.ridge.model(g, b, 0.0) for g, b in zip(self.gram, self.b,
                                                                       strict=True)]
            return
        st = self.streams
        st.release(self._rng)
        for k in range(len(self.model)):
            members = np.unique(self.unit_of[self.labels == k])
            self.model[k] = st.group_model(members, self.ridge) or self.model[k]


def _true_sums(labels: np.ndarray, dim: int, plan: ReleasePlan, mode: str):
    """(the seam, one stream per true cluster, the failure of each bound): full budget for
    "oracle+sum", the cluster streams' share of `release = "cluster-sum"` for
    "oracle+share"."""
    schedule = plan.releases
    sums = TrustedSums(labels.size, dim, mechanism=plan.mechanism, releases=schedule.releases,
                       records_per_step=schedule.longest_batch(), horizon=plan.horizon,
                       feature_bound=1.0, sampler=plan.sampler)
    mu = gdp_mu(plan.epsilon, plan.delta)
    if mode == "oracle+share":
        mu = ReleasedPlan(plan.epsilon, plan.delta, plan.horizon, release="cluster-sum").mus()[1]
    sigma = ExactGaussianAccountant().compose(sums.stream_event(1.0)).mu / mu
    streams = [sums.open(np.flatnonzero(labels == k), sigma)
               for k in range(int(labels.max()) + 1)]
    return sums, streams, 0.05 / (len(streams) * schedule.releases)


def run_rung(mode: str, horizon: int, epsilon: float, seed: int) -> float:
    entry = get_algorithm("club-per-server")
    config = {**entry.defaults, "horizon": horizon,
              "environment": {**defaults(entry.environment), **ENVIRONMENT}}
    built = entry.setup(config, seed)
    plan = ReleasePlan(epsilon, 1e-5, horizon, "mf", "geometric")
    policy = OracleCluster(built.env.true_clusters(), built.env.dim, plan, mode,
                           server_of_users(built.env.n_users, ENVIRONMENT["servers"]))
    return float(run_setup(replace(built, protocol=policy), seed).regret.sum())


def run_entry(name: str, horizon: int, epsilon: float | None, seed: int, **params) -> float:
    entry = get_algorithm(name)
    config = {**entry.defaults, "horizon": horizon,
              "environment": {**defaults(entry.environment), **ENVIRONMENT}, **params}
    if epsilon is not None:
        config["epsilon"] = epsilon
    return float(entry.run(config, seed).regret.sum())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--horizon", type=int, default=131_071)
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0])
    p.add_argument("--keep", type=float, default=0.1, help="the routed rung's keep")
    p.add_argument("--settle", type=int, default=0, help="the routed rung's settle")
    p.add_argument("--smoke", action="store_true", help="a tiny run (checks the script works)")
    args = p.parse_args()
    if args.smoke:
        args.horizon, args.seeds, args.epsilons = 600, 1, [1.0]
    seeds = list(range(args.seeds))
    found: dict[str, float] = {}

    def report(key: str, values: list[float]) -> None:
        found[key] = float(np.mean(values))
        sd = np.std(values, ddof=1) if len(values) > 1 else 0.0
        print(f"{key:28s} {np.mean(values):9.1f} ({sd:.1f})", flush=True)

    report("alone", [run_entry("club-per-server", args.horizon, None, s) for s in seeds])
    report("fclub_dc", [run_entry("fclub-dc", args.horizon, None, s) for s in seeds])
    report("oracle", [run_rung("oracle", args.horizon, 1.0, s) for s in seeds])
    report("oracle+lag", [run_rung("oracle+lag", args.horizon, 1.0, s) for s in seeds])
    for eps in args.epsilons:
        for mode in RUNGS[1:]:
            report(f"{mode}_eps{eps:g}", [run_rung(mode, args.horizon, eps, s) for s in seeds])
        report(f"cdp-fclub-dc_eps{eps:g}",
               [run_entry("cdp-fclub-dc", args.horizon, eps, s) for s in seeds])
        report(f"cdp-fclub-dc+sum_eps{eps:g}",
               [run_entry("cdp-fclub-dc", args.horizon, eps, s, release="cluster-sum")
                for s in seeds])
        report(f"cdp-fclub-dc+routed_eps{eps:g}",
               [run_entry("cdp-fclub-dc", args.horizon, eps, s, release="routed",
                          keep=args.keep, settle=args.settle) for s in seeds])
    gains = {}
    for key, value in found.items():
        if "_eps" in key:
            for ceiling in ("oracle", "fclub_dc"):
                gains[f"fgr_{ceiling}_{key}"] = (found["alone"] - value) / (
                    found["alone"] - found[ceiling])
    for key, value in {**found, **gains}.items():
        print(f"{key.replace('+', '_').replace('-', '_')}: {value:.{3 if 'fgr' in key else 1}f}")


if __name__ == "__main__":
    main()
