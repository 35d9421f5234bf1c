"""VFUCB's cost against LinUCB (seed 003, Section 5.2, Fig. 5): time ratio and bytes per party.

Setting: seed 003's synthetic world, d = 100 features split [20, 20, 20, 20, 20]
over M = 5 parties, K in {100, 500, 1000} items a round, T = 5000 rounds,
beta = 0.5.  For each K, in one process and on the same seed:

- LinUCB on the full features (`privbandit.run.run`);
- VFUCB with plain per-round traffic (the paper's protocol: serialized masked
  batches, masks still sealed at setup);
- VFUCB with sealed per-round traffic (every masked batch sealed for the
  active party with X25519 + HKDF + AES-GCM, `mechanisms.sealing`).

Time is the algorithm's alone: LinUCB's select + update, and VFUCB's whole
round as all roles play it one after the other (requests, masking,
serialization, sealing, opening, checks, sum, select, update); drawing the
world is excluded from both.  Both runs make the same decisions (checked).
Bytes are what each role sent, divided by T.  BLAS runs on one thread.

Usage: python bench/bench_vertical.py [--horizon 5000] [--items 100 500 1000] [--no-sealed]
Output ends with key: value lines.
"""
from __future__ import annotations

import argparse
import os
import time

# One BLAS thread, set before NumPy loads: on a shared machine, threaded BLAS
# contention would swamp the ratio (both algorithms are timed the same way).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from privbandit.envs.vertical import FeatureSplit, VerticalSplit, seed003_environment  # noqa: E402
from privbandit.policies import LinUCB, Policy  # noqa: E402
from privbandit.run import run, seed_streams  # noqa: E402
from privbandit.vertical import run_vertical  # noqa: E402
from privbandit.vertical.ties import TieTolerant  # noqa: E402

D, M, BETA, SEED = 100, 5, 0.5, 0


class Timed(Policy):
    """A policy whose select and update are timed (seconds in `elapsed`)."""

    def __init__(self, inner: Policy) -> None:
        self.inner, self.dim, self.name, self.elapsed = inner, inner.dim, inner.name, 0.0

    def select(self, items, user, t, rng):
        start = time.perf_counter()
        out = self.inner.select(items, user, t, rng)
        self.elapsed += time.perf_counter() - start
        return out

    def update(self, items, user, action, feedback, t):
        start = time.perf_counter()
        self.inner.update(items, user, action, feedback, t)
        self.elapsed += time.perf_counter() - start


def measure(n_items: int, horizon: int, sealed: bool) -> dict[str, float]:
    world = seed003_environment(D, n_items, rng=seed_streams(SEED)["world"])
    split = VerticalSplit(world, FeatureSplit.equal(D, M))
    linucb = Timed(TieTolerant(LinUCB(D, beta=BETA)))
    central = run(linucb, world, horizon, SEED)
    out = {"linucb_s": linucb.elapsed, "linucb_regret": central.total_regret}
    for mode in ("plain", "sealed") if sealed else ("plain",):
        vf = run_vertical(TieTolerant(LinUCB(D, beta=BETA)), split, horizon, SEED,
                          seal_traffic=mode == "sealed")
        if not np.array_equal(vf.regret, central.regret):
            raise AssertionError(f"VFUCB ({mode}) did not reproduce LinUCB's regret at K={n_items}")
        sent = vf.comm["bytes_by_party"]
        out[f"{mode}_s"] = vf.timings["passive"] + vf.timings["active"]
        out[f"{mode}_passive_bytes"] = np.mean([sent[f"passive-{j}"] for j in range(1, M)])
        out[f"{mode}_passive_bytes"] /= horizon
        out[f"{mode}_active_bytes"] = sent["active"] / horizon
        out[f"{mode}_mask_bytes"] = sent["generator"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=5000)
    parser.add_argument("--items", type=int, nargs="+", default=[100, 500, 1000])
    parser.add_argument("--no-sealed", dest="sealed", action="store_false")
    args = parser.parse_args()
    print(f"d = {D}, M = {M}, widths {FeatureSplit.equal(D, M).widths}, T = {args.horizon}")
    print(f"{'K':>5} {'LinUCB s':>9} {'VFUCB s':>9} {'ratio':>6} {'sealed s':>9} {'ratio':>6} "
          f"{'B/passive/round':>16} {'sealed':>8} {'B/active/round':>15}")
    figures = []
    for k in args.items:
        r = measure(k, args.horizon, args.sealed)
        plain_ratio = r["plain_s"] / r["linucb_s"]
        sealed_ratio = r["sealed_s"] / r["linucb_s"] if args.sealed else float("nan")
        print(f"{k:>5} {r['linucb_s']:>9.2f} {r['plain_s']:>9.2f} {plain_ratio:>6.2f} "
              f"{r.get('sealed_s', float('nan')):>9.2f} {sealed_ratio:>6.2f} "
              f"{r['plain_passive_bytes']:>16.0f} {r.get('sealed_passive_bytes', 0):>8.0f} "
              f"{r['plain_active_bytes']:>15.0f}", flush=True)
        figures += [
            (f"vfucb_time_ratio_K{k}", f"{plain_ratio:.2f}"),
            (f"vfucb_sealed_time_ratio_K{k}", f"{sealed_ratio:.2f}"),
            (f"bytes_per_passive_party_per_round_K{k}", f"{r['plain_passive_bytes']:.0f}"),
            (f"bytes_per_passive_party_per_round_sealed_K{k}",
             f"{r.get('sealed_passive_bytes', float('nan')):.0f}"),
            (f"bytes_active_party_per_round_K{k}", f"{r['plain_active_bytes']:.0f}"),
        ]
    figures.append(("mask_setup_bytes_total", f"{r['plain_mask_bytes']:.0f}"))
    for key, value in figures:
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
