"""DDP-MAB on four graphs (seed 002, Figs. 9-10) against centralized CDP-MAB.

M = 50 agents, K = 100 Bernoulli arms (means uniform on [0, 1]), epsilon = 1,
c_a = 1 per agent link and slot (c_s = 25 for the centralized reference),
T = 10^6, >= 10 seeds.  Graphs: fully connected, star, ring, and a random
connected graph (random spanning tree plus edges with probability 0.05, one
graph per seed).  The only regret DDP adds to CDP is local exploitation while
GIS runs (t_r = diameter slots per round), so the comparison is paired: same
environment, same rewards and noise per seed; the extra regret over CDP is
reported with its spread.

Usage: python examples/fedmab_ddp.py [--seeds 10] [--horizon 1000000] [--out fedmab_figures]
"""
from __future__ import annotations

import numpy as np
from fedmab_common import Sweep, parse_args, plot_bars, plot_curves, sweep

from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.fedmab import (
    CDPMAB,
    DDPMAB,
    diameter,
    fully_connected,
    random_connected,
    ring,
    star,
)

M, K, EPS = 50, 100, 1.0


def env(rng):
    return MultiAgentBernoulliMAB.uniform(M, K, rng)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    t, n = args.horizon, args.seeds
    graph_rng = np.random.default_rng(2021)
    graphs = {
        "fully connected": lambda: fully_connected(M),
        "star": lambda: star(M),
        "ring": lambda: ring(M),
        "random": lambda: random_connected(M, 0.05, graph_rng),
    }
    central = sweep("centralized (CDP)", env, lambda: CDPMAB(EPS, t, server_cost=25.0), n, t)
    runs: list[Sweep] = [central]
    print("# DDP-MAB on four graphs vs centralized CDP-MAB (eps = 1, c_a = 1, c_s = 25)")
    print(central.line())
    extra = {}
    for name, make_graph in graphs.items():
        diameters = []

        def make(make_graph=make_graph, diameters=diameters):
            g = make_graph()
            diameters.append(diameter(g))
            return DDPMAB(EPS, t, g, agent_cost=1.0)

        s = sweep(f"DDP {name}", env, make, n, t)
        runs.append(s)
        extra[name] = s.regret - central.regret
        print(s.line() + f"   diameter {np.mean(diameters):.1f}")
    print("\n# extra regret per agent over centralized (paired by seed)")
    for name, d in extra.items():
        print(f"{name:<16} {d.mean():9.3f} +- {d.std(ddof=1):7.3f}  "
              f"[{d.min():8.3f}, {d.max():8.3f}]")
    order = sorted(extra, key=lambda k: extra[k].mean())
    print("graphs from closest to farthest from centralized: " + " < ".join(order))
    closest_two = set(order[:2]) == {"fully connected", "star"}
    print(f"ordering [star and fully connected closest to centralized, ring worst]: "
          f"{'yes' if closest_two and order[-1] == 'ring' else 'NO'}")
    plot_curves(args.out / "fedmab_ddp_graphs.png", "DDP-MAB: graph structure", runs)
    plot_bars(args.out / "fedmab_ddp_graphs_cost.png", "DDP-MAB: regret and cost", runs)


if __name__ == "__main__":
    main()
