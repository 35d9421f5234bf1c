"""One-run audits of the registry's private algorithms, with canary user-rounds.

    registry_cases(epsilon=1.0) -> list[CanaryCase]     # one per private registry entry
    stream_protocol(name, epsilon, *, horizon, canaries, **params) -> (CanaryProtocol, Claim)

Each private entry declares its one-run audit in its profile
(`registry.AuditProfile.canaries`): the family's own canary protocol (the
federated MAB's epoch means, `fedmab.audit.epoch_means_protocol`; the anonymous
aggregator's group sums, `anonymous.audit.anonymous_protocol`), or canary rounds
planted in the entry's own run (`registry.CanaryRounds`), audited here by
`stream_protocol`.  Every protocol meets the audit layer's plain-callable
contract (`privbandit.audits.one_run_protocols.user_round_canaries`): m
canary user-rounds get a planted reward, 1 (in) or 0 (out) by the audit's
coin; one run returns the view -- what the other parties receive -- and the
scorer reads each canary's effect from it.  Sizes are small, so
`privbandit audit --one-run` stays quick.

Canary rounds (`stream_protocol`).  One run of the entry on its world holding
canaries (`Environment.planted`: m canary rounds spread evenly over the
horizon, each round's feedback planted by its coin, 1 vs 0; a cascade: a
click on the first item vs no click); the profile's parameters make every
canary's record released (a guarded entry runs with rate = 1 and a cap of
the horizon: the billboard's coin is public and fixed before the run).  The
view is every release's output (`mechanisms.tape`).  The scorer is the
auditor, who holds the world and the run's seed but not the coins nor the
noise: it replays the run forced to the view's outputs (so every later
action is the same function of the view) with canaries planted by a code --
all out, then those whose index + 1 has bit b set, for each b -- and reads
each release's pre-noise value (never the run's own).  Along the forced path
a canary moves only the releases holding its record; the codes say which
canary a moved release holds (a release moved by several canaries at once is
left out) and by how much (A, the record's in-minus-out part).  Each stream's
outputs are cut into pieces of independent noise -- a tree's nodes (prefix t
minus prefix t - lowbit(t)), another prefix mechanism's consecutive
differences, a one-off release -- and a canary's score is the matched filter
sum <y - v0, A> / sigma^2 over the pieces holding its record (y: the piece,
v0: its all-out value), standardised: mean zero out, larger in.  Guarantee
audited: the run's own statement (`result.privacy`, interactive relation),
(epsilon, delta) per user-round; the noise is Gaussian, so the f-DP bound
applies (method "fdp").  2 + log2(m) runs per audit, a few seconds.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from privbandit.accounting.statement import Relation
from privbandit.accounting.validation import check_count, check_positive
from privbandit.audits import Claim
from privbandit.audits.one_run import CanaryProtocol
from privbandit.audits.one_run_protocols import user_round_canaries
from privbandit.mechanisms.streaming import ContinualRelease
from privbandit.mechanisms.tape import Entry, PublicValue, Tape, recording
from privbandit.mechanisms.tree import TreePrivatizer

from ..errors import config_error
from ..registry import SAFE_SAMPLER, AuditWorld, CanaryRounds, algorithms
from .target import AuditTarget, measured, world_config


@dataclass(frozen=True)
class CanaryCase:
    """One registry algorithm's one-run audit, or why it has none (`protocol` None: the
    entry declares no audit profile, a failure); `method`: the one-run bound its noise
    allows ("fdp" for Gaussian noise); `measured`: why the claim is a reference only (a
    statement under another relation than the canaries realise), "" when it is judged."""

    algorithm: str
    protocol: "CanaryProtocol | None"
    claim: "Claim | None"
    note: str = ""
    method: str = "snj"
    measured: str = ""


@dataclass(frozen=True)
class _View:
    """What the other parties received (each release's mechanism and output, in order; the
    scorer reads a mechanism's type, sigma and shift, never its data) and the run's seed
    (the auditor's: it shares the world and every random stream but the noise)."""

    releases: tuple[tuple[Any, np.ndarray], ...]
    seed: int


def _play(target: AuditTarget, seed: int, rounds: np.ndarray, included: np.ndarray,
          forced: "Tape | None" = None) -> tuple[Tape, Any]:
    with recording(Tape(forced=forced)) as tape:
        result = target.play(seed, planted=(rounds, included))
    return tape, result


def _moved(replay, m: int) -> tuple[list[np.ndarray], np.ndarray, list[np.ndarray]]:
    """(all-out values v0, the canary each release holds (-1: none or several), and its
    in-minus-out part A), from replays forced to the view planted by code (index + 1)."""
    codes = np.arange(1, m + 1)
    base = replay(np.zeros(m, dtype=bool))
    diffs = [[v - v0 for v, v0 in zip(replay(codes >> b & 1 == 1), base, strict=True)]
             for b in range(m.bit_length())]
    holder, part = np.full(len(base), -1), [np.zeros(0)] * len(base)
    for e in range(len(base)):
        moved = [(b, d[e]) for b, d in enumerate(diffs) if np.any(d[e] != 0.0)]
        if moved and all(np.allclose(d, moved[0][1], rtol=1e-9, atol=1e-12) for _, d in moved):
            code = sum(1 << b for b, _ in moved)
            if code <= m:
                holder[e], part[e] = code - 1, moved[0][1]
    return base, holder, part


def _pieces(mech: Any, outputs: list[np.ndarray]) -> list[tuple[np.ndarray, int, int]]:
    """A stream's releases as independent-noise pieces (noisy sum, first step, last step + 1):
    a tree's nodes (prefix t minus prefix t - lowbit(t)), another prefix mechanism's
    consecutive differences, a one-off release itself."""
    if not isinstance(mech, ContinualRelease):
        return [(out, s, s + 1) for s, out in enumerate(outputs)]
    start = np.eye(outputs[0].shape[0]) * mech.shift if outputs[0].ndim == 2 else 0.0
    prefix = [np.asarray(start + np.zeros_like(outputs[0])), *outputs]
    tree = isinstance(mech, TreePrivatizer)
    lows = [t - (t & -t) if tree else t - 1 for t in range(1, len(prefix))]
    return [(prefix[t + 1] - prefix[lo], lo, t + 1) for t, lo in enumerate(lows)]


def _score_view(view: _View, replay, m: int) -> np.ndarray:
    base, holder, part = _moved(replay, m)
    streams: dict[int, list[int]] = {}
    for e, (mech, _) in enumerate(view.releases):
        streams.setdefault(id(mech), []).append(e)
    num, den = np.zeros(m), np.zeros(m)
    for releases in streams.values():
        mech = view.releases[releases[0]][0]
        if isinstance(mech, PublicValue):  # unnoised: equal with or without a canary
            continue
        weight = 1.0 / mech.sigma**2
        pieces = _pieces(mech, [view.releases[e][1] for e in releases])
        for noisy, lo, hi in pieces:  # its noise is independent of every other piece's
            steps = releases[lo:hi]
            residual = noisy - sum(base[e] for e in steps)
            for e in steps:
                if holder[e] >= 0:
                    num[holder[e]] += weight * float(np.sum(residual * part[e]))
                    den[holder[e]] += weight * float(np.sum(part[e] ** 2))
    return np.divide(num, np.sqrt(den), out=np.zeros_like(num), where=den > 0)


def stream_protocol(name: str, epsilon: float = 1.0, *, horizon: "int | None" = None,
                    canaries: "int | None" = None,
                    **params: Any) -> tuple[CanaryProtocol, Claim]:
    """Canary user-rounds planted in one run of entry `name` (see the module docstring), at
    the sizes of its profile's `CanaryRounds` unless `horizon` or `canaries` say otherwise,
    and the claim its run states (refused unless it holds under the interactive
    relation); `params` override the entry's (e.g. a sampler)."""
    case = stream_case(name, epsilon, horizon=horizon, canaries=canaries, **params)
    if case.measured:
        raise config_error("name", name, f"an entry whose statement holds under the "
                           f"interactive relation ({case.measured})")
    return case.protocol, case.claim


def stream_case(name: str, epsilon: float = 1.0, *, horizon: "int | None" = None,
                canaries: "int | None" = None, **params: Any) -> CanaryCase:
    """`stream_protocol`'s case; an entry whose statement holds under another relation is
    measured against its stated epsilon (`CanaryCase.measured`)."""
    entry = algorithms().get(name)
    plan = None if entry is None or entry.audit is None else entry.audit.canaries
    if not isinstance(plan, CanaryRounds):
        raise config_error("name", name, "an entry whose audit profile plants canary rounds "
                           "(registry.CanaryRounds)")
    horizon = check_count("horizon", horizon or plan.horizon)
    m = check_count("canaries", canaries or plan.canaries)
    if m > horizon // 2:
        raise config_error("canaries", m, f"at most horizon // 2 = {horizon // 2}")
    world = AuditWorld(horizon, {**plan.params, **params}, plan.environment)
    target = AuditTarget.of(name, world_config(entry, world, epsilon))
    rounds = np.linspace(horizon // (2 * m), horizon - 1, m).astype(np.int64)
    statement = _play(target, 0, rounds, np.zeros(m, dtype=bool))[1].privacy
    claim = Claim(statement.epsilon, statement.delta, f"{name}: {statement.summary}")

    def run(planted: np.ndarray, rng: np.random.Generator) -> _View:
        seed = int(rng.integers(2**63))
        tape, _ = _play(target, seed, rounds, planted > 0.5)
        return _View(tuple((e.mechanism, e.output) for e in tape.entries), seed)

    def score(view: _View) -> np.ndarray:
        # the forced path needs each release's type, shape and output, never its value
        forced = Tape(entries=[Entry(mech, np.zeros_like(out), out)
                               for mech, out in view.releases])

        def replay(included: np.ndarray) -> list[np.ndarray]:
            tape, _ = _play(target, view.seed, rounds, included, forced)
            return [e.value for e in tape.entries]

        return _score_view(view, replay, m)

    relation = f"interactive: one user-round's feedback replaced (1 vs 0), {name}"
    protocol = user_round_canaries(run, score, m, relation=relation,
                                   name=f"{name} released streams")
    interactive = statement.relation is Relation.INTERACTIVE
    return CanaryCase(name, protocol, claim, method="fdp",
                      measured="" if interactive else measured(statement))


def entry_case(name: str, entry: Any, epsilon: float = 1.0) -> CanaryCase:
    """Entry `name`'s one-run audit as its profile declares it (a case without a protocol,
    saying why, when the entry declares no profile)."""
    if entry.audit is None:  # reported as a failure, never skipped
        return CanaryCase(name, None, None, "no audit profile (AlgorithmEntry.audit)")
    plan = entry.audit.canaries
    if isinstance(plan, CanaryRounds):
        return stream_case(name, epsilon)
    made = plan(epsilon, entry.defaults.get("sampler", SAFE_SAMPLER))
    protocol, claim, method = made if isinstance(made, tuple) else (
        made, Claim(epsilon, 0.0, f"{name}: epsilon-DP per canary user-round"), "snj")
    protocol = replace(protocol, name=f"{name} {protocol.name}")  # the entry names the case
    return CanaryCase(name, protocol, claim, method=method)


def registry_cases(epsilon: float = 1.0) -> list[CanaryCase]:
    """Every private registry algorithm with its one-run audit (`entry_case`)."""
    epsilon = check_positive("epsilon", epsilon)
    return [entry_case(name, entry, epsilon) for name, entry in algorithms().items()
            if entry.private]
