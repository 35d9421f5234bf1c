"""The privacy loss of neighbouring environments, measured end to end (forced replay).

For each private federated-clustering variant, two runs share the world, the
arrivals, the contexts and every random stream; the second has one user-round's
reward flipped and every release forced to the first run's output.  The
printed epsilon (at the run's delta) is the pair's loss as adaptive
composition counts it; "differ" is how many releases had different pre-noise
inputs.  The paper preset (CDP-FCLUB-DC acting on raw buffers between
uploads) and the record-level design of the guarded algorithm (every round's
record released, its action chosen from raw data; rebuilt here as a control)
leak far beyond their budget; the defaults, whose released records all come
from actions chosen from released data, differ in the flipped record only.

    python examples/pair_loss.py [--horizon 8192] [--epsilon 1] [--flips 100,1000,4000]

Ends with one `key: value` line per variant: the worst pair's epsilon.
"""
from __future__ import annotations

import argparse

from privbandit.audits.environment import audit_pairs
from privbandit.endtoend import FlippedReward, neighbour_pair
from privbandit.fclub.guarded import GuardedFederatedClub
from privbandit.registry import get_algorithm
from privbandit.runtime import run
from privbandit.schema import defaults


class RecordLevelGuarded(GuardedFederatedClub):
    """The guarded algorithm as it was before the billboard: every round acts on raw data
    and every record enters its user's stream, its features wrongly marked public (so
    its Gram matrix is released unnoised: the audit finds it differs)."""

    def update(self, items, user, action, feedback, t):
        local = not self._shared
        super().update(items, user, action, feedback, t)
        if local:
            y = min(max(float(feedback), 0.0), 1.0)
            self.streams.enter(user, (items[action], y), by="control: a raw-driven action")


def config(name: str, horizon: int, epsilon: float, **params) -> dict:
    entry = get_algorithm(name)
    return {**entry.defaults, **params, "epsilon": epsilon, "horizon": horizon,
            "environment": defaults(entry.environment)}


def control_pair(cfg: dict, seed: int, at: int):
    def play(which: int):
        built = get_algorithm("cdp-fclub-dc+").setup(cfg, seed)
        leaky = RecordLevelGuarded(built.protocol.config, built.protocol.plan)
        if which:
            FlippedReward(built.env, at)
        return run(leaky, built.env, built.horizon, seed)
    return play


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--horizon", type=int, default=8192)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--flips", default="100,1000,4000", help="rounds flipped, comma-separated")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--smoke", action="store_true", help="a tiny run (checks the script works)")
    args = p.parse_args()
    horizon, flips = args.horizon, [int(f) for f in args.flips.split(",")]
    if args.smoke:
        horizon, flips = 256, [5, 100]
    paper = get_algorithm("cdp-fclub-dc").presets["paper"]
    variants = {
        "cdp_fclub_dc_paper": ("cdp-fclub-dc", paper),
        "cdp_fclub_dc": ("cdp-fclub-dc", {}),
        "cdp_fclub_dc_plus": ("cdp-fclub-dc+", {}),
        "record_level_guarded": ("cdp-fclub-dc+", None),
    }
    worst = {}
    for key, (name, params) in variants.items():
        cfg = config(name, horizon, args.epsilon, **(params or {}))
        if params is None:
            pairs = {f"flip at {a}": control_pair(cfg, args.seed, a) for a in flips}
        else:
            pairs = {f"flip at {a}": neighbour_pair(name, cfg, args.seed, a)[0] for a in flips}
        delta = cfg.get("delta", 1e-5)
        report = audit_pairs(pairs, delta, None)
        print(f"{key} (claim epsilon {args.epsilon:g}, delta {delta:g}, T = {horizon}):")
        print(report.describe())
        worst[key] = report.worst.epsilon
    for key, value in worst.items():
        print(f"{key}_worst_epsilon: {value:.4g}")


if __name__ == "__main__":
    main()
