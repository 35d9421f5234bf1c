"""CDP-MAB (seed 002, Figs. 4-7): privacy, participation and round-limit trade-offs.

M = 50 agents, K = 100 Bernoulli arms with means uniform on [0, 1] (drawn
afresh per seed), c_s = 25, T = 10^6, >= 10 seeds per setting:
- epsilon in {0.1, 0.3, 0.5, 1}, p = 1: regret falls as epsilon grows;
- p in {0.2, ..., 1} (epsilon = 1): regret falls as p grows;
- R in {2, 3, 4, 5} (epsilon = 1, p = 1): regret falls with R, R = 4 and 5 close;
- the (p, R) grid: communication cost against regret.

Usage: python examples/fedmab_cdp.py [--seeds 10] [--horizon 1000000] [--out fedmab_figures]
"""
from __future__ import annotations

import matplotlib.pyplot as plt
from fedmab_common import parse_args, plot_curves, report_order, sweep

from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.fedmab import CDPMAB

M, K, C_S = 50, 100, 25.0


def env(rng):
    return MultiAgentBernoulliMAB.uniform(M, K, rng)


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    t, n = args.horizon, args.seeds

    eps = [sweep(f"eps={e}", env, lambda e=e: CDPMAB(e, t, server_cost=C_S), n, t)
           for e in (0.1, 0.3, 0.5, 1.0)]
    print("\n# privacy-regret trade-off (p = 1, no round limit)")
    for s in eps:
        print(s.line())
    report_order("epsilon 0.1 -> 1", eps)
    plot_curves(args.out / "fedmab_cdp_epsilon.png", "CDP-MAB: privacy level", eps)

    part = [sweep(f"p={p}", env, lambda p=p: CDPMAB(1.0, t, participation=p, server_cost=C_S),
                  n, t) for p in (0.2, 0.4, 0.6, 0.8, 1.0)]
    print("\n# participation rate (eps = 1)")
    for s in part:
        print(s.line())
    report_order("p 0.2 -> 1", part)
    plot_curves(args.out / "fedmab_cdp_participation.png", "CDP-MAB: participation p", part)

    rounds = [sweep(f"R={r}", env, lambda r=r: CDPMAB(1.0, t, rounds=r, server_cost=C_S), n, t)
              for r in (2, 3, 4, 5)]
    print("\n# communication rounds (eps = 1, p = 1)")
    for s in rounds:
        print(s.line())
    report_order("R 2 -> 5", rounds)
    r4, r5 = rounds[2].regret.mean(), rounds[3].regret.mean()
    print(f"R=4 vs R=5: {r4:.1f} vs {r5:.1f} (R=5 is {(r4 - r5) / r4:.0%} lower; "
          f"R=3 -> R=4 was {(rounds[1].regret.mean() - r4) / rounds[1].regret.mean():.0%})")
    plot_curves(args.out / "fedmab_cdp_rounds.png", "CDP-MAB: round limit R", rounds)

    print("\n# communication-regret trade-off over (p, R), eps = 1")
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for r in (2, 3, 4, 5):
        grid = [sweep(f"p={p},R={r}", env,
                      lambda p=p, r=r: CDPMAB(1.0, t, participation=p, rounds=r,
                                              server_cost=C_S), n, t)
                for p in (0.2, 0.4, 0.6, 0.8, 1.0)]
        for s in grid:
            print(s.line())
        ax.errorbar([s.cost.mean() for s in grid], [s.regret.mean() for s in grid],
                    yerr=[s.regret.std(ddof=1) for s in grid], marker="o", capsize=2,
                    label=f"R={r} (p = 0.2 ... 1)")
    ax.set_xlabel("communication cost C(T)")
    ax.set_ylabel("final regret per agent")
    ax.set_yscale("log")
    ax.set_title("CDP-MAB: communication vs regret")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = args.out / "fedmab_cdp_tradeoff.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
