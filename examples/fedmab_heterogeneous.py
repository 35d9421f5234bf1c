"""Heterogeneous rewards (seed 002, Figs. 8 and 12).

Part 1 (Fig. 8): 5 agents, 10 Bernoulli arms, epsilon = 1, T = 10^6, >= 10
seeds.  Heterogeneous: agent i's means are its own uniform draws; the target
is their average over agents.  Compared: CDP-MAB on the heterogeneous
instance, CDP-MAB on a homogeneous instance with the same global means, and
each agent learning alone on its own rewards (single-agent elimination,
regret measured against the global means as for the federation).

Part 2 (Fig. 12): the three structures on heterogeneous rewards, 50 agents,
100 arms: centralized CDP-MAB, hybrid HDP-MAB (5 rings of 10) and
decentralized DDP-MAB (one ring of 50).  Local exploitation during the
exchanges plays each agent's *local* best arm, which heterogeneity makes
costly, so regret should order CDP < HDP < DDP.

Usage: python examples/fedmab_heterogeneous.py [--seeds 10] [--horizon 1000000]
       [--out fedmab_figures]
"""
from __future__ import annotations

import numpy as np
from fedmab_common import POINTS, Sweep, parse_args, plot_curves, report_order, streams, sweep

from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.fedmab import CDPMAB, DDPMAB, HDPMAB, FedMABRun, disjoint_union, ring
from privbandit.runtime import play

EPS = 1.0


def _simulate(algorithm, env, rng) -> FedMABRun:
    protocol = algorithm.protocol(env)
    return FedMABRun.of(protocol, play(protocol, env, algorithm.horizon, rng=rng))


def small_het(rng):
    return MultiAgentBernoulliMAB.uniform(5, 10, rng, heterogeneous=True)


def small_hom(rng):
    """Homogeneous twin: every agent sees the heterogeneous instance's global means."""
    return MultiAgentBernoulliMAB(small_het(rng).global_means, n_users=5)


def single_agent(label: str, make_env, seeds: int, horizon: int) -> Sweep:
    """Each agent runs elimination alone on its own rewards; regret vs the global means."""
    rounds = np.unique(np.linspace(0, horizon - 1, POINTS).astype(np.int64))
    finals, curves = [], []
    for seed in range(seeds):
        env_rng, run_rng = streams(seed)
        env = make_env(env_rng)
        per_agent = []
        for i, gen in enumerate(run_rng.spawn(env.n_users)):
            alone = MultiAgentBernoulliMAB(env.means[i:i + 1])
            arms = _simulate(CDPMAB(EPS, horizon), alone, gen).round_arms()[:, 0]
            per_agent.append(np.cumsum(env.gaps[arms]))
        cum = np.mean(per_agent, axis=0)
        finals.append(cum[-1])
        curves.append(cum[rounds])
    return Sweep(label, np.array(finals), np.zeros(seeds), rounds, np.array(curves))


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    t, n = args.horizon, args.seeds

    print("# part 1: 5 agents, 10 arms, eps = 1")
    part1 = [
        sweep("CDP-MAB heterogeneous", small_het, lambda: CDPMAB(EPS, t), n, t),
        sweep("CDP-MAB homogeneous", small_hom, lambda: CDPMAB(EPS, t), n, t),
        single_agent("single agent homogeneous", small_hom, n, t),
        single_agent("single agent heterogeneous", small_het, n, t),
    ]
    for s in part1:
        print(s.line())
    het, hom, alone_hom, alone_het = (s.regret.mean() for s in part1)
    print(f"federated heterogeneous / homogeneous regret: {het / hom:.2f}")
    print(f"federated homogeneous / single-agent homogeneous: {hom / alone_hom:.2f} "
          f"(1/M = {1 / 5:.2f})")
    late = [s.curves[:, -1].mean() - s.curves[:, len(s.rounds) // 2].mean() for s in part1]
    print("regret added over the second half of the horizon: "
          + ", ".join(f"{s.label} {d:.1f}" for s, d in zip(part1, late, strict=True)))
    plot_curves(args.out / "fedmab_heterogeneous_5x10.png",
                "Heterogeneous rewards: 5 agents, 10 arms", part1)

    print("\n# part 2: three structures, heterogeneous rewards, 50 agents, 100 arms")

    def big_het(rng):
        return MultiAgentBernoulliMAB.uniform(50, 100, rng, heterogeneous=True)

    part2 = [
        sweep("centralized CDP-MAB", big_het, lambda: CDPMAB(EPS, t), n, t),
        sweep("hybrid HDP-MAB 5 x ring(10)", big_het,
              lambda: HDPMAB(EPS, t, disjoint_union([ring(10)] * 5)), n, t),
        sweep("decentralized DDP-MAB ring(50)", big_het,
              lambda: DDPMAB(EPS, t, ring(50)), n, t),
    ]
    for s in part2:
        print(s.line())
    report_order("CDP < HDP < DDP", part2, decreasing=False)
    plot_curves(args.out / "fedmab_heterogeneous_structures.png",
                "Heterogeneous rewards: structures (M = 50)", part2)


if __name__ == "__main__":
    main()
