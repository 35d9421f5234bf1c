"""Canary protocols for one-run audits of the registry's private algorithms.

    registry_cases(epsilon=1.0) -> list[CanaryCase]     # one per private registry entry
    epoch_means_protocol(epsilon, sampler, agents, arms, sizes) -> CanaryProtocol
    anonymous_protocol(epsilon, sampler, threshold, groups) -> CanaryProtocol

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
- The clustering and cascade families (cdp-fclub-dc, cdp-fclub-dc+,
  cdp-fedc3ucb-h, cdp-fedc3ucb-h+) have no canary protocol yet: their
  releases are Gaussian trees over many rounds, whose per-canary view needs
  a transcript reduction of its own; many-run audits cover them
  (`privbandit.fclub.audit` for CDP-FCLUB-DC's transcript, and the audit of
  the guarded parties' streams in the tests).  `registry_cases` lists them with that
  note, so a table never silently drops an algorithm.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_count, check_positive
from privbandit.audits import Claim
from privbandit.audits.one_run import CanaryProtocol
from privbandit.audits.one_run_protocols import user_round_canaries
from privbandit.mechanisms.anonymous import KAnonymousAggregator

from .fedmab.audit import EpochMeansTranscript
from .privacy import resolve_sampler
from .registry import SAFE_SAMPLER, algorithms

FEDMAB = ("cdp-mab", "ddp-mab", "hdp-mab")
ANONYMOUS = ("anonymous-base-laplace",)
UNCOVERED = ("Gaussian trees over many rounds: no canary protocol yet (many-run audits: "
             "privbandit.fclub.audit for CDP-FCLUB-DC, the guarded streams' tests)")
AGENT_LEVEL = "agent-level: one reward of one agent (a canary user-round, 1 vs 0)"
ROUND_LEVEL = "record-level: one user's reward in one round (a canary user-round, 1 vs 0)"


@dataclass(frozen=True)
class CanaryCase:
    """One registry algorithm's one-run audit, or why it has none (`protocol` None)."""

    algorithm: str
    protocol: "CanaryProtocol | None"
    claim: "Claim | None"
    note: str = ""


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
        else:
            out.append(CanaryCase(name, None, None, UNCOVERED))
            continue
        out.append(CanaryCase(name, protocol, _claim(epsilon, name)))
    return out
