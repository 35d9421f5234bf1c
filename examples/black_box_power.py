"""What the black-box audit can see: its power on known leaks, at several sizes.

A black-box audit that reads "consistent, epsilon >= 0" is evidence of privacy
only if it would have seen a leak.  For each registry entry and size (horizon
T, n transcripts per world) this prints the audit's own bound on the entry, on
its first audit world with the flip its audit profile declares
(`registry.AuditProfile.black_box`, as `privbandit audit --black-box` runs it:
reward of round 5 flipped; epoch 0 or the first draw for the federated and
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

from privbandit.auditing.black_box import (
    POWER_MULTIPLES,
    audit_target_transcripts,
    sample_entry,
)
from privbandit.auditing.end_to_end import audit_target
from privbandit.auditing.target import AuditTarget
from privbandit.audits.transcript import audit_transcripts
from privbandit.registry import get_algorithm
from privbandit.schema import defaults

SIZES = ("cdp-fclub-dc+:32:200,cdp-fclub-dc+:32:1000,cdp-fclub-dc+:256:200,"
         "cdp-fedc3ucb-h:32:200,cdp-fedc3ucb-h+:32:200,cdp-mab:3000:200,cdp-mab:3000:1000")


def record_level(config: dict) -> AuditTarget:
    """The record-level guarded federation (a known leak) on `config`."""
    from pair_loss import record_level as control

    return replace(AuditTarget.of("cdp-fclub-dc+", config), variant=control)


def measure(name: str, horizon: int, n: int, epsilon: float) -> dict[str, float]:
    target = AuditTarget.of(name, epsilon=epsilon).with_horizon(horizon)
    flip = target.profile.black_box[1]
    power = tuple(m * epsilon for m in POWER_MULTIPLES)
    start = time.perf_counter()
    report = audit_target_transcripts(target, 3, flip, n, rng=0, power=power)
    key = f"{name}_T{horizon}_n{n}"
    found = {p["planted_epsilon"]: p["epsilon_lower_bound"] for p in report.details["power"]}
    out = {f"{key}_bound": report.epsilon_lower_bound,
           f"{key}_ceiling": report.details["ceiling"],
           **{f"{key}_planted_{e:g}": b for e, b in found.items()}}
    line = (f"{name:24s} T={horizon:5d} n={n:5d}: eps >= {report.epsilon_lower_bound:.3g}; "
            f"ceiling {report.details['ceiling']:.3g}; planted "
            + ", ".join(f"{e:g} -> {b:.3g}" for e, b in found.items()))
    if name == "cdp-fclub-dc+":  # on the entry's default world, as pair_loss.py
        entry = get_algorithm(name)
        leaky = record_level({**entry.defaults, "epsilon": epsilon, "horizon": horizon,
                              "environment": defaults(entry.environment)})
        delta = leaky.config["delta"]
        leak = audit_transcripts(sample_entry(leaky, flip, 3), n, (epsilon, delta), rng=0)
        exact = audit_target(leaky, 3, (flip,)).worst.epsilon  # the white-box pair loss
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
