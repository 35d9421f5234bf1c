"""HDP-MAB with 100 agents in components (seed 002, Table II and Fig. 11).

100 agents, K = 100 Bernoulli arms (means uniform on [0, 1]), epsilon = 1,
c_s = 50 per server link, c_a = 1 per agent link and slot, T = 10^6, >= 10
seeds.  Component cases (the paper's Table II is not in our copy; these
follow its description): 1) 10 fully connected components of 10; 2) 5 of 20;
3) one fully connected component of 100; 4) 10 stars of 10; 5) 10 rings of
10; 6) 100 singletons (each agent is its own sink: the centralized setting).
References: centralized CDP-MAB (c_s = 50) and fully decentralized DDP-MAB
(GIS over all 100 agents, fully connected and random connected graphs).

Usage: python examples/fedmab_hdp.py [--seeds 10] [--horizon 1000000] [--out fedmab_figures]
"""
from __future__ import annotations

import numpy as np
from fedmab_common import parse_args, plot_bars, sweep

from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.fedmab import (
    CDPMAB,
    DDPMAB,
    HDPMAB,
    disjoint_union,
    fully_connected,
    random_connected,
    ring,
    star,
)

M, K, EPS, C_S, C_A = 100, 100, 1.0, 50.0, 1.0

CASES = {
    "case 1: 10 x full(10)": disjoint_union([fully_connected(10)] * 10),
    "case 2: 5 x full(20)": disjoint_union([fully_connected(20)] * 5),
    "case 3: 1 x full(100)": fully_connected(100),
    "case 4: 10 x star(10)": disjoint_union([star(10)] * 10),
    "case 5: 10 x ring(10)": disjoint_union([ring(10)] * 10),
    "case 6: 100 x single": disjoint_union([fully_connected(1)] * 100),
}


def env(rng):
    return MultiAgentBernoulliMAB.uniform(M, K, rng)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    t, n = args.horizon, args.seeds
    print(f"# HDP-MAB, {M} agents, c_s = {C_S:g}, c_a = {C_A:g}, eps = {EPS:g}")
    hybrid = [sweep(name, env, lambda g=g: HDPMAB(EPS, t, g, server_cost=C_S, agent_cost=C_A),
                    n, t) for name, g in CASES.items()]
    central = sweep("centralized CDP", env, lambda: CDPMAB(EPS, t, server_cost=C_S), n, t)
    rand = random_connected(M, 0.05, np.random.default_rng(7))
    decentral = [
        sweep("decentralized DDP full", env,
              lambda: DDPMAB(EPS, t, fully_connected(M), agent_cost=C_A), n, t),
        sweep("decentralized DDP random", env,
              lambda: DDPMAB(EPS, t, rand, agent_cost=C_A), n, t),
    ]
    for s in [*hybrid, central, *decentral]:
        print(s.line())
    balanced = [hybrid[0], hybrid[1], hybrid[3], hybrid[4]]  # the multi-component cases
    cheapest_reference = min(s.cost.mean() for s in [central, *decentral])
    below = all(s.cost.mean() < cheapest_reference for s in balanced)
    print(f"ordering [HDP cases 1, 2, 4, 5 communicate less than centralized CDP and "
          f"decentralized DDP]: {'yes' if below else 'NO'} (largest hybrid cost "
          f"{max(s.cost.mean() for s in balanced):.0f}, cheapest reference "
          f"{cheapest_reference:.0f})")
    plot_bars(args.out / "fedmab_hdp_cases.png", "HDP-MAB: components (M = 100)",
              [*hybrid, central, *decentral])


if __name__ == "__main__":
    main()
