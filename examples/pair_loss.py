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
    python examples/pair_loss.py --table    # the table of docs/privacy_relations.md

It also counts what the guarantee of CDP-FCLUB-DC+ does not cover: a local
round's reward changes the actions its server later shows the server's OTHER
users (the server holds and acts on all its users' raw data; the view is what
other servers receive, so this is allowed -- and it is not joint DP).

Ends with one `key: value` line per variant: the worst pair's epsilon.  With
`--table` it prints the markdown table docs/privacy_relations.md shows (at
TABLE's size; `tests/privbandit/auditing/test_end_to_end.py` checks the page against it).
"""
from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np

from privbandit.auditing.end_to_end import audit_entry, released_rounds
from privbandit.auditing.target import AuditTarget
from privbandit.envs.neighbours import Flip
from privbandit.fclub.guarded import GuardedFederatedClub
from privbandit.registry import get_algorithm
from privbandit.schema import defaults


class RecordLevelGuarded(GuardedFederatedClub):
    """The guarded algorithm as it was before the billboard: every round acts on raw data
    and every record enters its user's stream, its features wrongly marked public (so
    its Gram matrix is released unnoised: the audit finds it differs)."""

    def update(self, items, user, action, feedback, t):
        if not self._shared:  # a local round's record joins the stream (before its release)
            y = min(max(float(feedback), 0.0), 1.0)
            self.streams.enter(user, (items[action], y), by="control: a raw-driven action")
        super().update(items, user, action, feedback, t)


def config(name: str, horizon: int, epsilon: float, **params) -> dict:
    entry = get_algorithm(name)
    return {**entry.defaults, **params, "epsilon": epsilon, "horizon": horizon,
            "environment": defaults(entry.environment)}


def record_level(built):
    """What the control builds: the guarded entry's run with `RecordLevelGuarded` in it."""
    return replace(built, protocol=RecordLevelGuarded(built.protocol.config, built.protocol.plan))


# the size of the table in docs/privacy_relations.md: horizon, seed, epsilon
TABLE = (512, 0, 1.0)
ROWS = (
    ("guarded federation, record-level design (every round acts on raw data, every record "
     "released)", "cdp-fclub-dc+", None),
    ("CDP-FCLUB-DC+ (billboard, the default)", "cdp-fclub-dc+", {}),
    ("CDP-FCLUB-DC (acts on released statistics, the default)", "cdp-fclub-dc", {}),
    ("CDP-FCLUB-DC `paper` preset (raw buffers between uploads), at its delta = 0.1",
     "cdp-fclub-dc-paper", "paper"),
)


def cell(finding) -> str:
    """One pair's loss in words, as the table shows it."""
    if finding.diverged:
        return "unbounded"
    noised = finding.releases - finding.public
    if finding.differing == 0:
        where = "" if finding.evidence else " (its record never released)"
        return f"0, none of {noised:,} differ{where}"
    return (f"ε = {finding.epsilon:.3g} (μ {finding.mu:.3g}), {finding.differing} of "
            f"{noised:,} differ")


def table(horizon: int, seed: int, epsilon: float) -> tuple[str, dict]:
    """(the markdown table, each row's report) of the four variants, each flipped at the
    first and the last round whose record CDP-FCLUB-DC+ releases and at a local round
    between them (chosen from its run: `privbandit.auditing.end_to_end.released_rounds`)."""
    shared = released_rounds("cdp-fclub-dc+", config("cdp-fclub-dc+", horizon, epsilon), seed)
    local = next(t for t in range(shared[0] + 1, horizon) if t not in shared)
    flips = (shared[0], local, shared[-1])
    kinds = ("shared", "local", "shared")
    lines = ["| variant | " + " | ".join(f"flip at round {a:,} ({k} in CDP-FCLUB-DC+)"
                                         for a, k in zip(flips, kinds, strict=True)) + " |",
             "|---" * (len(flips) + 1) + "|"]
    reports = {}
    for label, name, params in ROWS:
        variant = record_level if params is None else None
        preset = get_algorithm(name).presets[params] if params else {}
        report = audit_entry(name, config(name, horizon, epsilon, **preset), seed, flips,
                             variant=variant)
        reports[label] = report
        lines.append(f"| {label} | " + " | ".join(cell(f) for f in report.findings) + " |")
    return "\n".join(lines), reports


def same_server(horizon: int, seed: int, at: int, epsilon: float = 1.0) -> tuple[int, int]:
    """(how many, of all) actions CDP-FCLUB-DC+ shows the other users of the flipped user's
    server after a flip at local round `at` differ from the unflipped run's (same coins:
    nothing released moves, so both runs share their transcript)."""
    target = AuditTarget.of("cdp-fclub-dc+", config("cdp-fclub-dc+", horizon, epsilon))

    def actions(flip: bool):
        """Each round's (t, user, action), played round by round on the world or its
        neighbour flipped at round `at`; and that world."""
        built, streams = target.setup(seed)
        world = built.env.neighbour(Flip(at)) if flip else built.env
        policy, rng, log = built.protocol, streams["policy"], []
        world.reset(streams["rounds"])
        policy.start(world, built.horizon, rng)
        for t in range(built.horizon):
            _, user, items = world.observe(t)
            action = policy.select(items, user, t, rng)
            policy.update(items, user, action, world.act(t, action).feedback, t)
            log.append((t, int(user), int(np.ravel(action)[0])))
        return log, world, policy.server

    base, _, server = actions(False)
    moved, world, _ = actions(True)
    user = world.changed["user"]
    later = [(a, b) for a, b in zip(base, moved, strict=True)
             if a[0] > at and a[1] != user and server[a[1]] == server[user]]
    return sum(a[2] != b[2] for a, b in later), len(later)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--horizon", type=int, default=8192)
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--flips", default="100,1000,4000", help="rounds flipped, comma-separated")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--smoke", action="store_true", help="a tiny run (checks the script works)")
    p.add_argument("--table", action="store_true", help="print docs/privacy_relations.md's table")
    args = p.parse_args()
    if args.table:
        print(table(*TABLE)[0])
        return
    horizon, flips = args.horizon, [int(f) for f in args.flips.split(",")]
    if args.smoke:
        horizon, flips = 256, [5, 100]
    paper = get_algorithm("cdp-fclub-dc-paper").presets["paper"]
    variants = {
        "cdp_fclub_dc_paper": ("cdp-fclub-dc-paper", paper),
        "cdp_fclub_dc": ("cdp-fclub-dc", {}),
        "cdp_fclub_dc_plus": ("cdp-fclub-dc+", {}),
        "record_level_guarded": ("cdp-fclub-dc+", None),
    }
    worst = {}
    for key, (name, params) in variants.items():
        cfg = config(name, horizon, args.epsilon, **(params or {}))
        report = audit_entry(name, cfg, args.seed, flips,
                             variant=record_level if params is None else None)
        delta = report.delta
        print(f"{key} (claim epsilon {args.epsilon:g}, delta {delta:g}, T = {horizon}):")
        print(report.describe())
        worst[key] = report.worst.epsilon
    shared = released_rounds("cdp-fclub-dc+", config("cdp-fclub-dc+", horizon, args.epsilon),
                             args.seed)
    local = next(t for t in range(flips[0], horizon) if t not in shared)
    moved, shown = same_server(horizon, args.seed, local, args.epsilon)
    print(f"cdp_fclub_dc_plus: a local flip at round {local} changes {moved} of the {shown} "
          "later actions its server shows its other users (not covered: the server is trusted)")
    for key, value in worst.items():
        print(f"{key}_worst_epsilon: {value:.4g}")
    print(f"same_server_actions_changed: {moved}")
    print(f"same_server_actions_later: {shown}")


if __name__ == "__main__":
    main()
