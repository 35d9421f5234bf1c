"""What the active party can learn from VFUCB's traffic: the audit layer's mask attacks.

Masks are not differential privacy.  This example measures how far from it
they are, on the protocol's own messages (sealed traffic, opened by the
active party as the protocol intends), for passive party 1:

1. seed 003's synthetic world (d = 100 split [20] * 5, K = 10): the
   known-plaintext attack (`privbandit.audits.attacks.masks.known_plaintext`) against
   the number k of known (features, masked) pairs -- exact from k = d_j = 20;
   the exact leak of norms and inner products with nothing known; and the
   PCA attack against the rounds observed -- it finds the span of Q^1 at
   once, but sphere-uniform features are symmetric, so not Q^1 itself;
2. a world with skewed, non-negative features of distinct variances (d = 30
   split [10] * 3; counts, ages, amounts look like this): the PCA attack
   recovers Q^1 itself as rounds accumulate.

Prints tables, writes a PNG and ends with key: value lines.

Usage: python examples/vertical_leakage.py [--rounds 1000] [--sample 2000]
                                          [--out vertical_figures]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from privbandit.audits.attacks.masks import skewed_contexts  # noqa: E402
from privbandit.envs import LinearUsersEnv, PoolItems  # noqa: E402
from privbandit.envs.vertical import FeatureSplit, VerticalSplit, seed003_environment  # noqa: E402
from privbandit.policies import LinUCB  # noqa: E402
from privbandit.runtime import run_setup, seed_streams  # noqa: E402
from privbandit.vertical.leakage import (  # noqa: E402
    TrafficRecorder,
    gram_error,
    known_plaintext_curve,
    pca_curve,
    population_sample,
)

SEED = 0


def collect_traffic(policy, env, rounds: int):
    """Passive party 1's traffic of one run of the protocol on `env`."""
    recorder = TrafficRecorder(policy, env, rounds, seed_streams(SEED)["secrets"], party=1)
    run_setup(recorder.setup, SEED)
    return recorder.traffic()


def synthetic_world(rounds: int):
    world = seed003_environment(100, 10, rng=seed_streams(SEED)["world"])
    env = VerticalSplit(world, FeatureSplit.equal(100, 5))
    return env, collect_traffic(LinUCB(100, beta=0.5), env, rounds)


def skewed_world(rounds: int):
    rng = np.random.default_rng(SEED)
    # each party's 10 columns: exponential features with scales 1..2 (distinct variances);
    # one constant rescaling keeps every item in the unit ball without mixing columns
    pool = np.concatenate([skewed_contexts(20000, 10, rng) for _ in range(3)], axis=1)
    pool /= np.linalg.norm(pool, axis=1).max()
    theta = rng.standard_normal((1, 30))
    world = LinearUsersEnv(theta / np.linalg.norm(theta), PoolItems(pool, 10), reward="gaussian",
                           noise_sd=0.2, name="skewed-features")
    env = VerticalSplit(world, FeatureSplit.equal(30, 3))
    return env, collect_traffic(LinUCB(30, beta=0.5), env, rounds)


def table(title: str, rows) -> None:
    print(f"\n# {title}")
    print(f"{'observed':>9} {'block error':>12} {'span error':>11} {'decode error':>13}")
    for r in rows:
        print(f"{r.observed:>9} {r.block_error:>12.3g} {r.subspace_error:>11.3g} "
              f"{r.context_error:>13.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=2000,
                        help="rounds of unpaired population sample the PCA attacker holds")
    parser.add_argument("--out", type=Path, default=Path("vertical_figures"))
    parser.add_argument("--smoke", action="store_true", help="a tiny run (the tests)")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.sample = 50, 200
    args.out.mkdir(parents=True, exist_ok=True)
    rounds = [r for r in (1, 5, 20, 50, 100, 200, 500, 1000) if r <= args.rounds]

    env, traffic = synthetic_world(args.rounds)
    pairs = known_plaintext_curve(traffic, [1, 5, 10, 15, 19, 20, 25, 40])
    table("seed 003 world, party 1 (d_1 = 20): known-plaintext attack vs pairs k", pairs)
    gram = gram_error(traffic)
    print(f"\nnorms and inner products read off the traffic: max error {gram:.3g}")
    sample = population_sample(env, 1, args.sample, np.random.default_rng(1))
    pca_iso = pca_curve(traffic, rounds, sample)
    table("seed 003 world: PCA attack vs rounds observed (K = 10 rows a round)", pca_iso)

    env2, traffic2 = skewed_world(args.rounds)
    sample2 = population_sample(env2, 1, args.sample, np.random.default_rng(1))
    pca_skew = pca_curve(traffic2, rounds, sample2)
    table("skewed-features world, party 1 (d_1 = 10): PCA attack vs rounds observed", pca_skew)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    floor = 1e-17
    axes[0].semilogy([r.observed for r in pairs], [max(r.context_error, floor) for r in pairs],
                     "o-", label="decoded features (held-out rows)")
    axes[0].semilogy([r.observed for r in pairs], [max(r.block_error, floor) for r in pairs],
                     "s--", label="mask block Q^1")
    axes[0].axvline(20, color="grey", lw=0.8)
    axes[0].set(xlabel="known (features, masked) pairs k", ylabel="max error",
                title="known-plaintext attack (d_1 = 20)")
    axes[0].legend(fontsize=8)
    for rows, label in ((pca_iso, "sphere features: block"), (pca_skew, "skewed features: block")):
        axes[1].semilogy([r.observed for r in rows], [max(r.block_error, floor) for r in rows],
                         "o-", label=label)
    axes[1].semilogy([r.observed for r in pca_iso],
                     [max(r.subspace_error, floor) for r in pca_iso], "s--",
                     label="either: span of Q^1 (sine of angle)")
    axes[1].set(xscale="log", xlabel="rounds of traffic observed", ylabel="error",
                title="PCA (known-sample) attack")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    path = args.out / "vertical_leakage.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    print(f"\nfigure: {path}")

    by_k = {r.observed: r for r in pairs}
    print(f"known_plaintext_decode_error_k19: {by_k[19].context_error:.3g}")
    print(f"known_plaintext_decode_error_k20: {by_k[20].context_error:.3g}")
    print(f"gram_leak_max_error: {gram:.3g}")
    print(f"pca_span_error_sphere_{rounds[0]}_round: {pca_iso[0].subspace_error:.3g}")
    print(f"pca_block_error_sphere_{rounds[-1]}_rounds: {pca_iso[-1].block_error:.3g}")
    print(f"pca_block_error_skewed_{rounds[0]}_round: {pca_skew[0].block_error:.3g}")
    print(f"pca_block_error_skewed_{rounds[-1]}_rounds: {pca_skew[-1].block_error:.3g}")


if __name__ == "__main__":
    main()
