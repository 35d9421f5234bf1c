"""Per-unit continual release of sufficient statistics: what leaves a party, and its cost.

Every unit (a user of a local server, an agent) owns one stream of
(d+1) x (d+1) increments sum z z^T, z = [x; y], released through a
continual-release mechanism of `privbandit.mechanisms` chosen by name ("tree",
"honaker", "mf") on the party's `ReleaseSchedule`: at each release the unit's
increment since its previous release enters its stream, and the stream's
noisy prefix (the unit's whole history plus noise) is what the party sends.
The stream counts releases, not rounds; its horizon is the schedule's number
of releases.  A unit without new data skips a release (arrivals are public).

Privacy guarantee
-----------------
Neighbouring relation: record-level -- one observation (x, y) of one unit of
a party differs (replace-one).  Sensitivity: ||x|| <= item_bound B and y
clipped to [0, reward_bound], so ||z z^T||_F = ||z||^2 <= c = B^2 + reward_bound^2
(a round that adds several observations, e.g. the K examined items of a
cascade with one click, is one record of norm <= K B^2 + 1), and neighbouring
increments differ by at most sqrt(2) c in Frobenius norm.  With a "fixed" or
"doubling" schedule each record enters exactly one increment -- the mechanism
clips each record, not the sum
(`ContinualRelease.add_records`) -- so the mechanism's event (`event`) is
the whole cost of a record; the streams of different units hold disjoint
records (parallel composition), so one ledger per party is charged once with
that event, before the first release.  Everything computed from the releases
(clusters, models, radii, what other parties do) is post-processing.
Source: the continual-release mechanisms of `privbandit.mechanisms` (Chan,
Shi & Song 2011; Honaker 2015; Henzinger, Upadhyay & Upadhyay 2023).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.accounting.validation import check_count
from privbandit.mechanisms.reward_only import PublicFeatures
from privbandit.mechanisms.tape import active, feeds

from ..errors import config_error
from ..privacy import sampler_name
from .estimates import (
    ExactGramModel,
    NoisyRidge,
    RewardNoiseRidge,
    RidgeModel,
    sum_noise_bound,
)
from .plan import ReleasePlan

# relative slack on the record bound, covering the item-norm check's tolerance
_BOUND_SLACK = 1e-8


class PartyStreams:
    """The streams of every unit, grouped by party, with one ledger per party.

    parties: for each party, the indices of its units (together 0..n-1,
    disjoint).  dim: d.  plan: the `ReleasePlan` (budget, mechanism, schedule,
    sampler) every stream is calibrated and charged by.  record_bound: c, the
    largest ||z||^2 one round adds (see the module docstring): the sensitivity
    this family adds to the plan.
    """

    def __init__(self, parties: Sequence[np.ndarray], dim: int, plan: ReleasePlan, *,
                 record_bound: float) -> None:
        self.party_of = _party_of(parties)
        n = self.party_of.size
        self.dim, self.plan, self.schedule = dim, plan, plan.releases
        self.record_bound = record_bound
        d1 = dim + 1
        bound = record_bound * (1.0 + _BOUND_SLACK)
        self.streams = [plan.stream((d1, d1), l2_sensitivity=math.sqrt(2.0) * bound,
                                    clip_norm=bound, symmetric=True) for _ in range(n)]
        self.ledgers = []
        for p in range(len(parties)):
            ledger = plan.ledger(f"party {p}")
            ledger.charge(self.streams[0].event)  # each record meets one stream: charge once
            self.ledgers.append(ledger)
        self._records = [np.empty((8, d1, d1)) for _ in range(n)]  # rounds since the release
        self.released = np.zeros((n, d1, d1))  # the latest noisy prefix of each unit
        self.variance = np.zeros(n)            # its per-entry noise variance
        self.counts = np.zeros(n, dtype=np.int64)  # records in the released prefix
        self._pending_counts = np.zeros(n, dtype=np.int64)

    def recorded(self, unit: int) -> int:
        """Records `unit` has entered so far, released or waiting (public: how many of its
        rounds were shared)."""
        return int(self.counts[unit] + self._pending_counts[unit])

    @property
    def n_units(self) -> int:
        return self.party_of.size

    def observe(self, unit: int, zz: np.ndarray, **facts) -> None:
        """Keep one round's statistic of `unit` (a record: z z^T, summed over its items); it
        enters the unit's stream at the next release.  `facts`: public facts about the
        record, declared with it to an end-to-end audit (`mechanisms.tape.feeds`: the
        audit flips rounds whose records are released)."""
        if active() is not None:
            feeds(self.streams[unit], unit=int(unit), party=int(self.party_of[unit]), **facts)
        i, buffer = self._pending_counts[unit], self._records[unit]
        if i == buffer.shape[0]:
            buffer = self._records[unit] = np.concatenate((buffer, np.empty_like(buffer)))
        buffer[i] = zz
        self._pending_counts[unit] = i + 1

    def enter(self, unit: int, statistic: np.ndarray, *, by: str, **facts) -> None:
        """Keep a record whose action came from released data (`by` says how; a full
        statistic is released noised whatever its features); `facts` as `observe`."""
        self.observe(unit, statistic, **facts)

    def group_model(self, group: np.ndarray, ridge: NoisyRidge) -> RidgeModel | None:
        """The ridge model of the released prefixes of `group`'s units with data (None if
        none has any or no finite radius exists)."""
        members = group[self.counts[group] > 0]
        if members.size == 0:
            return None
        return ridge.model(self.released[members].sum(axis=0),
                           float(self.variance[members].sum()))

    @property
    def variances(self) -> np.ndarray:
        """Each unit's per-entry noise variance, (n,)."""
        return self.variance

    def release(self, rng: np.random.Generator) -> np.ndarray:
        """Release every unit with new data; returns the units that released."""
        units = np.flatnonzero(self._pending_counts)
        for u in units:
            stream = self.streams[u]
            records = self._records[u][: self._pending_counts[u]]
            self.released[u] = stream.add_records(records, rng)  # clips each record
            self.variance[u] = stream.prefix_variance()
        self.counts[units] += self._pending_counts[units]
        self._pending_counts[units] = 0
        return units

    def describe(self) -> dict:
        s = self.streams[0]
        return {**self.schedule.describe(), "mechanism": type(s).__name__,
                "sigma": float(s.sigma), "units": self.n_units,
                "parties": len(self.ledgers), "record_bound": float(self.record_bound),
                "sampler": sampler_name(self.streams[0].sampler)}

    def statement(self, unit: str, summary: str,
                  relation: Relation = Relation.RECORD) -> PrivacyStatement:
        """The guarantee of the releases, for `unit` (a sentence), under `relation`: record-level
        for the streams alone; interactive when every released record's action came from
        released information (`Billboard`)."""
        plan = self.plan
        return plan.statement(relation, unit, f"({plan.epsilon:g}, {plan.delta:g})-DP for "
                              f"{unit}: {summary}", self.describe())


class RewardStreams:
    """Per-unit reward-only continual releases (`mechanisms.RewardOnlyRelease`), one ledger
    per party, every unit released at every release of the schedule.

    The interactive counterpart of `PartyStreams`: each record's features must be
    public (its action came from public information, the round's items and earlier
    releases), so the Gram matrix, feature sums and counts travel exactly and only
    sum y x carries noise.  parties: each party's unit indices (together 0..n-1);
    dim: d; plan: the `ReleasePlan` (budget, mechanism, schedule, sampler);
    feature_bound: B; reward_range: (lo, hi); failure: the probability that the
    noise bounds of `group_model` fail over the whole run (split evenly over the
    releases).  Every unit's stream steps at every
    release, with an empty step when it has no new record, so all prefixes
    released together carry noise of one variance (`variance`) and the noise of
    any sum of units obeys `estimates.sum_noise_bound` whatever chose the units.

    Privacy guarantee
    -----------------
    Neighbouring relation: interactive -- one user-round's reward differs, the
    features of every released record being public (`PublicFeatures`, refused
    otherwise).  Sensitivity: (hi - lo) B per record (`RewardOnlyRelease`), times
    `changed_records` when one user-round's change alters that many records' rewards
    (a round may add `records_per_round` records, all of one unit), each
    record in exactly one step of its unit's stream; units hold disjoint records
    (parallel composition), so each party's ledger is charged once with the
    stream's event, before the first release.  Release times are the schedule's
    (public), and every unit releases at each.  Source: as `RewardOnlyRelease`.
    """

    def __init__(self, parties: Sequence[np.ndarray], dim: int, plan: ReleasePlan, *,
                 feature_bound: float, reward_range: tuple[float, float] = (0.0, 1.0),
                 failure: float = 0.05, records_per_round: int = 1,
                 changed_records: int = 1) -> None:
        self.party_of = _party_of(parties)
        n = self.party_of.size
        self.dim, self.plan, self.schedule = dim, plan, plan.releases
        self.feature_bound = feature_bound
        self.streams = [plan.reward_stream(dim, feature_bound=feature_bound,
                                           reward_range=reward_range,
                                           records_per_round=records_per_round,
                                           changed_records=changed_records)
                        for _ in range(n)]
        self._per_round = check_count("records_per_round", records_per_round)
        self.ledgers = []
        for p in range(len(parties)):
            ledger = plan.ledger(f"party {p}")
            ledger.charge(self.streams[0].event)  # each record meets one stream: charge once
            self.ledgers.append(ledger)
        self._x = np.empty((64, dim))  # records since the last release, in arrival order
        self._y = np.empty(64)
        self._unit = np.empty(64, dtype=np.intp)
        self._pending = 0
        self.gram = np.zeros((n, dim, dim))   # released: exact Gram of each unit
        self.moments = np.zeros((n, dim))     # released: noisy sum y x of each unit
        self.counts = np.zeros(n, dtype=np.int64)
        self.variance = 0.0                   # per-entry noise variance of every prefix
        self.releases = 0
        self._pending_counts = np.zeros(n, dtype=np.int64)
        self.failure = failure / max(self.schedule.releases, 1)  # per release

    @property
    def n_units(self) -> int:
        return self.party_of.size

    def pending(self, unit: int | None = None) -> int:
        """Records waiting for the next release (of `unit`, or of all units)."""
        if unit is None:
            return self._pending
        return int(self._pending_counts[unit])

    def recorded(self, unit: int) -> int:
        """Records `unit` has entered so far, released or waiting (public)."""
        return int(self.counts[unit] + self._pending_counts[unit])

    def enter(self, unit: int, record: tuple[np.ndarray, float], *, by: str, **facts) -> None:
        """Keep the record (x, y) of a round whose action came from released data (`by`
        says how: the features are marked public with it); `facts` as `observe`."""
        x, y = record
        self.observe(unit, PublicFeatures(np.asarray(x, dtype=float)[None], by=by), y, **facts)

    def group_model(self, group: np.ndarray, ridge: RewardNoiseRidge) -> ExactGramModel | None:
        """The model of the released prefixes of `group`'s units with data (None if none
        has any): exact Gram matrix, noisy moments, and the noise bound of that many units
        (`noise_bound`, uniform over every set, at the per-release failure)."""
        members = group[self.counts[group] > 0]
        if members.size == 0:
            return None
        return ridge.model(self.gram[members].sum(axis=0), self.moments[members].sum(axis=0),
                           self.noise_bound(members.size, self.failure))

    @property
    def released(self) -> np.ndarray:
        """The released prefixes in the (d+1) x (d+1) layout [[G, b], [b^T, 0]], (n, ., .)."""
        d = self.dim
        out = np.zeros((self.n_units, d + 1, d + 1))
        out[:, :d, :d] = self.gram
        out[:, :d, d] = self.moments
        out[:, d, :d] = self.moments
        return out

    @property
    def variances(self) -> np.ndarray:
        """Each unit's per-entry noise variance (all equal: every unit steps together)."""
        return np.full(self.n_units, self.variance)

    def observe(self, unit: int, features: PublicFeatures, reward: float | np.ndarray,
                **facts) -> None:
        """Keep one round's public records (an (R, d) `PublicFeatures`, R <= records_per_round;
        one record by default) and their rewards (a number, or (R,)) for `unit`; `facts`:
        public facts about the round, declared to an end-to-end audit as
        `PartyStreams.observe` does."""
        if not isinstance(features, PublicFeatures):
            raise config_error("features", type(features).__name__,
                               "PublicFeatures (the records' actions came from released data)")
        r = len(features)
        rewards = np.asarray(reward, dtype=float).reshape(-1)
        if rewards.size != r or not 1 <= r <= self._per_round:
            raise config_error("features and rewards", (r, rewards.size),
                               f"as many rewards as records, 1 to {self._per_round}")
        if active() is not None:
            feeds(self.streams[unit].mechanism, unit=int(unit),
                  party=int(self.party_of[unit]), **facts)
        i = self._pending
        while i + r > self._y.size:
            self._x = np.concatenate((self._x, np.empty_like(self._x)))
            self._y = np.concatenate((self._y, np.empty_like(self._y)))
            self._unit = np.concatenate((self._unit, np.empty_like(self._unit)))
        self._x[i:i + r], self._y[i:i + r], self._unit[i:i + r] = features.features, rewards, unit
        self._pending_counts[unit] += r
        self._pending = i + r

    def release(self, rng: np.random.Generator) -> None:
        """Every unit's stream steps once (its records since the last release, maybe none)."""
        units = self._unit[:self._pending]
        order = np.argsort(units, kind="stable")
        edges = np.searchsorted(units[order], np.arange(self.n_units + 1))
        by = "each record marked public when observed (RewardStreams.observe)"
        for u, stream in enumerate(self.streams):
            rows = order[edges[u]:edges[u + 1]]
            out = stream.add(PublicFeatures(self._x[rows], by=by), self._y[rows], rng)
            self.gram[u], self.moments[u], self.counts[u] = out.gram, out.moments, out.count
        self.variance = self.streams[0].prefix_variance()
        self.releases += 1
        self._pending = 0
        self._pending_counts[:] = 0

    def noise_bound(self, members: int, failure: float) -> float:
        """A bound on the norm of the noise of the sum of any `members` units' moments, for
        every such set at once, with probability >= 1 - failure (per release)."""
        return sum_noise_bound(self.variance, self.dim, members, self.n_units, failure)

    def describe(self) -> dict:
        s = self.streams[0]
        return {**self.schedule.describe(), "mechanism": type(s.mechanism).__name__,
                "release": "reward-only (public Gram)", "sigma": float(s.sigma),
                "units": self.n_units, "parties": len(self.ledgers),
                "feature_bound": float(self.feature_bound),
                "l2_sensitivity": float(s.l2_sensitivity), "sampler": sampler_name(s.sampler)}

    def statement(self, unit: str, summary: str,
                  relation: Relation = Relation.INTERACTIVE) -> PrivacyStatement:
        """The guarantee of the releases, for `unit` (a sentence)."""
        plan = self.plan
        return plan.statement(relation, unit, f"({plan.epsilon:g}, {plan.delta:g})-DP for "
                              f"{unit}: {summary}", self.describe())


def _party_of(parties: Sequence[np.ndarray]) -> np.ndarray:
    """The party of each unit, checking the parties cover 0..n-1 disjointly."""
    units = np.concatenate([np.asarray(p, dtype=np.intp) for p in parties])
    n = units.size
    if n == 0 or not np.array_equal(np.sort(units), np.arange(n)):
        raise config_error("parties", [list(map(int, p)) for p in parties],
                           "disjoint unit indices covering 0..n-1")
    party_of = np.empty(n, dtype=np.intp)
    for p, members in enumerate(parties):
        party_of[np.asarray(members, dtype=np.intp)] = p
    return party_of
