"""Black-box transcript audits against the white-box forced replay, on three toys.

A two-armed bandit plays T rounds on a fixed reward table (arm 0 pays 1,
arm 1 pays 0.2) and releases every round's reward through the Gaussian
mechanism at (epsilon, delta) for sensitivity 1; the neighbour's table gives
0 for arm 0 at round 0 (one user-round).  The toys:

- released: after one pull of each arm, the arm of the larger mean of the
  *released* rewards (each released record acts on released values only);
- raw: the same on the raw rewards (one reward moves every later record);
- threshold: releases the noisy sum of arm 0's rewards whenever the raw sum
  since the last release reaches 2 (a data-dependent schedule).

For each toy the white-box audit (`audit_pairs`: two runs, releases forced)
gives the pair's exact loss, and the black-box audit (`audit_transcripts`,
gaussian=True: n whole transcripts per world, nothing known of the
mechanisms) a lower bound at 95% confidence, by its assumption-free threshold
statistics (the schedule, "values", "values-sparse") and by its Gaussian-DP
reading.

Then one registry entry, black-box (`privbandit.auditing.black_box`): its world and
rounds fixed by the seed, its coins fresh in every transcript.

    python examples/transcript_audit.py [--samples 500,2000,8000] [--horizon 30]
        [--entry cdp-fedc3ucb-h] [--entry-horizon 32] [--entry-samples 500] [--smoke]

Ends with one `key: value` line per figure.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from privbandit.auditing.black_box import audit_entry_transcripts
from privbandit.audits import Claim, audit_pairs
from privbandit.audits.transcript import audit_transcripts
from privbandit.mechanisms.gaussian import GaussianVector
from privbandit.mechanisms.samplers import FAST
from privbandit.registry import get_algorithm
from privbandit.schema import defaults

DELTA = 1e-5


def toy(kind: str, mech: GaussianVector, horizon: int):
    """`sample(which, rng)` of the toy `kind` ("released", "raw" or "threshold")."""
    def sample(which: int, rng: np.random.Generator):
        table = np.tile([1.0, 0.2], (horizon, 1))
        table[0, 0] -= which
        if kind == "threshold":
            sums = np.cumsum(table[:, 0])  # releases when the raw sum passes 2, 4, 6, ...
            due = np.flatnonzero(np.diff(np.floor(np.concatenate([[0.0], sums]) / 2)) > 0)
            return [(int(t), mech.release(np.array([2.0]), rng)) for t in due]
        pulls, raw, released, out = np.zeros(2), np.zeros(2), np.zeros(2), []
        for t in range(horizon):
            basis = raw if kind == "raw" else released
            arm = t if t < 2 else int(np.argmax(basis / np.maximum(pulls, 1)))
            y = mech.release(table[t, arm:arm + 1], rng)
            pulls[arm], raw[arm], released[arm] = (pulls[arm] + 1, raw[arm] + table[t, arm],
                                                   released[arm] + y[0])
            out.append((t, y))
        return out
    return sample


def measure(kind: str, mech, claim: Claim, horizon: int, sizes: list[int]) -> dict[str, float]:
    sample = toy(kind, mech, horizon)
    start = time.perf_counter()
    exact = audit_pairs({"flip": lambda w: sample(w, np.random.default_rng(0))}, DELTA,
                        claim.epsilon).worst.epsilon
    out = {f"{kind}_white_box_epsilon": exact,
           f"{kind}_white_box_seconds": time.perf_counter() - start}
    for n in sizes:
        report = audit_transcripts(sample, n, claim, rng=n, gaussian=True)
        by = {s["statistic"]: s["epsilon_lower_bound"] for s in report.details["statistics"]}
        out[f"{kind}_black_box_n{n}"] = max(v for k, v in by.items() if k != "values-gdp")
        out[f"{kind}_black_box_gdp_n{n}"] = by["values-gdp"]
        out[f"{kind}_black_box_seconds_n{n}"] = report.wall_time_s
        print(f"{kind:9s} n={n:6d}  white box {exact:8.3g}  black box {report.tester:10s} "
              f"{report.epsilon_lower_bound:8.3g}  ({report.verdict}; "
              + ", ".join(f"{k} {v:.3g}" for k, v in by.items()) + ")")
    return out


def entry(name: str, horizon: int, n: int, epsilon: float) -> dict[str, float]:
    """The black-box audit of entry `name`, its reward of round 5 flipped."""
    entry = get_algorithm(name)  # its defaults, on its default world
    config = {**entry.defaults, "epsilon": epsilon, "horizon": horizon,
              "environment": defaults(entry.environment)}
    report = audit_entry_transcripts(name, config, 3, min(5, horizon - 1), n, rng=0,
                                     gaussian=True)
    print(f"{name} (T = {horizon}, n = {n}): {report.verdict}, eps >= "
          f"{report.epsilon_lower_bound:.3g} against {report.claimed_epsilon:g} "
          f"({report.details['evidence']})")
    return {"entry_black_box_epsilon": report.epsilon_lower_bound,
            "entry_claimed_epsilon": report.claimed_epsilon,
            "entry_seconds_per_transcript": report.wall_time_s / (2 * n)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", default="500,2000,8000", help="transcripts per world")
    parser.add_argument("--horizon", type=int, default=30)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--entry", default="cdp-fedc3ucb-h")
    parser.add_argument("--entry-horizon", type=int, default=32)
    parser.add_argument("--entry-samples", type=int, default=500)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (CI)")
    args = parser.parse_args()
    sizes = [100] if args.smoke else [int(s) for s in args.samples.split(",")]
    horizon = 8 if args.smoke else args.horizon
    if args.smoke:
        args.entry_horizon, args.entry_samples = 8, 8
    mech = GaussianVector.from_privacy(args.epsilon, DELTA, l2_sensitivity=1.0, sampler=FAST)
    claim = Claim.from_event(mech.event, DELTA)
    figures = {"claimed_epsilon": claim.epsilon}
    for kind in ("released", "raw", "threshold"):
        figures.update(measure(kind, mech, claim, horizon, sizes))
    figures.update(entry(args.entry, args.entry_horizon, args.entry_samples, args.epsilon))
    for key, value in figures.items():
        print(f"{key}: {value:.4g}")


if __name__ == "__main__":
    main()
