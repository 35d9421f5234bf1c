"""What is public in a cascade's released statistic, as the end-to-end audit sees it.

CDP-FedC3UCB-H chooses its list from released models only, so the list is the
same in both neighbours along a forced transcript.  What the user examines is
not: positions 2..K are examined only when nothing above them was clicked, so
a round's examined items, and with them the Gram block of its record, depend
on its click feedback.  Only position 1 is examined whatever the feedback.

Part 1 replays the entry's registry audit world (`privbandit.auditing.end_to_end`) on
neighbours flipped at spread rounds, every release forced, and reads each
differing release input (`differing_releases`): how many flips move its Gram
block, by how much, and the trace of that change (unit-norm items: how many
examined positions the flip added or removed; position 1 never is).  Part 2
counts, on the entry's default world at a longer horizon, which share of the
examined items sits at position 1: the share of the data whose Gram matrix is
public, and so the most that releasing it exactly could recover.

    python examples/cascade_public_part.py [--flips 16] [--horizon 20000] [--epsilon 1] [--smoke]

Ends with one `key: value` line per figure.
"""
from __future__ import annotations

import argparse

import numpy as np

from privbandit.auditing.end_to_end import differing_releases
from privbandit.auditing.target import AuditTarget
from privbandit.cascade.oracle import observed_positions

NAME = "cdp-fedc3ucb-h"


def gram_changes(epsilon: float, flips: int, seed: int = 3) -> list[tuple[int, float, float]]:
    """(round, largest Gram-block change, trace of the change) of each flip that moved a
    release input, on the entry's audit world."""
    config = dict(AuditTarget.of(NAME, epsilon=epsilon).config)
    horizon = int(config["horizon"])
    out = []
    for at in np.linspace(5, horizon - 2, flips).astype(int):
        for first, second in differing_releases(NAME, config, seed, int(at)):
            change = np.asarray(second.value) - np.asarray(first.value)
            d = change.shape[-1] - 1
            block = change[..., :d, :d]
            out.append((int(at), float(np.abs(block).max()),
                        float(np.trace(block, axis1=-2, axis2=-1).sum())))
    return out


def position_one_share(epsilon: float, horizon: int, seed: int = 0) -> tuple[int, int]:
    """(rounds, examined items) of the entry's run on its default world."""
    built, streams = AuditTarget.of(NAME, epsilon=epsilon).with_horizon(horizon).setup(seed)
    env, policy, rng, examined = built.env, built.protocol, streams["policy"], []
    env.reset(streams["rounds"])
    policy.start(env, horizon, rng)
    for t in range(horizon):  # round by round, to read each round's examined items
        _, user, items = env.observe(t)
        action = policy.select(items, user, t, rng)
        feedback = env.act(t, action).feedback
        policy.update(items, user, action, feedback, t)
        examined.append(observed_positions(int(feedback), env.list_len))
    return len(examined), int(np.sum(examined))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flips", type=int, default=16)
    ap.add_argument("--horizon", type=int, default=20000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--smoke", action="store_true", help="2 flips, 500 rounds")
    args = ap.parse_args()
    if args.smoke:
        args.flips, args.horizon = 2, 500
    changes = gram_changes(args.epsilon, args.flips)
    moved = [c for c in changes if c[1] > 0]
    for at, largest, trace in changes:
        print(f"flip at {at}: Gram block changes by up to {largest:.3f}, trace {trace:+.2f}")
    rounds, examined = position_one_share(args.epsilon, args.horizon)
    print(f"{rounds} rounds examined {examined} items: position 1 is {rounds / examined:.1%}")
    print(f"flips_moving_a_release: {len(changes)} of {args.flips}")
    print(f"flips_moving_the_gram_block: {len(moved)}")
    print(f"gram_block_max_change: {max((c[1] for c in changes), default=0.0):.3f}")
    print(f"gram_trace_max_change: {max((abs(c[2]) for c in changes), default=0.0):.2f}")
    print(f"position1_share: {rounds / examined:.3f}")


if __name__ == "__main__":
    main()
