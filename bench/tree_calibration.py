"""Tree calibration: node noise each accountant certifies vs the seed papers' formulas.

Setting of issue #2: a binary counting tree over n = 512 steps (10 nodes per
record), target (epsilon, delta) = (1, 1e-5), L2 sensitivity 1.  For every
accountant that supports Gaussian releases, the smallest node sigma it
certifies; for every paper formula, the sigma it prescribes; each as a ratio
to the exact (analytic-Gaussian) sigma, and the epsilon the exact accountant
actually certifies at that sigma (what the looser noise really spends).

Run: python bench/tree_calibration.py
"""
from __future__ import annotations

import argparse
import time

from privbandit.accounting import (
    ACCOUNTANTS,
    PAPER_TREE_VARIANCES,
    ExactGaussianAccountant,
    GaussianEvent,
    TreeAggregationEvent,
    calibrate_gaussian_sigma,
    paper_tree_sigma,
    tree_nodes_per_record,
)

HORIZON, EPSILON, DELTA, SENSITIVITY = 512, 1.0, 1e-5, 1.0


def exact_epsilon(sigma: float, nodes: int) -> float:
    tree = TreeAggregationEvent(GaussianEvent(sigma, SENSITIVITY), nodes)
    return ExactGaussianAccountant().compose(tree).epsilon(DELTA)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help="accepted like the other scripts': this run is already seconds long")
    parser.parse_args()
    nodes = tree_nodes_per_record(HORIZON)
    probe = GaussianEvent(1.0, SENSITIVITY)
    rows = []
    for name, cls in ACCOUNTANTS.items():
        if not cls().supports(probe):
            continue
        start = time.perf_counter()
        sigma = calibrate_gaussian_sigma(EPSILON, DELTA, SENSITIVITY, nodes_per_record=nodes,
                                         accountant=name)
        rows.append((f"accountant {name}", name, sigma, time.perf_counter() - start))
    for formula in PAPER_TREE_VARIANCES:
        sigma = paper_tree_sigma(EPSILON, DELTA, SENSITIVITY, horizon=HORIZON, formula=formula)
        rows.append((f"paper {formula}", formula, sigma, 0.0))
    exact = next(s for label, _, s, _ in rows if label == "accountant exact-gaussian")

    print(f"tree over n={HORIZON} steps: {nodes} nodes per record; target epsilon={EPSILON}, "
          f"delta={DELTA:g}, L2 sensitivity={SENSITIVITY}")
    print(f"{'calibration':<30}{'sigma':>10}{'x exact':>9}{'var x':>8}{'exact eps':>11}"
          f"{'seconds':>9}")
    for label, _, sigma, seconds in rows:
        ratio = sigma / exact
        print(f"{label:<30}{sigma:>10.3f}{ratio:>9.2f}{ratio**2:>8.1f}"
              f"{exact_epsilon(sigma, nodes):>11.4f}{seconds:>9.3f}")
    for _, key, sigma, _ in rows:
        print(f"sigma_{key.replace('-', '_')}: {sigma:.4f}")
    for _, key, sigma, _ in rows:
        if key != "exact-gaussian":
            print(f"ratio_{key.replace('-', '_')}_vs_exact: {sigma / exact:.3f}")


if __name__ == "__main__":
    main()
