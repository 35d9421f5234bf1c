"""CDP-MAB (seed 002) against the round limit R, and against agents learning alone.

On a grid of (M agents, K Bernoulli arms, means uniform on [0, 1] per seed),
epsilon = 1, T = 10^6, 5 seeds: the per-agent final regret of CDP-MAB with
R = 2 ... 5, with R = ceil(2 ln T / ln M) (the paper's condition for federation
to be no worse than going alone; `privbandit.fedmab.rounds_bound`), and with the
default (rounds=None: the doubling schedule, no limit), against one agent running
the same algorithm alone on the same means (M agents alone have that per-agent
regret in expectation).  R below the bound warns; the warning is silenced here.

Prints a table per (M, K), then `key: value` lines: for each (M, K) the default's
and the bound's regret over going alone (target: <= 1), and the worst over the grid.

Usage: python examples/fedmab_rounds.py [--horizon 1000000] [--seeds 5] [--smoke]
"""
from __future__ import annotations

import argparse
import math
import warnings

import numpy as np

from privbandit.envs.multi_agent_mab import MultiAgentBernoulliMAB
from privbandit.fedmab import CDPMAB, RoundsBelowBoundWarning, rounds_bound
from privbandit.runtime import play_algorithm

GRID = ((2, 10), (5, 10), (10, 100), (50, 100))
EPSILON = 1.0


def per_agent_regret(agents: int, arms: int, horizon: int, seeds: int, rounds) -> np.ndarray:
    """Final regret per agent over seeds (the same means and streams per seed)."""
    out = np.zeros(seeds)
    for seed in range(seeds):
        env_ss, run_ss = np.random.SeedSequence([seed, agents, arms]).spawn(2)
        means = np.random.default_rng(env_ss).random(arms)
        env = MultiAgentBernoulliMAB(means, n_users=agents)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RoundsBelowBoundWarning)
            result = play_algorithm(CDPMAB(EPSILON, horizon, rounds=rounds), env,
                                    np.random.default_rng(run_ss))
        out[seed] = result.total_regret / agents
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=10**6)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (checks the script)")
    args = parser.parse_args()
    grid = GRID
    if args.smoke:
        args.horizon, args.seeds, grid = 5_000, 2, GRID[:2]
    t = args.horizon
    lines = [f"horizon: {t}", f"seeds: {args.seeds}"]
    worst = 0.0
    for m, k in grid:
        bound = math.ceil(rounds_bound(t, m))
        alone = per_agent_regret(1, k, t, args.seeds, None)
        print(f"\n== M = {m}, K = {k}: per-agent regret, mean (sd); bound R >= {bound} ==")
        print(f"{'alone':>12s} {alone.mean():12.1f} ({alone.std(ddof=1):8.1f})")
        settings = [(f"R={r}", r) for r in (2, 3, 4, 5)] + [(f"R={bound} (bound)", bound),
                                                            ("default", None)]
        for label, rounds in settings:
            r = per_agent_regret(m, k, t, args.seeds, rounds)
            ratio = r.mean() / alone.mean()
            print(f"{label:>12s} {r.mean():12.1f} ({r.std(ddof=1):8.1f})  / alone {ratio:7.3f}")
            tag = f"m{m}_k{k}"
            if rounds is None:
                lines.append(f"{tag}_default_over_alone: {ratio:.3f}")
                worst = max(worst, ratio)
            elif label.endswith("(bound)"):
                lines.append(f"{tag}_bound_r{bound}_over_alone: {ratio:.3f}")
            elif rounds == 2:
                lines.append(f"{tag}_r2_over_alone: {ratio:.3f}")
    lines.append(f"worst_default_over_alone: {worst:.3f}")
    print("\n" + "\n".join(lines))


if __name__ == "__main__":
    main()
