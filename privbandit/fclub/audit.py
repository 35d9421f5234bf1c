"""End-to-end audit of CDP-FCLUB-DC: what other clusters observe, on neighbouring data.

`TranscriptMechanism(world)` is the audit layer's mechanism
`(dataset, rng, n) -> (n, F)`.  It runs the real algorithm
(`FederatedClub` with a `CdpPlan`) in a small fixed world: the arrival
schedule, the items and the rewards of every user outside server 0 come from
a fixed seed, and the observations of server 0's users are replayed from
`dataset` -- a (records, d + 1) array of rows [x, y], one per arrival of a
server-0 user, in order (Definition 1's input: only (x, y) differ between
neighbours, at the same time slot).  Each run returns the transcript of
everything that leaves server 0 or that other clusters see: per round, server
0's asynchronous uploads (how many, and their Gram / moment contents), the
downloads to other servers and the other users' chosen items; per phase,
server 0's phase uploads (per local cluster: membership and statistics).
Only the privacy noise (drawn from `rng`) changes between runs.

`canary_pair` builds two neighbouring datasets: every record zero except one
canary (x = e_1, y = 1) in the first.  `CanaryStatistic` reduces a transcript
to three numbers -- an upload at the canary's round (timing), the uploaded
contents after it along the canary's direction, the phase uploads after it
along the same direction -- and fits Fisher's direction on the held-out part.

The algorithm audited is `FederatedClub` unless another class is given
(`algorithm=`): the tests audit deliberately broken subclasses of it --
positive controls that decide uploads from the raw buffer (the paper's eq. 5)
or upload raw statistics (the public code) while still claiming (epsilon,
delta); `audit_cdp` must report a violation for them and consistency for the
correct algorithm.  No broken variant exists in the algorithm's own settings.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_count
from privbandit.audits import (
    AuditReport,
    Claim,
    LinearDiscriminant,
    NeighbouringPair,
    ThresholdTester,
    run_audit,
)

from ..envs.clustered import seed000_environment
from ..errors import RewardError, ShapeError, config_error
from .algorithm import FederatedClub
from .config import FclubConfig
from .privacy import RELATION, CdpPlan

TARGET_SERVER = 0


def phase_starts(horizon: int) -> list[int]:
    """Rounds at which phases start (2^s - 2, s >= 1), below `horizon`."""
    out, s = [], 1
    while 2**s - 2 < horizon:
        out.append(2**s - 2)
        s += 1
    return out


@dataclass(frozen=True)
class AuditWorld:
    """The small world of the audit: sizes, budget, thresholds and its seed.

    U and D default close to 1 so that a single record can trigger an upload
    (the controls' leaks then show in one run).
    """

    dim: int = 2
    n_users: int = 4
    n_servers: int = 2
    n_clusters: int = 2
    n_items: int = 3
    horizon: int = 40
    epsilon: float = 1.0
    delta: float = 0.1
    calibration: str = "tight"
    schedule: str = "every-round"
    batch: int | None = None
    detection: str = "private"
    upload_threshold: float = 1.0001
    download_threshold: float = 1.0001
    world_seed: int = 2026
    config: FclubConfig = field(init=False)
    plan: CdpPlan = field(init=False)

    def __post_init__(self) -> None:
        config = FclubConfig(self.dim, self.n_users, self.n_servers, sync="delayed",
                             upload_threshold=self.upload_threshold,
                             download_threshold=self.download_threshold)
        plan = CdpPlan(self.epsilon, self.delta, self.horizon, self.dim, self.n_users,
                       calibration=self.calibration, schedule=self.schedule, batch=self.batch,
                       detection=self.detection)
        object.__setattr__(self, "config", config)
        object.__setattr__(self, "plan", plan)

    def environment(self):
        """The fixed environment (its round stream is reset from the same seed every run)."""
        rng = np.random.default_rng(self.world_seed)
        return seed000_environment(rng, n_users=self.n_users, n_clusters=self.n_clusters,
                                   dim=self.dim, n_items=self.n_items)

    def rounds_rng(self) -> np.random.Generator:
        return np.random.default_rng(self.world_seed + 1)

    def claim(self) -> Claim:
        """What every ledger charges for one record, read by the exact Gaussian accountant."""
        return Claim.from_event(self.plan.record_event, self.delta, accountant="exact-gaussian")


class _Transcript:
    """Observer filling one run's transcript vector (see `TranscriptMechanism.layout`)."""

    def __init__(self, mech: "TranscriptMechanism") -> None:
        self.m = mech
        self.out = np.zeros(mech.size)
        self.out[mech.layout["actions"]] = -1.0

    def upload(self, t: int, server: int, gram: np.ndarray, b: np.ndarray) -> None:
        if server == TARGET_SERVER:
            m = self.m
            self.out[m.layout["upload_count"].start + t] += 1.0
            row = m.layout["upload_content"].start + t * m.content
            self.out[row:row + m.content] += np.concatenate((gram[m.triu], b))

    def download(self, t: int, server: int) -> None:
        if server != TARGET_SERVER:
            self.out[self.m.layout["downloads"].start + t] += 1.0

    def phase_upload(self, t: int, server: int, users: np.ndarray, merge: np.ndarray,
                     gram: np.ndarray, b: np.ndarray, count: int) -> None:
        if server != TARGET_SERVER:
            return
        m = self.m
        slot = int(np.searchsorted(m.target_users, users.min()))
        start = m.layout["phase"].start + (m.phases.index(t) * m.slots + slot) * m.phase_width
        d1 = m.world.dim + 1
        self.out[start:start + m.phase_width] = np.concatenate(
            ([1.0], merge[np.triu_indices(d1)], gram[m.triu], b))


class TranscriptMechanism:
    """The audit mechanism `(dataset, rng, n) -> (n, F)`; see the module docstring.

    `layout` names the slices of a transcript: upload_count (T,),
    upload_content (T x (d(d+1)/2 + d)), downloads (T,), actions (T,), phase
    (phases x server-0 users x width).  `target_rounds` are the rounds whose
    observations `dataset` supplies, in order.  `algorithm`: the class run,
    `FederatedClub` or a subclass.
    """

    def __init__(self, world: AuditWorld, algorithm: type[FederatedClub] = FederatedClub
                 ) -> None:
        if not isinstance(world, AuditWorld):
            raise ShapeError(f"world must be an AuditWorld; got {type(world).__name__}")
        if not (isinstance(algorithm, type) and issubclass(algorithm, FederatedClub)):
            raise config_error("algorithm", algorithm, "FederatedClub or a subclass of it")
        self.world = world
        d, horizon = world.dim, world.horizon
        self.server = world.config.servers()
        self.target_users = np.flatnonzero(self.server == TARGET_SERVER)
        env = world.environment()
        env.reset(world.rounds_rng())
        users = np.array([env.observe(t).user for t in range(horizon)])
        self.target_rounds = np.flatnonzero(self.server[users] == TARGET_SERVER)
        self.triu = np.triu_indices(d)
        self.content = len(self.triu[0]) + d
        self.phases = phase_starts(horizon)
        self.slots = self.target_users.size
        self.phase_width = 1 + (d + 1) * (d + 2) // 2 + self.content
        sizes = {"upload_count": horizon, "upload_content": horizon * self.content,
                 "downloads": horizon, "actions": horizon,
                 "phase": len(self.phases) * self.slots * self.phase_width}
        self.layout, start = {}, 0
        for name, size in sizes.items():
            self.layout[name] = slice(start, start + size)
            start += size
        self.size = start
        self.algorithm = algorithm
        self.name = f"CDP-FCLUB-DC transcript ({algorithm.__name__}, {world.calibration})"

    @property
    def n_records(self) -> int:
        return int(self.target_rounds.size)

    def check_dataset(self, dataset: Any) -> np.ndarray:
        """(records, d + 1) rows [x, y] with ||x|| <= 1 and y in [0, 1]."""
        data = np.asarray(dataset, dtype=np.float64)
        shape = (self.n_records, self.world.dim + 1)
        if data.shape != shape:
            raise ShapeError(f"dataset must have shape {shape} (one [x, y] per arrival of a "
                             f"server-{TARGET_SERVER} user); got {data.shape}")
        if not np.all(np.isfinite(data)):
            raise RewardError("dataset must be finite")
        norms = np.linalg.norm(data[:, :-1], axis=1)
        y = data[:, -1]
        if np.any(norms > 1.0 + 1e-12) or np.any((y < 0) | (y > 1)):
            raise RewardError("dataset rows need ||x|| <= 1 and y in [0, 1]")
        return data

    def __call__(self, dataset: Any, rng: np.random.Generator, n: int) -> np.ndarray:
        data = self.check_dataset(dataset)
        return np.stack([self._run(data, rng) for _ in range(check_count("n", n))])

    def _run(self, data: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        w = self.world
        record = _Transcript(self)
        policy = self.algorithm(w.config, privacy=w.plan, observer=record)
        env = w.environment()
        env.reset(w.rounds_rng())
        actions = self.layout["actions"].start
        j = 0
        for t in range(w.horizon):
            _, user, items = env.observe(t)
            if self.server[user] == TARGET_SERVER:
                x = data[j, :-1][None, :]
                policy.select(x, user, t, rng)
                policy.update(x, user, 0, float(data[j, -1]), t)
                j += 1
            else:
                a = policy.select(items, user, t, rng)
                policy.update(items, user, a, env.act(t, a).feedback, t)
                record.out[actions + t] = a
        return record.out


def canary_pair(mech: TranscriptMechanism, index: int | None = None) -> NeighbouringPair:
    """All-zero records, and a copy whose record `index` is the canary x = e_1, y = 1.

    Default index: the middle record whose round starts no phase.
    """
    rounds = mech.target_rounds
    if index is None:
        free = [i for i, t in enumerate(rounds) if t not in mech.phases and t > 2]
        if not free:
            raise ShapeError("the audit world has no server-0 arrival outside phase starts")
        index = free[len(free) // 2]
    base = np.zeros((mech.n_records, mech.world.dim + 1))
    canary = base.copy()
    canary[index, 0], canary[index, -1] = 1.0, 1.0
    return NeighbouringPair(canary, base, RELATION,
                            f"record {index} (round {int(rounds[index])}): x = e_1, y = 1 vs 0")


@dataclass(frozen=True, eq=False)
class CanaryStatistic:
    """Timing at the canary round + contents along the canary direction, then Fisher's LDA."""

    mech: TranscriptMechanism
    canary_round: int
    name: str = "canary (timing + contents)"

    def features(self, outputs: np.ndarray) -> np.ndarray:
        m, t = self.mech, self.canary_round
        x = np.asarray(outputs, dtype=np.float64).reshape(len(outputs), m.size)
        timing = x[:, m.layout["upload_count"].start + t]
        content = x[:, m.layout["upload_content"]].reshape(len(x), -1, m.content)
        # the canary adds e_1 e_1^T (entry 0 of the triangle) and y x = e_1 (entry P)
        along = content[:, t:, 0].sum(axis=1) + content[:, t:, len(m.triu[0])].sum(axis=1)
        phase = x[:, m.layout["phase"]].reshape(len(x), len(m.phases), m.slots, m.phase_width)
        later = [i for i, start in enumerate(m.phases) if start > t]
        d1 = m.world.dim + 1
        merge_e1, merge_y = 1, 1 + d1 - 1  # entries (0, 0) and (0, d) of the triangle
        base_e1 = 1 + d1 * (d1 + 1) // 2
        base_b = base_e1 + len(m.triu[0])
        cols = [merge_e1, merge_y, base_e1, base_b]
        phases = phase[:, later][..., cols].sum(axis=(1, 2, 3)) if later else np.zeros(len(x))
        return np.stack([timing, along, phases], axis=1)

    def fit(self, selection0: np.ndarray, selection1: np.ndarray):
        inner = LinearDiscriminant().fit(self.features(selection0), self.features(selection1))
        return lambda outputs: inner(self.features(outputs))


def audit_cdp(world: AuditWorld, rng: np.random.Generator, *, samples: int,
              confidence: float = 0.95,
              algorithm: type[FederatedClub] = FederatedClub) -> AuditReport:
    """Audit `algorithm` in the world on a canary pair against the ledgers' claim."""
    mech = TranscriptMechanism(world, algorithm)
    pair = canary_pair(mech)
    canary_round = int(mech.target_rounds[int(np.flatnonzero(pair.dataset[:, -1])[0])])
    tester = ThresholdTester(statistic=CanaryStatistic(mech, canary_round))
    return run_audit(mech, pair, tester, world.claim(), samples=samples, rng=rng,
                     confidence=confidence, name=mech.name)
