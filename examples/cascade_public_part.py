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

Part 3 measures, without privacy, what each record a release could carry costs
in data: seed 001's default world (J = 10), each agent alone (FedInd's agent),
its ridge model fed per round with

- "examined": the examined items and their clicks (FedInd: the Gram matrix is
  secret once the list is public, see above);
- "displayed": every displayed item, reward 1 at the first click, else 0
  (public Gram; biased: position k's mean is w_k prod_(j<k) (1 - w_j));
- "ips": the same, the click reweighted by one over the examination
  probability prod_(j<k) (1 - w_j) estimated from the agent's model, capped
  at 4 (public Gram; unbiased only where the model is right; the cap and the
  weights multiply the sensitivity);
- "first": position 1 alone (public Gram, unbiased: always examined).

    python examples/cascade_public_part.py [--flips 16] [--horizon 20000] [--epsilon 1]
        [--estimator-horizon 131071] [--estimator-seeds 1] [--smoke]

Ends with one `key: value` line per figure.
"""
from __future__ import annotations

import argparse

import numpy as np

from privbandit.auditing.end_to_end import differing_releases
from privbandit.auditing.target import AuditTarget
from privbandit.cascade import IndependentCascadeUCB
from privbandit.cascade.oracle import observed_positions
from privbandit.envs import seed001_environment
from privbandit.kernels import sherman_morrison
from privbandit.runtime import run, seed_streams

NAME = "cdp-fedc3ucb-h"
RECORDS = ("examined", "displayed", "ips", "first")
IPS_CAP = 4.0


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


class RecordedAlone(IndependentCascadeUCB):
    """FedInd's agent whose ridge model is fed the records of `kind` (see the module
    docstring): a yardstick of what each record costs in data, without privacy."""

    def __init__(self, *args, kind: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.kind = kind

    def update(self, items, user, action, feedback, t) -> None:
        observed, clicked = self._observed(items, action, feedback)
        shown = items[action]
        clicks = np.zeros(self.list_len)
        if clicked is not None:
            clicks[clicked] = 1.0
        if self.kind == "examined":
            rows, rewards = observed, clicks[:observed.shape[0]]
        elif self.kind == "first":
            rows, rewards = shown[:1], clicks[:1]
        else:
            rows, rewards = shown, clicks
            if self.kind == "ips":
                w = np.clip(shown @ self.theta[user], 0.0, 1.0)
                seen = np.concatenate(([1.0], np.cumprod(1.0 - w)[:-1]))
                rewards = np.minimum(clicks / np.maximum(seen, 1.0 / IPS_CAP), IPS_CAP)
        inv = self.inv[user]
        for x in rows:
            sherman_morrison(inv, x)
        self.moment[user] += rewards @ rows
        self._stacked[user, :, -1] = inv @ self.moment[user]


def record_costs(horizon: int, seeds: int, world: dict) -> dict[str, float]:
    """Mean final regret of each record kind alone, over `seeds` worlds (base seed 2024)."""
    out = {}
    for kind in RECORDS:
        total = 0.0
        for s in range(seeds):
            env = seed001_environment(seed_streams(np.random.SeedSequence([2024, s]))["world"],
                                      **world)
            agent = RecordedAlone(env.dim, env.n_users, env.n_items, env.list_len, horizon,
                                  kind=kind)
            total += float(run(agent, env, horizon, s).regret.sum())
        out[kind] = total / seeds
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flips", type=int, default=16)
    ap.add_argument("--horizon", type=int, default=20000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--estimator-horizon", type=int, default=131_071)
    ap.add_argument("--estimator-seeds", type=int, default=1)
    ap.add_argument("--smoke", action="store_true", help="2 flips, 500 rounds")
    args = ap.parse_args()
    world = {"n_clusters": 10}
    if args.smoke:
        args.flips, args.horizon, args.estimator_horizon = 2, 500, 500
        world.update(n_users=6, n_clusters=2, dim=4, n_items=12)
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
    costs = record_costs(args.estimator_horizon, args.estimator_seeds, world)
    for kind, regret in costs.items():
        print(f"alone_{kind}_regret: {regret:.1f}")
        print(f"alone_{kind}_over_examined: {regret / costs['examined']:.3f}")


if __name__ == "__main__":
    main()
