"""Audit hooks: one agent's released transcript as a plain callable for `audits`.

`EpochMeansTranscript(epsilon, sizes)` is the audit layer's mechanism
`(dataset, rng, n) -> n outputs`: on a reward sequence of one agent (K arms,
S(R) rewards each; epoch r uses rewards S(r-1)..S(r)-1 of every arm) it
returns n independent copies of the agent's releases, the Laplace epoch means
of every epoch, shape (n, R, K).  It uses the same mechanism factory as the
algorithms (`privacy.epoch_mechanism`), so the audit checks the code that runs.
The active set is held at all K arms: elimination only removes releases.

The tests audit a deliberately broken subclass too (a positive control whose
noise is sized for sensitivity 1/S(r) while its event still claims epsilon);
no broken variant is a setting of this class.

`neighbouring_rewards` builds a pair of reward sequences that differ in one
reward (the agent-level relation), placed in the epoch where S(r)/n_r is
largest, and `canary_direction` the one-hot projection onto the coordinate
that reward moves.

`epoch_means_protocol(epsilon, sampler)` is the one-run audit the three entries'
audit profiles declare (`registry.AuditProfile.canaries`): each agent releases
the Laplace means of every arm and epoch through this transcript (the
algorithms' own mechanism factory), the active set held at all arms.  One
canary per (agent, arm, epoch): the first reward of that arm in that epoch.
The others are fixed Bernoulli(1/2) draws the auditor knows, so the score is
the released mean minus their share, times the epoch's reward count (the
canary's reward plus Laplace(1/epsilon) noise).  Guarantee audited:
epsilon-DP per reward (agent-level relation).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_count, check_positive
from privbandit.audits import (
    AuditReport,
    Claim,
    NeighbouringPair,
    Projection,
    ThresholdTester,
    run_audit,
)
from privbandit.audits.one_run import CanaryProtocol
from privbandit.audits.one_run_protocols import user_round_canaries
from privbandit.mechanisms.laplace import pairwise_mean
from privbandit.mechanisms.samplers import Sampler

from ..errors import RewardError, ShapeError, config_error
from ..privacy import DEFAULT_SAMPLER, resolve_sampler
from .privacy import epoch_mechanism
from .schedule import EpochSchedule

RELATION = "agent-level: one reward in one agent's history"


def _check_sizes(sizes: object) -> tuple[int, ...]:
    try:
        out = tuple(int(s) for s in sizes)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        raise config_error("sizes", sizes, "a sequence of epoch sizes S(1) < S(2) < ...") from None
    if not out or out[0] < 1 or any(b <= a for a, b in pairwise(out)):
        raise config_error("sizes", sizes, "a non-empty strictly increasing sequence of ints >= 1")
    return out


@dataclass(frozen=True)
class EpochMeansTranscript:
    """One agent's Laplace epoch-means transcript; see the module docstring.

    Privacy guarantee: as `fedmab.algorithms` -- pure epsilon-DP with respect
    to one reward of the agent (L1 sensitivity 1/n_r per epoch, parallel
    composition over epochs).  Subclasses may change `rewards_per_epoch`.
    """

    epsilon: float
    sizes: tuple[int, ...]
    sampler: Sampler | str | None = DEFAULT_SAMPLER

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))
        object.__setattr__(self, "sizes", _check_sizes(self.sizes))
        object.__setattr__(self, "sampler", resolve_sampler(self.sampler))

    @classmethod
    def from_schedule(cls, schedule: EpochSchedule, epsilon: float, **kwargs: Any):
        return cls(epsilon, schedule.sizes, **kwargs)

    @property
    def name(self) -> str:
        return f"fedmab epoch-means transcript ({type(self).__name__})"

    def rewards_per_epoch(self) -> tuple[int, ...]:
        """n_r = S(r) - S(r-1): the rewards each epoch's means are sized for."""
        return tuple(np.diff((0, *self.sizes)).tolist())

    def mechanisms(self) -> list:
        """The LaplaceMeans of each epoch, for its n_r rewards."""
        return [epoch_mechanism(self.epsilon, n, self.sampler) for n in self.rewards_per_epoch()]

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        rewards = check_rewards(dataset, self.sizes[-1])
        n = check_count("n", n)
        edges = (0, *self.sizes)
        out = np.empty((n, len(self.sizes), rewards.shape[0]))
        for r, mech in enumerate(self.mechanisms()):
            means = pairwise_mean(rewards[:, edges[r]:edges[r + 1]])
            out[:, r, :] = mech.release_means(np.broadcast_to(means, (n, means.size)), rng)
        return out


def check_rewards(dataset: Any, length: int) -> np.ndarray:
    """A (K, length) array of rewards in [0, 1]; RewardError / ShapeError otherwise."""
    x = np.asarray(dataset, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != length or x.shape[0] < 1:
        raise ShapeError(f"rewards must have shape (K, {length}); got {x.shape}")
    if not np.all((x >= 0.0) & (x <= 1.0)):
        bad = x[~((x >= 0.0) & (x <= 1.0))]
        raise RewardError(f"rewards must lie in [0, 1]; got values {bad[:5].tolist()}")
    return x


def canary_epoch(sizes: tuple[int, ...]) -> int:
    """The epoch (1-based) with the largest S(r)/n_r: where noise sized for S(r) rewards
    instead of n_r would be thinnest."""
    s = np.asarray(_check_sizes(sizes), dtype=np.float64)
    return int(np.argmax(s / np.diff(s, prepend=0.0))) + 1


def neighbouring_rewards(
    sizes: tuple[int, ...], n_arms: int, rng: np.random.Generator, *,
    epoch: int | None = None, arm: int = 0,
) -> NeighbouringPair:
    """Bernoulli(1/2) rewards, and a copy whose first reward of `arm` in `epoch` flips 0 -> 1."""
    sizes = _check_sizes(sizes)
    k = check_count("n_arms", n_arms)
    epoch = canary_epoch(sizes) if epoch is None else epoch
    if not (isinstance(epoch, int) and 1 <= epoch <= len(sizes)):
        raise config_error("epoch", epoch, f"an epoch in [1, {len(sizes)}]")
    if not (isinstance(arm, int) and 0 <= arm < k):
        raise config_error("arm", arm, f"an arm in [0, {k})")
    base = rng.integers(0, 2, size=(k, sizes[-1])).astype(np.float64)
    pos = (0, *sizes)[epoch - 1]
    d0, d1 = base.copy(), base.copy()
    d0[arm, pos], d1[arm, pos] = 0.0, 1.0
    return NeighbouringPair(d0, d1, RELATION, f"reward {pos} of arm {arm} (epoch {epoch}) 0 -> 1")


def canary_direction(sizes: tuple[int, ...], n_arms: int, epoch: int, arm: int = 0) -> np.ndarray:
    """(R, K) one-hot on the released coordinate the differing reward moves."""
    w = np.zeros((len(_check_sizes(sizes)), check_count("n_arms", n_arms)))
    w[epoch - 1, arm] = 1.0
    return w


def audit_transcript(
    transcript: EpochMeansTranscript, n_arms: int, rng: np.random.Generator, *,
    samples: int, confidence: float = 0.95,
) -> AuditReport:
    """Audit `transcript` against epsilon on a canary pair (threshold test, one-hot statistic).

    The claim is what the ledger charges: the epoch mechanism's event read by
    the pure-DP accountant (a mis-sized subclass claims epsilon too).
    """
    epoch = canary_epoch(transcript.sizes)
    pair = neighbouring_rewards(transcript.sizes, n_arms, rng, epoch=epoch)
    claim = Claim.from_event(transcript.mechanisms()[epoch - 1].event, accountant="pure-dp")
    direction = canary_direction(transcript.sizes, n_arms, epoch)
    tester = ThresholdTester(statistic=Projection(direction))
    return run_audit(transcript, pair, tester, claim, samples=samples, rng=rng,
                     confidence=confidence, name=transcript.name)


def epoch_means_protocol(epsilon: float, sampler: Any = DEFAULT_SAMPLER, agents: int = 10,
                         arms: int = 10, sizes: tuple[int, ...] = (2, 6, 14, 30),
                         name: str = "epoch means") -> CanaryProtocol:
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

    return user_round_canaries(run, score, int(np.prod(shape)), name=name,
                               relation="agent-level: one reward of one agent (a canary "
                                        "user-round, 1 vs 0)")

