"""Per-unit continual release of statistics: what leaves a party, and what it costs.

Every unit (a user of a local server, an agent) owns one continual-release
stream of `privbandit.mechanisms` (by name: "tree", "honaker", "mf"), released
on the party's data-independent `ReleaseSchedule`; the stream counts releases,
not rounds (its horizon is the schedule's number of releases), and its noisy
prefix -- the unit's whole history plus noise -- is what the party sends.
Units hold disjoint records, so one ledger per party is charged once, before
the first release, with one stream's event (parallel composition); each party
publishes through its own `mechanisms.Publication` (public features, the
public part of its releases, and the declaration of every record it takes,
`Publication.fed`: the end-to-end audit flips released rounds and checks each
record reached its release on the tape).  That is `UnitStreams`, the part the
two kinds of streams share.

- `PartyStreams`: the full statistic, (d+1) x (d+1) increments sum z z^T,
  z = [x; y], with symmetric noise; a unit without new data skips a release.
  Record-level: one observation (x, y) of one unit differs (replace-one);
  ||x|| <= B and y clipped to [0, reward_bound], so ||z z^T||_F = ||z||^2 <= c =
  B^2 + reward_bound^2 (a round that adds several observations, e.g. the K
  examined items of a cascade with one click, is one record of norm <= K B^2 + 1),
  and neighbouring increments differ by at most sqrt(2) c in Frobenius norm;
  the mechanism clips each record, not the sum (`ContinualRelease.add_records`).
- `RewardStreams`: reward-only releases (`mechanisms.RewardOnlyRelease`), the
  Gram part exact and public, sum y x noised; every unit steps at every release.
  Interactive: one user-round's reward differs, each released record's
  features being public (its action came from released data).

With a "fixed", "doubling" or "geometric" schedule each record enters exactly
one step of its unit's stream, so the stream's event is the whole cost of a
record.  Everything computed from the releases (clusters, models, radii, what
other parties do) is post-processing.  Sources: the continual-release
mechanisms of `privbandit.mechanisms` (Chan, Shi & Song 2011; Honaker 2015;
Henzinger, Upadhyay & Upadhyay 2023); Shariff & Sheffet (2018) for the
reward-only part.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from privbandit.accounting.ledger import Ledger
from privbandit.accounting.statement import PrivacyStatement, Relation
from privbandit.accounting.validation import check_count
from privbandit.mechanisms.publication import Publication, PublicFeatures

from ..errors import config_error
from ..privacy import sampler_name
from ..validation import BOUND_SLACK
from .estimates import (
    ExactGramModel,
    NoisyRidge,
    RewardNoiseRidge,
    RidgeModel,
    sum_noise_bound,
)
from .plan import ReleasePlan


class UnitStreams:
    """One stream per unit, units grouped by parties, one ledger per party.

    parties: for each party, the indices of its units (together 0..n-1,
    disjoint); dim: d; plan: the `ReleasePlan` every stream is calibrated and
    charged by; stream: builds one unit's stream (called n times); ledgers: one
    per party to charge (default: new ones with the plan's budget), for a family
    that composes these streams with other releases in the same ledgers.  Each
    party's ledger is charged once with the first stream's event, before any
    release (every stream carries the same event; a record meets one stream).
    `publications`: each party's `Publication`; `relation`: the relation the statement
    holds under by default.
    """

    relation: Relation = Relation.RECORD

    def __init__(self, parties: Sequence[np.ndarray], dim: int, plan: ReleasePlan,
                 stream: Callable[[], Any], ledgers: Sequence[Ledger] | None = None) -> None:
        self.party_of = _party_of(parties)
        n = self.party_of.size
        self.dim, self.plan, self.schedule = dim, plan, plan.releases
        self.streams = [stream() for _ in range(n)]
        if ledgers is not None and len(ledgers) != len(parties):
            raise config_error("ledgers", len(ledgers), f"one per party ({len(parties)})")
        self.publications = [Publication(f"party {p}") for p in range(len(parties))]
        self.ledgers = list(ledgers) if ledgers is not None else [
            plan.ledger(f"party {p}") for p in range(len(parties))]
        for ledger in self.ledgers:
            ledger.charge(self.streams[0].event)  # each record meets one stream: charge once
        self.counts = np.zeros(n, dtype=np.int64)  # records in the released prefix
        self._pending_counts = np.zeros(n, dtype=np.int64)  # records waiting for a release

    @property
    def n_units(self) -> int:
        return self.party_of.size

    def recorded(self, unit: int) -> int:
        """Records `unit` has entered so far, released or waiting (public: how many of its
        rounds were shared)."""
        return int(self.counts[unit] + self._pending_counts[unit])

    def _declare(self, unit: int, mechanism: Any, facts: dict) -> None:
        """Declare that the round's record of `unit` enters `mechanism`'s next release, at
        the schedule's next release round (`Publication.fed`), with public `facts`."""
        party = int(self.party_of[unit])
        self.publications[party].fed(mechanism, schedule=self.schedule, unit=int(unit),
                                     party=party, **facts)

    def public(self, unit: int, features: np.ndarray, why: str) -> PublicFeatures:
        """`features` (R, d) of `unit`'s records, marked public by its party's publication
        (`why`: how their actions were chosen from released data)."""
        return self.publications[int(self.party_of[unit])].features(features, why=why)

    def statement(self, unit: str, summary: str,
                  relation: Relation | None = None) -> PrivacyStatement:
        """The guarantee of the releases, for `unit` (a sentence), under `relation` (default
        the class's: record-level for full statistics, interactive for reward-only ones;
        a full statistic is interactive when every released record's action came from
        released information, `Billboard`)."""
        plan = self.plan
        return plan.statement(relation or self.relation, unit,
                              f"({plan.epsilon:g}, {plan.delta:g})-DP for {unit}: {summary}",
                              self.describe())

    def describe(self) -> dict:
        return {**self.schedule.describe(), "units": self.n_units, "parties": len(self.ledgers)}


class PartyStreams(UnitStreams):
    """The full statistic of every unit (see the module docstring).

    record_bound: c, the largest ||z||^2 one round adds: the sensitivity this
    family adds to the plan.
    """

    def __init__(self, parties: Sequence[np.ndarray], dim: int, plan: ReleasePlan, *,
                 record_bound: float) -> None:
        d1 = dim + 1
        bound = record_bound * (1.0 + BOUND_SLACK)
        super().__init__(parties, dim, plan, lambda: plan.stream(
            (d1, d1), l2_sensitivity=math.sqrt(2.0) * bound, clip_norm=bound, symmetric=True))
        self.record_bound = record_bound
        n = self.n_units
        self._records = [np.empty((8, d1, d1)) for _ in range(n)]  # rounds since the release
        self.released = np.zeros((n, d1, d1))  # the latest noisy prefix of each unit
        self.variance = np.zeros(n)            # its per-entry noise variance

    def observe(self, unit: int, zz: np.ndarray, **facts) -> None:
        """Keep one round's statistic of `unit` (a record: z z^T, summed over its items); it
        enters the unit's stream at the next release.  `facts`: public facts about the
        record, declared with it (`Publication.fed`: an end-to-end audit flips rounds whose
        records are released)."""
        self._declare(unit, self.streams[unit], facts)
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
        return {**super().describe(), "mechanism": type(s).__name__, "sigma": float(s.sigma),
                "record_bound": float(self.record_bound), "sampler": sampler_name(s.sampler)}


class RewardStreams(UnitStreams):
    """Per-unit reward-only continual releases (`mechanisms.RewardOnlyRelease`), one ledger
    per party, every unit released at every release of the schedule.

    The interactive counterpart of `PartyStreams`: each record's features must be
    public (its action came from public information, the round's items and earlier
    releases), so the Gram matrix, feature sums and counts travel exactly and only
    sum y x carries noise.  parties: each party's unit indices (together 0..n-1);
    dim: d; plan: the `ReleasePlan` (budget, mechanism, schedule, sampler);
    feature_bound: B; reward_range: (lo, hi); failure: the probability that the
    noise bounds of `group_model` fail over the whole run (split evenly over the
    releases); sigma: the streams' noise scale (default: calibrated to the plan's
    budget); ledgers: one per party to charge (default: new ones with the plan's
    budget), for a family that composes these streams with other releases in the
    same ledgers.  Every unit's stream steps at every
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

    relation = Relation.INTERACTIVE

    def __init__(self, parties: Sequence[np.ndarray], dim: int, plan: ReleasePlan, *,
                 feature_bound: float, reward_range: tuple[float, float] = (0.0, 1.0),
                 failure: float = 0.05, records_per_round: int = 1,
                 changed_records: int = 1, sigma: float | None = None,
                 ledgers: Sequence[Ledger] | None = None) -> None:
        super().__init__(parties, dim, plan, lambda: plan.reward_stream(
            dim, feature_bound=feature_bound, reward_range=reward_range,
            records_per_round=records_per_round, changed_records=changed_records,
            sigma=sigma), ledgers)
        n = self.n_units
        self.feature_bound = feature_bound
        self._per_round = check_count("records_per_round", records_per_round)
        self._x = np.empty((64, dim))  # records since the last release, in arrival order
        self._y = np.empty(64)
        self._unit = np.empty(64, dtype=np.intp)
        self._pending = 0
        self.gram = np.zeros((n, dim, dim))   # released: exact Gram of each unit
        self.moments = np.zeros((n, dim))     # released: noisy sum y x of each unit
        self.variance = 0.0                   # per-entry noise variance of every prefix
        self.releases = 0
        self.failure = failure / max(self.schedule.releases, 1)  # per release

    def pending(self, unit: int | None = None) -> int:
        """Records waiting for the next release (of `unit`, or of all units)."""
        if unit is None:
            return self._pending
        return int(self._pending_counts[unit])

    def enter(self, unit: int, record: tuple[np.ndarray, float], *, by: str, **facts) -> None:
        """Keep the record (x, y) of a round whose action came from released data (`by`
        says how: the party's publication marks the features public with it); `facts` as
        `observe`."""
        x, y = record
        self.observe(unit, self.public(unit, np.asarray(x, dtype=float)[None], by), y,
                     **facts)

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
        public facts about the round, declared with it as `PartyStreams.observe` does."""
        if not isinstance(features, PublicFeatures):
            raise config_error("features", type(features).__name__,
                               "PublicFeatures (the records' actions came from released data)")
        r = len(features)
        rewards = np.asarray(reward, dtype=float).reshape(-1)
        if rewards.size != r or not 1 <= r <= self._per_round:
            raise config_error("features and rewards", (r, rewards.size),
                               f"as many rewards as records, 1 to {self._per_round}")
        self._declare(unit, self.streams[unit].mechanism, facts)
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
        why = "each record marked public when observed (RewardStreams.observe)"
        for u, stream in enumerate(self.streams):
            rows = order[edges[u]:edges[u + 1]]
            out = stream.add(self.public(u, self._x[rows], why), self._y[rows], rng)
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
        return {**super().describe(), "mechanism": type(s.mechanism).__name__,
                "release": "reward-only (public Gram)", "sigma": float(s.sigma),
                "feature_bound": float(self.feature_bound),
                "l2_sensitivity": float(s.l2_sensitivity), "sampler": sampler_name(s.sampler)}


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
