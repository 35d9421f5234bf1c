"""The differencing audit of Algorithm 1's own elicitation, per C, with and without Laplace noise.

For each anonymity parameter C, Algorithm 1 (LP decomposition, N = 100, K = 5,
U = 20) produces its first-batch assignment; the canary is user 0 and its group
is the one `elicit_feedback` forms under that assignment.  The attacker sees
the elicitation's aggregates and computes the canary's estimate
r_{s,0} - r_{s,k}; the neighbouring inputs are the canary's round-0 reward 0 or 1
(record level).  `ElicitationObserver` replays that elicitation through the real
aggregator; `privbandit.audits.run_audit` with the threshold tester turns 2 x samples runs
into a 95% Clopper-Pearson lower bound on epsilon.

- without noise there is no DP claim (claim epsilon = 0): C-anonymity does not
  stop differencing, and the attacker's accuracy (guess 1 when the estimate is
  above 1/2) is well above 1/2, shrinking as C grows (more members' noise);
- with the aggregator's Laplace option (epsilon = 1 per round) the claim is the
  aggregator's event and the lower bound must stay below it.

Usage: python examples/anonymous_audit.py [--samples 20000] [--epsilon 1.0] [--seed 0]
"""
from __future__ import annotations

import argparse

import numpy as np

from privbandit.anonymous import AnonymousBaSE, ElicitationObserver, algorithm_assignment
from privbandit.anonymous.audit import RELATION
from privbandit.audits import Claim, NeighbouringPair, ThresholdTester, run_audit
from privbandit.envs.anonymous import AnonymousBanditEnv, clustered_means

N, K, U, T = 100, 5, 20, 10**5
THRESHOLDS = (1, 2, 5, 10)


def audit_one(c: int, epsilon: float | None, samples: int, rng: np.random.Generator) -> dict:
    means = clustered_means(N, K, U, rng)
    assignment = algorithm_assignment(AnonymousBaSE(N, K, c, U, T), rng)
    observer = ElicitationObserver(means, assignment, c, canary=0, laplace_epsilon=epsilon)
    if epsilon is None:
        claim = Claim(0.0, source="C-anonymity only: no differential-privacy claim")
    else:
        claim = Claim.from_event(AnonymousBanditEnv(means, c, laplace_epsilon=epsilon)
                                 .aggregator.event)
    report = run_audit(observer, NeighbouringPair(0, 1, RELATION), ThresholdTester(), claim,
                       samples=samples, rng=rng, name=f"elicitation C={c}")
    d0, d1 = observer(0, rng, samples), observer(1, rng, samples)
    accuracy = 0.5 * (1.0 + np.mean(d1 > 0.5) - np.mean(d0 > 0.5))
    return {"C": c, "group": observer.group.size, "laplace": epsilon, "accuracy": accuracy,
            "lower": report.epsilon_lower_bound, "claim": report.claimed_epsilon,
            "verdict": report.verdict}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.samples = 400
    rng = np.random.default_rng(args.seed)
    print(f"{'C':>3s} {'|G_s|':>6s} {'Laplace eps':>12s} {'accuracy':>9s} "
          f"{'eps lower bound':>16s} {'claim':>6s}  verdict")
    for c in THRESHOLDS:
        for epsilon in (None, args.epsilon):
            row = audit_one(c, epsilon, args.samples, rng)
            noise = "none" if epsilon is None else f"{epsilon:g}"
            print(f"{row['C']:3d} {row['group']:6d} {noise:>12s} {row['accuracy']:9.3f} "
                  f"{row['lower']:16.3f} {row['claim']:6.2f}  {row['verdict']}")


if __name__ == "__main__":
    main()
