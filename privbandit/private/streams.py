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
from privbandit.mechanisms.tape import active, feeds

from ..errors import config_error
from ..privacy import sampler_name
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
        units = np.concatenate([np.asarray(p, dtype=np.intp) for p in parties])
        n = units.size
        if n == 0 or not np.array_equal(np.sort(units), np.arange(n)):
            raise config_error("parties", [list(map(int, p)) for p in parties],
                               "disjoint unit indices covering 0..n-1")
        self.dim, self.plan, self.schedule = dim, plan, plan.releases
        self.record_bound = record_bound
        d1 = dim + 1
        bound = record_bound * (1.0 + _BOUND_SLACK)
        self.streams = [plan.stream((d1, d1), l2_sensitivity=math.sqrt(2.0) * bound,
                                    clip_norm=bound, symmetric=True) for _ in range(n)]
        self.party_of = np.empty(n, dtype=np.intp)
        self.ledgers = []
        for p, members in enumerate(parties):
            self.party_of[np.asarray(members, dtype=np.intp)] = p
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
