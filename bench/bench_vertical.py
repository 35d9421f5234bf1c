"""VFUCB's cost against LinUCB (seed 003, Section 5.2, Fig. 5): time ratio and bytes per party.

Setting: seed 003's synthetic world, d = 100 features split [20, 20, 20, 20, 20]
over M = 5 parties, K in {100, 500, 1000} items a round, T = 5000 rounds,
beta = 0.5.  For each K, in one process and on the same seed:

- LinUCB on the full features (`privbandit.run`);
- VFUCB with plain per-round traffic (the paper's protocol: serialized masked
  batches, masks still sealed at setup);
- VFUCB with sealed per-round traffic (every masked batch sealed for the
  active party on its session channel: one X25519 agreement per party pair at
  setup, AES-256-GCM per message, `privbandit.mechanisms.sealing.ChannelSender`).

Time is the algorithm's alone, in CPU seconds of this process: LinUCB's
select + update, and VFUCB's whole round as all roles play it one after the
other (requests, masking, serialization, sealing, opening, checks, sum,
select, update); drawing the world is excluded.  The three are played in
lockstep, round by round, on identical copies of the world, so load changes
on a shared machine hit them alike; VFUCB's choice is checked to equal
LinUCB's every round.  Bytes are what each role sent, divided by T.  BLAS
runs on one thread.

Then d = 20 split [4, 4, 4, 4, 4], K = 100, the same way:
`vfucb_over_linucb_plain` and `vfucb_over_linucb_sealed` (targets <= 2 and <= 5),
and `vfucb_floor_over_linucb`: the arithmetic no protocol can skip, alone (each
party's Q^j x^j, their sum, and LinUCB on the masked sum, with no messages,
checks or logging), over LinUCB -- the floor of the plain ratio.

Usage: python bench/bench_vertical.py [--horizon 5000] [--items 100 500 1000] [--no-sealed]
                                      [--smoke]
(--smoke: a tiny run for the tests, seconds)
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
from privbandit.policies import LinUCB  # noqa: E402
from privbandit.runtime import seed_streams  # noqa: E402
from privbandit.vertical import VerticalFederation  # noqa: E402
from privbandit.vertical.ties import TieTolerant  # noqa: E402

D, M, BETA, SEED = 100, 5, 0.5, 0


def _world(n_items: int, dim: int = D):
    world = seed003_environment(dim, n_items, rng=seed_streams(SEED)["world"])
    world.reset(seed_streams(SEED)["rounds"])
    return world


def measure(n_items: int, horizon: int, sealed: bool, dim: int = D) -> dict[str, float]:
    """Play LinUCB and the VFUCB variants in lockstep, round by round, on identical worlds.

    Interleaving makes load changes on a shared machine hit every algorithm
    alike; each algorithm's rounds are timed in CPU seconds of this process.
    """
    modes = ("plain", "sealed") if sealed else ("plain",)
    split = FeatureSplit.equal(dim, M)
    central_world = _world(n_items, dim)
    worlds = {mode: VerticalSplit(_world(n_items, dim), split) for mode in modes}
    linucb = TieTolerant(LinUCB(dim, beta=BETA))
    floor = TieTolerant(LinUCB(dim, beta=BETA))  # LinUCB on the masked sum, nothing else
    blocks = [np.ascontiguousarray(b.T) for b in np.split(
        np.linalg.qr(np.random.default_rng(SEED).standard_normal((dim, dim)))[0],
        np.cumsum(split.widths)[:-1], axis=1)]

    feds = {mode: VerticalFederation(split, TieTolerant(LinUCB(dim, beta=BETA)),
                                     rng=seed_streams(SEED)["secrets"],
                                     seal_traffic=mode == "sealed")
            for mode in modes}
    spent = dict.fromkeys(("linucb", "floor", *modes), 0.0)
    rng = seed_streams(SEED)["policy"]  # LinUCB draws nothing from it
    clock = time.process_time
    for t in range(horizon):
        items = central_world.observe(t).items
        start = clock()
        action = linucb.select(items, 0, t, rng)
        spent["linucb"] += clock() - start
        reward = central_world.act(t, action).feedback
        start = clock()
        linucb.update(items, 0, action, reward, t)
        spent["linucb"] += clock() - start
        parts = split.split(items)
        start = clock()
        masked = parts[0].dot(blocks[0])
        for part, block in zip(parts[1:], blocks[1:], strict=True):
            masked += part.dot(block)
        if floor.select(masked, 0, t, rng) != action:
            raise AssertionError(f"LinUCB on masked contexts left LinUCB's choice at round {t}")
        floor.update(masked, 0, action, reward, t)
        spent["floor"] += clock() - start
        for mode, fed in feds.items():
            rnd = worlds[mode].observe(t)
            start = clock()
            pending = fed.decide(rnd, rng)
            spent[mode] += clock() - start
            if pending.action != action:
                raise AssertionError(f"VFUCB ({mode}) left LinUCB's choice at round {t}")
            out = worlds[mode].act(t, pending.action)
            start = clock()
            fed.commit(pending, out.feedback)
            spent[mode] += clock() - start
    out = {"linucb_s": spent["linucb"], "floor_s": spent["floor"]}
    for mode, fed in feds.items():
        sent = fed.comm_summary()["bytes_by_party"]
        out[f"{mode}_s"] = spent[mode]
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
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.horizon, args.items = 20, [10]
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
    # the cost targets (issue 24): d = 20, K = 100, plain and sealed traffic
    small = measure(100, args.horizon, True, dim=20)
    print(f"d = 20, K = 100: LinUCB {small['linucb_s']:.2f} s, VFUCB {small['plain_s']:.2f} s, "
          f"sealed {small['sealed_s']:.2f} s")
    print(f"  the masking arithmetic alone (M products Q^j x^j, their sum, LinUCB on it): "
          f"{small['floor_s']:.2f} s")
    figures += [("vfucb_floor_over_linucb", f"{small['floor_s'] / small['linucb_s']:.2f}"),
                ("vfucb_over_linucb_plain", f"{small['plain_s'] / small['linucb_s']:.2f}"),
                ("vfucb_over_linucb_sealed", f"{small['sealed_s'] / small['linucb_s']:.2f}")]
    for key, value in figures:
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
