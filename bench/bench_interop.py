"""Exported events: how close dp-accounting's epsilons are to ours, on random event trees.

Draws `--trees` random event trees (seeded; every kind: Laplace and Gaussian
leaves, compositions, repetitions, trees, factorizations; at most rho = 4 of
zCDP, i.e. epsilon up to about 15 at delta = 1e-5) and, at each delta of
DELTAS, exports each with `to_dp_accounting` and compares dp-accounting's PLD
and RDP accountants with our PLD and RDP accountants: RDP at its defaults, PLD
with its grid step at most 1e-4 times our epsilon (and, for reference, at its
default step 1e-4, whose rounding alone is more than 0.1% of an epsilon below
0.1).  Prints the largest relative difference of each, the share of trees where dp-accounting
is below ours, and, for Gaussian-only trees (where ours is exact), the smallest
ratio dp-accounting / ours.  One `key: value` line per figure.

    .venv/bin/python bench/bench_interop.py [--trees N] [--seed S] [--smoke]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from dp_accounting import pld as dp_pld
from dp_accounting import rdp as dp_rdp

from privbandit.accounting import (
    ComposedEvent,
    FactorizationEvent,
    GaussianEvent,
    LaplaceEvent,
    PLDAccountant,
    RDPAccountant,
    RepeatedEvent,
    TreeAggregationEvent,
    ZCDPAccountant,
    to_dp_accounting,
)
from privbandit.accounting.events import flatten

DELTAS = (1e-3, 1e-5, 1e-8)


def random_event(rng: np.random.Generator, depth: int = 0):
    """A random event tree: leaves as in tests/accounting/test_interop.py."""
    kind = rng.integers(6) if depth < 3 else rng.integers(2)
    sens = rng.uniform(0.1, 10.0)
    if kind == 0:
        return LaplaceEvent(sens / rng.uniform(0.01, 2.0), sens)
    if kind == 1:
        return GaussianEvent(sens / rng.uniform(0.02, 2.0), sens)
    if kind == 2:
        return ComposedEvent(tuple(random_event(rng, depth + 1)
                                   for _ in range(rng.integers(1, 4))))
    if kind == 3:
        return RepeatedEvent(random_event(rng, depth + 1), int(rng.integers(1, 9)))
    if kind == 4:
        return TreeAggregationEvent(random_event(rng, depth + 1), int(rng.integers(1, 9)))
    return FactorizationEvent(GaussianEvent(sens / rng.uniform(0.02, 2.0), sens),
                              rng.uniform(1.0, 5.0), int(rng.integers(1, 10**5)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="three trees (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.trees = 3
    rng = np.random.default_rng(args.seed)
    worst = {"pld": 0.0, "rdp": 0.0}
    below = {"pld": 0, "rdp": 0}
    exact_ratio, compared, gaussian_only, default_worst = np.inf, 0, 0, 0.0
    start = time.perf_counter()
    while compared < args.trees:
        event = random_event(rng)
        if ZCDPAccountant().compose(event).rho > 4.0:
            continue
        compared += 1
        exported = to_dp_accounting(event)
        gaussian = all(isinstance(leaf, GaussianEvent) for leaf, _ in flatten(event))
        gaussian_only += gaussian
        for delta in DELTAS:
            theirs = {}
            ours = {"pld": PLDAccountant().compose(event).epsilon(delta),
                    "rdp": RDPAccountant().compose(event).epsilon(delta)}
            acc = dp_pld.PLDAccountant()  # its default grid step, 1e-4
            acc.compose(exported)
            default_worst = max(default_worst, abs(acc.get_epsilon(delta) / ours["pld"] - 1))
            acc = dp_pld.PLDAccountant(value_discretization_interval=min(1e-4,
                                                                         1e-4 * ours["pld"]))
            acc.compose(exported)
            theirs["pld"] = acc.get_epsilon(delta)
            acc = dp_rdp.RdpAccountant()
            acc.compose(exported)
            theirs["rdp"] = acc.get_epsilon(delta)
            for key in worst:
                worst[key] = max(worst[key], abs(theirs[key] / ours[key] - 1))
                below[key] += theirs[key] < ours[key]
            if gaussian:
                exact_ratio = min(exact_ratio, theirs["pld"] / ours["pld"],
                                  theirs["rdp"] / ours["pld"])
    print(f"{compared} trees ({gaussian_only} Gaussian-only) x deltas {DELTAS}, "
          f"{time.perf_counter() - start:.1f} s")
    print(f"pld_max_rel_diff: {worst['pld']:.3g}")
    print(f"pld_default_step_max_rel_diff: {default_worst:.3g}")
    print(f"rdp_max_rel_diff: {worst['rdp']:.3g}")
    print(f"pld_share_dp_accounting_below_ours: {below['pld'] / (compared * len(DELTAS)):.3g}")
    print(f"rdp_share_dp_accounting_below_ours: {below['rdp'] / (compared * len(DELTAS)):.3g}")
    print(f"gaussian_only_min_dp_accounting_over_exact: {exact_ratio:.12g}")


if __name__ == "__main__":
    main()
