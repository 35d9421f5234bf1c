"""Cost of O3M masking and of sealing mask blocks, as ratios to references in the same run.

1. Mask + sum: M = 5 parties each mask their (K, d_j) contexts with Q^j and the
   active party adds the parts (K = 1000 items, d = 100, d_j = 20), as separate
   arrays (`mask` + `sum_masked`) and accumulated in one buffer (`mask_all`).
   Reference: the centralised transform Q x of the concatenated contexts (one
   (K, d) x (d, d) matmul, the cost of one batched LinUCB width evaluation).
2. Seal / open of a 100 x 20 float64 block (X25519 ephemeral-static +
   static-static, HKDF-SHA256, AES-256-GCM).  Reference: AES-256-GCM
   encryption / decryption of the same 16,000 bytes under a fixed key.
3. Aggregator: one feedback elicitation (2C + 2 = 8 rounds, C = 3) for N = 100
   users over K = 5 arms.  Reference: drawing the same users' rewards directly.

Run: /tmp/venv/bin/python bench/bench_masks.py
"""
from __future__ import annotations

import argparse
import os

# Single-threaded BLAS: steadier ratios on a machine shared by several jobs.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import time  # noqa: E402

import numpy as np  # noqa: E402
from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402

from privbandit.mechanisms.anonymous import KAnonymousAggregator, elicit_feedback
from privbandit.mechanisms.masks import OrthogonalMask, sum_masked
from privbandit.mechanisms.sealing import Opener, PartyKeys, Sealer


def best_times(*fns, repeats: int = 9, number: int = 20) -> list[float]:
    """Best-of-`repeats` mean seconds per call of each function, runs interleaved.

    Interleaving and taking the minimum keep a ratio honest on a shared machine:
    load that comes and goes hits every function alike.
    """
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t0) / number)
    return best


def bench_mask(rng: np.random.Generator) -> dict[str, float]:
    k, widths = 1000, (20, 20, 20, 20, 20)
    mask = OrthogonalMask.generate(widths, rng)
    parts = [rng.standard_normal((k, w)) for w in widths]
    full = np.concatenate(parts, axis=1)
    qt = np.ascontiguousarray(mask.q.T)
    # Protocol path: every party masks its own part, the active party adds them.
    per_party = lambda: sum_masked([mask.mask(j, x) for j, x in enumerate(parts)])
    accumulated = lambda: mask.mask_all(parts)  # same arithmetic, one output buffer
    central = lambda: full @ qt
    assert np.allclose(per_party(), central(), atol=1e-12)
    t_party, t_acc, t_ref = best_times(per_party, accumulated, central)
    (t_gen,) = best_times(lambda: OrthogonalMask.generate(widths, rng), number=5)
    return {"mask_sum_us": t_party * 1e6, "mask_all_us": t_acc * 1e6,
            "central_transform_us": t_ref * 1e6, "mask_sum_over_central": t_party / t_ref,
            "mask_all_over_central": t_acc / t_ref, "generate_q_us": t_gen * 1e6}


def bench_seal(rng: np.random.Generator) -> dict[str, float]:
    block = rng.standard_normal((100, 20))
    gen, party = PartyKeys.generate(), PartyKeys.generate()
    sealer = Sealer("generator", gen)
    opener = Opener("party-1", party, {"generator": gen.public})
    wire = sealer.seal_block(block, "party-1", party.public)
    assert np.array_equal(opener.open_block(wire), block)
    msgs = iter([sealer.seal_block(block, "party-1", party.public) for _ in range(200)])
    aead, nonce, payload = AESGCM(os.urandom(32)), os.urandom(12), block.tobytes()
    ct = aead.encrypt(nonce, payload, b"")
    t_seal, t_open, t_enc, t_dec = best_times(
        lambda: sealer.seal_block(block, "party-1", party.public),
        lambda: opener.open_block(next(msgs)),  # every message once: no replay refusals
        lambda: aead.encrypt(nonce, payload, b""),
        lambda: aead.decrypt(nonce, ct, b""),
        repeats=9, number=20,
    )
    return {"seal_us": t_seal * 1e6, "open_us": t_open * 1e6,
            "seal_over_aesgcm": t_seal / t_enc, "open_over_aesgcm": t_open / t_dec,
            "sealed_bytes": float(len(wire)), "block_bytes": float(block.nbytes)}


def bench_elicit(rng: np.random.Generator) -> dict[str, float]:
    n, k, c = 100, 5, 3
    mu = rng.uniform(size=(n, k))
    source = lambda users, arms, r: mu[users, arms] + r.standard_normal(users.shape)
    agg = KAnonymousAggregator(c, source, n_users=n, n_arms=k)
    assignment = rng.integers(0, k, n)
    users = np.tile(np.arange(n), 2 * c + 2)
    arms = np.tile(assignment, 2 * c + 2)
    t_elicit, t_draw = best_times(lambda: elicit_feedback(agg, assignment, rng),
                                  lambda: source(users, arms, rng), number=50)
    return {"elicit_us": t_elicit * 1e6, "elicit_us_per_round": t_elicit * 1e6 / (2 * c + 2),
            "elicit_over_raw_draw": t_elicit / t_draw}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help="accepted like the other scripts': this run is already seconds long")
    parser.parse_args()
    rng = np.random.default_rng(2024)
    figures = {**bench_mask(rng), **bench_seal(rng), **bench_elicit(rng)}
    for key, value in figures.items():
        print(f"{key}: {value:.4g}")


if __name__ == "__main__":
    main()
