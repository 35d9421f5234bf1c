"""Canary protocols for one-run audits of the registry's private algorithms.

    registry_cases(epsilon=1.0) -> list[CanaryCase]     # one per private registry entry
    epoch_means_protocol(epsilon, sampler, agents, arms, sizes) -> CanaryProtocol
    anonymous_protocol(epsilon, sampler, threshold, groups) -> CanaryProtocol
    stream_protocol(name, epsilon, *, horizon, canaries, **params) -> (CanaryProtocol, Claim)

Each protocol meets the audit layer's plain-callable contract
(`privbandit.audits.one_run_protocols.user_round_canaries`): m canary
user-rounds get a planted reward, 1 (in) or 0 (out) by the audit's coin;
one run returns the view -- what the other parties receive -- and the
scorer reads each canary's effect from it.  Sizes are small, so
`privbandit audit --one-run` stays quick.

- Federated MAB (cdp-mab, ddp-mab, hdp-mab; seed 002): each agent releases
  the Laplace means of every arm and epoch (`fedmab.audit.EpochMeansTranscript`,
  the algorithms' own mechanism factory), which the server or the
  neighbours receive; the active set is held at all arms (elimination only
  removes releases).  One canary per (agent, arm, epoch): the first reward
  of that arm in that epoch.  The others are fixed Bernoulli(1/2) draws the
  auditor knows, so the score is the released mean minus their share, times
  the epoch's reward count (the canary's reward plus Laplace(1/epsilon)
  noise).  Guarantee audited: epsilon-DP per reward (agent-level relation).
- anonymous-base-laplace (seed 004): one round of C-anonymous aggregation
  with Laplace noise (`mechanisms.anonymous.KAnonymousAggregator`, as the
  environment builds it); each group of C users holds one canary user whose
  reward is planted, the others' rewards are 0; the view is the released
  group sums.  Guarantee audited: the aggregator's epsilon per round.
- Clustering and cascade families (cdp-fclub-dc, cdp-fclub-dc+,
  cdp-fedc3ucb-h, cdp-fedc3ucb-h+; seeds 000, 001): `stream_protocol`.
  One run of the entry (`endtoend.setup`) on its audit-sized world, m
  canary rounds spread evenly over the horizon, each round's feedback
  planted by its coin (1 vs 0; a cascade: a click on the first item vs no
  click).  The guarded entries (+) run with rate = 1 and a cap of the
  horizon, so every round is on the shared track: the billboard's coin is
  public and fixed before the run, and every canary's record is released.
  The view is every release's output (`mechanisms.tape`).  The scorer is
  the auditor, who holds the world and the run's seed but not the coins
  nor the noise: it replays the run forced to the view's outputs (so every
  later action is the same function of the view) with canaries planted by
  a code -- all out, then those whose index + 1 has bit b set, for each b --
  and reads each release's pre-noise value (never the run's own).  Along
  the forced path a canary moves only the releases holding its record;
  the codes say which canary a moved release holds (a release moved by
  several canaries at once is left out) and by how much (A, the record's
  in-minus-out part).  Each stream's outputs are cut into pieces of
  independent noise -- a tree's nodes (prefix t minus prefix t - lowbit(t)),
  another prefix mechanism's consecutive differences, a one-off release --
  and a canary's score is the matched filter sum <y - v0, A> / sigma^2 over
  the pieces holding its record (y: the piece, v0: its all-out value),
  standardised: mean zero out, larger in.  Guarantee audited: the run's own
  statement (`result.privacy`, interactive relation), (epsilon, delta) per
  user-round; the noise is Gaussian, so the f-DP bound applies (method
  "fdp").  2 + log2(m) runs per audit, a few seconds.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.statement import Relation
from privbandit.accounting.validation import check_count, check_positive
from privbandit.audits import Claim
from privbandit.audits.one_run import CanaryProtocol
from privbandit.audits.one_run_protocols import user_round_canaries
from privbandit.mechanisms.anonymous import KAnonymousAggregator
from privbandit.mechanisms.streaming import ContinualRelease
from privbandit.mechanisms.tape import Entry, PublicValue, Tape, recording
from privbandit.mechanisms.tree import TreePrivatizer

from ..errors import config_error
from ..fedmab.audit import EpochMeansTranscript
from ..privacy import resolve_sampler
from ..registry import SAFE_SAMPLER, algorithms
from .end_to_end import setup, small_config

FEDMAB = ("cdp-mab", "ddp-mab", "hdp-mab")
ANONYMOUS = ("anonymous-base-laplace",)
# audit-sized runs of the stream entries: horizon, canaries, world (over the entry's default;
# the guarded cascade clusters its 40 agents at every release with every round shared)
STREAMS = {"cdp-fclub-dc": (512, 128, {}), "cdp-fclub-dc+": (256, 64, {}),
           "cdp-fedc3ucb-h": (256, 128, {}),
           "cdp-fedc3ucb-h+": (256, 64, {"users": 10, "clusters": 2}),
           "cdp-fedc3ucb-sets": (256, 128, {})}
GUARDED = ("cdp-fclub-dc+", "cdp-fedc3ucb-h+")
UNCOVERED = "no canary protocol: the entry has no one-run reduction of its view"
AGENT_LEVEL = "agent-level: one reward of one agent (a canary user-round, 1 vs 0)"
ROUND_LEVEL = "record-level: one user's reward in one round (a canary user-round, 1 vs 0)"


@dataclass(frozen=True)
class CanaryCase:
    """One registry algorithm's one-run audit, or why it has none (`protocol` None);
    `method`: the one-run bound its noise allows ("fdp" for Gaussian noise)."""

    algorithm: str
    protocol: "CanaryProtocol | None"
    claim: "Claim | None"
    note: str = ""
    method: str = "snj"


def epoch_means_protocol(epsilon: float, sampler: Any = SAFE_SAMPLER, agents: int = 10,
                         arms: int = 10, sizes: tuple[int, ...] = (2, 6, 14, 30),
                         name: str = "fedmab epoch means") -> CanaryProtocol:
    """Canary rewards in every agent's epoch means (see the module docstring)."""
    transcript = EpochMeansTranscript(epsilon, sizes, sampler)
    agents, arms = check_count("agents", agents), check_count("arms", arms)
    starts = np.array((0, *sizes[:-1]))
    counts = np.diff((0, *sizes))
    base = np.random.default_rng(0).integers(0, 2, (agents, arms, sizes[-1])).astype(float)
    shape = (agents, len(sizes), arms)  # canary (a, r, k): first reward of arm k in epoch r
    others = np.stack([base[:, :, s + 1:s + n].sum(axis=-1) for s, n in zip(
        starts, counts, strict=True)], axis=1)  # (agents, R, K), the known rewards' sum

    def run(planted: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rewards = base.copy()
        rewards[:, :, starts] = planted.reshape(shape).transpose(0, 2, 1)
        return np.stack([transcript(rewards[a], g, 1)[0] for a, g in enumerate(
            rng.spawn(agents))])

    def score(view: np.ndarray) -> np.ndarray:
        return (view * counts[None, :, None] - others).ravel()

    return user_round_canaries(run, score, int(np.prod(shape)), relation=AGENT_LEVEL, name=name)


def anonymous_protocol(epsilon: float, sampler: Any = SAFE_SAMPLER, threshold: int = 5,
                       groups: int = 400,
                       name: str = "k-anonymous Laplace aggregates") -> CanaryProtocol:
    """One canary user per group of one C-anonymous round (see the module docstring)."""
    c, m = check_count("threshold", threshold), check_count("groups", groups)
    members = np.arange(m * c).reshape(1, m, c)  # one round, m groups of c users

    def run(planted: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        def source(users, arms, g):
            return np.where(users % c == 0, planted[users // c], 0.0)
        agg = KAnonymousAggregator(c, source, laplace_epsilon=epsilon, reward_bounds=(0.0, 1.0),
                                   sampler=resolve_sampler(sampler))
        return agg.aggregate(members, np.zeros((1, m), dtype=np.int64), rng)[0]

    return user_round_canaries(run, lambda sums: sums, m, relation=ROUND_LEVEL, name=name)


class _Planted:
    """`env` with the feedback of `rounds` planted: 1 (a cascade: a click on the first item)
    where `included`, else 0 (no click); the world instance is patched, as a neighbour is."""

    def __init__(self, env: Any, rounds: np.ndarray, included: np.ndarray) -> None:
        self._at = dict(zip(rounds.tolist(), np.asarray(included, dtype=bool).tolist(),
                            strict=True))
        self._act, self._list_len = env.act, getattr(env, "list_len", None)
        env.act = self.act

    def act(self, t: int, action: Any):
        out = self._act(t, action)
        if t not in self._at:
            return out
        inside = self._at[t]
        if self._list_len is not None:  # first-click position in [0, list_len]
            return out._replace(feedback=0 if inside else self._list_len, reward=float(inside))
        return out._replace(feedback=float(inside), reward=float(inside))


@dataclass(frozen=True)
class _View:
    """What the other parties received (each release's mechanism and output, in order; the
    scorer reads a mechanism's type, sigma and shift, never its data) and the run's seed
    (the auditor's: it shares the world and every random stream but the noise)."""

    releases: tuple[tuple[Any, np.ndarray], ...]
    seed: int


def _play(name: str, config: dict, seed: int, rounds: np.ndarray, included: np.ndarray,
          forced: "Tape | None" = None) -> tuple[Tape, Any]:
    env, play = setup(name, config, seed)
    _Planted(env, rounds, included)
    with recording(Tape(forced=forced)) as tape:
        result = play(env)
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
    """Canary user-rounds in one run of stream entry `name` (see the module docstring), and
    the claim its run states; `params` override the entry's defaults (e.g. a sampler)."""
    if name not in STREAMS:
        raise config_error("name", name, f"one of {sorted(STREAMS)}")
    horizon = check_count("horizon", horizon or STREAMS[name][0])
    m = check_count("canaries", canaries or STREAMS[name][1])
    world = STREAMS[name][2]
    if m > horizon // 2:
        raise config_error("canaries", m, f"at most horizon // 2 = {horizon // 2}")
    if name in GUARDED:  # every round shared: the public coin puts each record on the board
        params = {"rate": 1.0, "merged_rate": 1.0, "cap": horizon, **params}
    config = small_config(name, epsilon, **params)
    config.update(horizon=horizon, environment={**config["environment"], **world})
    rounds = np.linspace(horizon // (2 * m), horizon - 1, m).astype(np.int64)
    claim = _stated_claim(name, _play(name, config, 0, rounds, np.zeros(m, dtype=bool))[1])

    def run(planted: np.ndarray, rng: np.random.Generator) -> _View:
        seed = int(rng.integers(2**63))
        tape, _ = _play(name, config, seed, rounds, planted > 0.5)
        return _View(tuple((e.mechanism, e.output) for e in tape.entries), seed)

    def score(view: _View) -> np.ndarray:
        # the forced path needs each release's type, shape and output, never its value
        forced = Tape(entries=[Entry(mech, np.zeros_like(out), out)
                               for mech, out in view.releases])

        def replay(included: np.ndarray) -> list[np.ndarray]:
            tape, _ = _play(name, config, view.seed, rounds, included, forced)
            return [e.value for e in tape.entries]

        return _score_view(view, replay, m)

    relation = f"interactive: one user-round's feedback replaced (1 vs 0), {name}"
    return user_round_canaries(run, score, m, relation=relation,
                               name=f"{name} released streams"), claim


def _stated_claim(name: str, result: Any) -> Claim:
    """The run's own statement as the claim: (epsilon, delta) per user-round, interactive."""
    statement = result.privacy
    if statement.relation is not Relation.INTERACTIVE:
        raise config_error("name", name, "an entry whose statement holds under the interactive "
                           f"relation (its run states {statement.relation.value})")
    return Claim(statement.epsilon, statement.delta, f"{name}: {statement.summary}")


def _claim(epsilon: float, algorithm: str) -> Claim:
    return Claim(epsilon, 0.0, f"{algorithm}: epsilon-DP per canary user-round")


def registry_cases(epsilon: float = 1.0) -> list[CanaryCase]:
    """Every private registry algorithm, with its small canary protocol or a note."""
    epsilon = check_positive("epsilon", epsilon)
    out = []
    for name, entry in algorithms().items():
        if not entry.private:
            continue
        sampler = entry.defaults.get("sampler", SAFE_SAMPLER)
        if name in FEDMAB:
            protocol = epoch_means_protocol(epsilon, sampler, name=f"{name} epoch means")
        elif name in ANONYMOUS:
            protocol = anonymous_protocol(epsilon, sampler, name=f"{name} group sums")
        elif name in STREAMS:
            protocol, claim = stream_protocol(name, epsilon)
            out.append(CanaryCase(name, protocol, claim, method="fdp"))
            continue
        else:
            out.append(CanaryCase(name, None, None, UNCOVERED))
            continue
        out.append(CanaryCase(name, protocol, _claim(epsilon, name)))
    return out
