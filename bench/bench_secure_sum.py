"""Secure sums: the cost of a release against a plain Gaussian one, and the audit's power.

Measures, in one run:

- per release, a continual-release step over secure sums ("tree" and "mf",
  simulated masks, every party's d-vector) against a step of the central
  stream of the same mechanism on the summed vector (default float-safe
  sampler), for 5, 20 and 80 parties at d = 20; and a one-shot `SecureSum`
  release against `GaussianVector.release` of the sum.  The two sides
  alternate batch by batch (a change of load hits both alike); each ratio is
  the median over batch pairs, each time the best batch;
- a one-shot release with key-agreement masks (X25519 + HKDF, Shamir-shared
  self masks), in milliseconds;
- the noise each costs: the secure stream's sigma over the central exact
  Gaussian stream's (zCDP accounting of the discrete sum), and over the
  central zCDP calibration (rounding only);
- the audit of `audits.cases.secure_sum_case` (5 parties, (1, 1e-5) by zCDP)
  and of its half-variance control over `--seeds` seeds at 100,000 runs per
  side: how often the honest sum stays consistent, how often the control is
  caught, and the lower bounds.

Prints a table, then one `key: value` line per figure.

    .venv/bin/python bench/bench_secure_sum.py [--seeds 20] [--smoke]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from privbandit.accounting import calibrate_gaussian_sigma
from privbandit.audits.cases import secure_sum_case
from privbandit.audits.controls import secure_sum_half_variance
from privbandit.audits.suite import run_case
from privbandit.mechanisms import GaussianVector, SecureSum, continual_release
from privbandit.mechanisms import secure_continual_release as secure_release

DIM = 20
HORIZON = 2**17
DELTA = 1e-5


def batch_seconds(fn, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def paired(secure, plain, calls: int, batches: int) -> tuple[float, float, float]:
    """(best secure s, best plain s, median of secure/plain over alternating batch pairs)."""
    secure(), plain()
    pairs = [(batch_seconds(secure, calls), batch_seconds(plain, calls)) for _ in range(batches)]
    return (min(s for s, _ in pairs), min(p for _, p in pairs),
            statistics.median(s / p for s, p in pairs))


def stream_costs(kind: str, parties: int, calls: int, batches: int):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((parties, DIM)) / (2 * np.sqrt(DIM))
    secure = secure_release(kind, parties, (DIM,), HORIZON, epsilon=1.0, delta=DELTA)
    central = continual_release(kind, (DIM,), HORIZON, epsilon=1.0, delta=DELTA)
    total = x.sum(axis=0) / parties
    return paired(lambda: secure.add(x, rng), lambda: central.add(total, rng), calls, batches)


def one_shot_costs(parties: int, calls: int, batches: int):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((parties, DIM)) / (2 * np.sqrt(DIM))
    secure = SecureSum(parties, (DIM,), epsilon=1.0, delta=DELTA)
    central = GaussianVector.from_privacy(1.0, DELTA, 1.0)
    total = x.sum(axis=0)
    return paired(lambda: secure.release(x, rng), lambda: central.release(total, rng), calls,
                  batches)


def crypto_ms(parties: int, calls: int) -> float:
    from privbandit.mechanisms.agreed_masks import AgreedMasks
    from privbandit.mechanisms.sealing import PartyKeys, new_session

    masks = AgreedMasks.from_keys([PartyKeys.generate() for _ in range(parties)], new_session())
    mech = SecureSum(parties, (DIM,), min_survivors=parties - 1, epsilon=1.0, delta=DELTA,
                     masks=masks)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((parties, DIM)) / (2 * np.sqrt(DIM))
    return 1e3 * min(batch_seconds(lambda: mech.release(x, rng, dropped=[0]), calls)
                     for _ in range(3))


def noise_overheads(kind: str, parties: int) -> tuple[float, float]:
    """(secure sigma / central exact-Gaussian sigma, / central zCDP sigma) at (1, 1e-5)."""
    secure = secure_release(kind, parties, (DIM,), HORIZON, epsilon=1.0, delta=DELTA)
    central = continual_release(kind, (DIM,), HORIZON, epsilon=1.0, delta=DELTA)
    sens = central.event.node_event.l2_sensitivity if kind == "tree" else (
        central.event.release_event.l2_sensitivity)
    zcdp = calibrate_gaussian_sigma(1.0, DELTA, sens, nodes_per_record=central.nodes_per_record,
                                    accountant="zcdp")
    return secure.sigma / central.sigma, secure.sigma / zcdp


def audit_power(seeds: int, samples: int | None) -> dict:
    honest, control = secure_sum_case(), secure_sum_half_variance()
    out = {"honest": [], "control": []}
    for seed in range(seeds):
        for name, case in (("honest", honest), ("control", control)):
            out[name].append(run_case(case, rng=1000 + seed, samples=samples))
    return {"claim": honest.claim.epsilon, **out}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=20, help="audit seeds per case")
    p.add_argument("--smoke", action="store_true", help="tiny sizes (CI)")
    a = p.parse_args()
    parties_list = (3,) if a.smoke else (5, 20, 80)
    calls, batches = (5, 2) if a.smoke else (200, 9)
    figures: dict[str, float] = {}
    print(f"{'release':>24} {'parties':>7} {'secure us':>10} {'plain us':>9} {'ratio':>7}")
    for parties in parties_list:
        for kind in ("tree", "mf"):
            s, c, ratio = stream_costs(kind, parties, calls, batches)
            print(f"{kind + ' step (d=20)':>24} {parties:>7} {1e6 * s:>10.1f} {1e6 * c:>9.1f} "
                  f"{ratio:>7.2f}")
            figures[f"secure_{kind}_step_over_central_n{parties}"] = ratio
            figures[f"secure_{kind}_step_us_n{parties}"] = 1e6 * s
        s, c, ratio = one_shot_costs(parties, calls, batches)
        print(f"{'one-shot sum (d=20)':>24} {parties:>7} {1e6 * s:>10.1f} {1e6 * c:>9.1f} "
              f"{ratio:>7.2f}")
        figures[f"secure_sum_over_gaussian_vector_n{parties}"] = ratio
    for parties in parties_list[:2]:
        figures[f"secure_sum_key_agreement_ms_n{parties}"] = crypto_ms(parties, 2 if a.smoke
                                                                        else 10)
    for kind in ("tree", "mf"):
        exact, zcdp = noise_overheads(kind, 20)
        figures[f"secure_{kind}_sigma_over_central_exact"] = exact
        figures[f"secure_{kind}_sigma_over_central_zcdp"] = zcdp
    seeds = 1 if a.smoke else a.seeds
    power = audit_power(seeds, 2000 if a.smoke else None)
    honest = [r.epsilon_lower_bound for r in power["honest"]]
    caught = [r.epsilon_lower_bound for r in power["control"]]
    figures["audit_claim_epsilon"] = power["claim"]
    figures["audit_honest_consistent"] = sum(r.verdict == "consistent" for r in power["honest"])
    figures["audit_honest_lower_bound_max"] = max(honest)
    figures["audit_honest_lower_bound_median"] = statistics.median(honest)
    figures["audit_control_caught"] = sum(r.verdict == "violation" for r in power["control"])
    figures["audit_control_lower_bound_min"] = min(caught)
    figures["audit_control_lower_bound_median"] = statistics.median(caught)
    figures["audit_seeds"] = seeds
    for key, value in figures.items():
        print(f"{key}: {value:.4g}")


if __name__ == "__main__":
    main()
