"""What the black-box audit can see: its power on known leaks, at several sizes.

A black-box audit that reads "consistent, epsilon >= 0" is evidence of privacy
only if it would have seen a leak.  For each registry entry and size (horizon
T, n transcripts per world) this prints the audit's own bound on the entry, on
its registry audit world (`privbandit.auditing.end_to_end.AUDIT_WORLDS`, as
`privbandit audit --black-box` runs it)
(reward of round 5 flipped; epoch 0 or the first draw for the federated and
anonymous bandits), the largest bound n transcripts per world can give, and
the bounds it finds on known leaks planted in the same transcripts (one extra
release costing exactly 2, 8 or 32 times the claim:
`privbandit.audits.audit_transcripts(power=...)`).  For cdp-fclub-dc+ it also
audits a real leak on the entry's default world: the record-level design of
the guarded federation (every round acts on raw data and every record is
released, `pair_loss.py`), whose exact pair loss the white-box forced replay
gives.

    python examples/black_box_power.py [--sizes cdp-fclub-dc+:32:200,...] [--smoke]

Ends with one `key: value` line per figure.
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace

import numpy as np

from privbandit.auditing.black_box import (
    BLACK_BOX_FLIPS,
    POWER_MULTIPLES,
    _transcript,
    audit_entry_transcripts,
)
from privbandit.auditing.end_to_end import FlippedReward, audit_config, small_config
from privbandit.audits import audit_pairs
from privbandit.audits.transcript import audit_transcripts
from privbandit.registry import get_algorithm
from privbandit.runtime import play_setup, seed_sequence, seed_streams

SIZES = ("cdp-fclub-dc+:32:200,cdp-fclub-dc+:32:1000,cdp-fclub-dc+:256:200,"
         "cdp-fedc3ucb-h:32:200,cdp-fedc3ucb-h+:32:200,cdp-mab:3000:200,cdp-mab:3000:1000")


def record_level(config: dict, seed: int, at: int):
    """`sample(which, rng)` of the record-level guarded federation (a known leak)."""
    from pair_loss import RecordLevelGuarded

    def sample(which: int, rng: np.random.Generator):
        streams = seed_streams(seed)
        streams["policy"] = np.random.default_rng(seed_sequence(int(rng.integers(2**63))))
        built = get_algorithm("cdp-fclub-dc+").setup(config, seed, streams)
        leaky = replace(built, protocol=RecordLevelGuarded(built.protocol.config,
                                                           built.protocol.plan))
        if which:
            FlippedReward(built.env, at)
        return _transcript(lambda world: play_setup(leaky.on(world), streams, seed), built.env)
    return sample


def forced_loss(config: dict, seed: int, at: int) -> float:
    """The white-box pair loss of the record-level design (the seed's own coins)."""
    from pair_loss import control_pair

    report = audit_pairs({"flip": control_pair(config, seed, at)}, config["delta"], None)
    return report.worst.epsilon


def measure(name: str, horizon: int, n: int, epsilon: float) -> dict[str, float]:
    config = {**audit_config(name, epsilon), "horizon": horizon}
    at = BLACK_BOX_FLIPS.get(name, 5)
    power = tuple(m * epsilon for m in POWER_MULTIPLES)
    start = time.perf_counter()
    report = audit_entry_transcripts(name, config, 3, at, n, rng=0, power=power)
    key = f"{name}_T{horizon}_n{n}"
    found = {p["planted_epsilon"]: p["epsilon_lower_bound"] for p in report.details["power"]}
    out = {f"{key}_bound": report.epsilon_lower_bound,
           f"{key}_ceiling": report.details["ceiling"],
           **{f"{key}_planted_{e:g}": b for e, b in found.items()}}
    line = (f"{name:24s} T={horizon:5d} n={n:5d}: eps >= {report.epsilon_lower_bound:.3g}; "
            f"ceiling {report.details['ceiling']:.3g}; planted "
            + ", ".join(f"{e:g} -> {b:.3g}" for e, b in found.items()))
    if name == "cdp-fclub-dc+":  # on the entry's default world, as pair_loss.py
        config = {**small_config(name, epsilon), "horizon": horizon}
        sample = record_level(config, 3, at)
        leak = audit_transcripts(sample, n, (epsilon, config["delta"]), rng=0)
        exact = forced_loss(config, 3, at)
        out[f"{key}_record_level_forced"] = exact
        out[f"{key}_record_level_bound"] = leak.epsilon_lower_bound
        line += (f"; record-level leak (forced loss {exact:.3g}) -> "
                 f"{leak.epsilon_lower_bound:.3g}")
    print(f"{line}  [{time.perf_counter() - start:.0f} s]", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=SIZES, help="entry:horizon:n, comma-separated")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--smoke", action="store_true", help="a tiny run (CI)")
    args = parser.parse_args()
    sizes = "cdp-fclub-dc+:8:8" if args.smoke else args.sizes
    figures: dict[str, float] = {}
    for item in sizes.split(","):
        name, horizon, n = item.split(":")
        figures.update(measure(name, int(horizon), int(n), args.epsilon))
    for key, value in figures.items():
        print(f"{key}: {value:.4g}")


if __name__ == "__main__":
    main()
