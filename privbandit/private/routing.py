"""Each record to exactly one stream: its user's own until the user's cluster settles, then its
cluster's secure sum.

A federation that pays the privacy noise once per cluster must still release
per-user statistics while it looks for the clusters.  Splitting every
record's budget between the two loses (docs/private_federation.md); here no
record's budget is split.  Each record goes, at the full budget, to exactly
ONE stream, chosen before its reward is seen:

- a record of a user that is not settled goes to the user's reward-only
  stream (`streams.RewardStreams`, released by the user's local server): what
  detection reads;
- a record of a settled user goes, but for a public-coin fraction `keep`
  kept on the user's stream so that detection keeps watching, to the open
  stream of the user's cluster (`ClusterSums.open`: a reward-only continual
  release over secure sums whose parties are the local servers, each adding
  its members' records; the aggregator learns only the noisy sum, the noise
  of ONE stream).

A user is settled (`RoutedSums.repartition`) when no co-member of its
cluster has left it for `settle` releases and the test of the user against
the rest of its cluster has the power to see a gap of `resolution`
(`clustering.NoiseAwareClustering.powered`): its own releases already tell
it from a cluster that differs by that much.  Streams follow the partition:
after every change, an open stream whose contributors (the users whose
records it holds) all stay in one cluster stays open for that cluster (one
per cluster, the one with the most records); any other closes and its last
prefix stays as a frozen piece.  A cluster's model sums its members' per-user
prefixes and every piece, open or frozen, whose contributors all belong to it
(`RoutedSums.pieces`): a piece whose contributors split is used by no
cluster until one holds them all again -- its records are lost to the models,
never mixed into another cluster's.

Privacy guarantee
-----------------
Neighbouring relation: interactive -- one user-round's reward differs (world,
arrivals, contexts the same); the view is everything the parties receive: the
per-user releases, every cluster stream's sums and the aggregator's masked
shares, the partition, who is settled, which stream each cluster uses, and
the models, actions adapting.  The caller acts on released statistics only,
so every record's features, every Gram matrix and every count are public
along a forced transcript.  Sensitivity: rewards clipped to [0, 1], ||x|| <=
B, so a changed reward moves any sum holding its record by at most B.

Claim: the view is (epsilon, delta)-DP for every record, each per-user
stream calibrated to the budget (its exact Gaussian reading, as
"cdp-fclub-dc"), each cluster stream calibrated to the same budget by zCDP
(`mechanisms.SecureRewardOnlyRelease`: a secure sum's event is read by zCDP
and RDP only).

Proof.  (1) The route of a record is fixed before its reward is used: it is
a function of the partition and the per-user releases up to the last release
(who is settled; which stream a cluster uses) and of a coin drawn from a
generator that reads no data.  Along a forced transcript the two neighbours
route every record alike.  (2) Each stream is one continual release whose
event covers one record entering ANY one of its steps, the steps' inputs
chosen adaptively from earlier outputs (a factorization: C's largest column
norm over its horizon; a tree: the nodes above a leaf; Denisov et al. 2022
for adaptively chosen streams; over secure sums the whole stream is one
secure sum, Kairouz, Liu & Steinke 2021).  Every cluster stream has the same
horizon, the schedule's number of releases, whenever it opens (a stream
opened at release r steps at most R - r times: fewer steps than its horizon,
so its event still covers it), hence one event for them all.  (3) Fix the
flipped record.  It enters exactly one step of exactly one stream; every
other release is computed from records and noise that are the same in both
neighbours given the earlier outputs, so along the forced transcript it
contributes no loss.  The view's loss for the record is therefore that of
the one stream it entered, (epsilon, delta) whichever it was (parallel
composition over records: which branch a record takes is decided from the
past only, and both branches meet the budget).  In full: up to the round
the record enters, the two views have one law (nothing has read it); given
that common past, the rest is (epsilon, delta)-indistinguishable, the
chosen stream's event; averaging P[rest in S | past] <= e^epsilon P'[rest
in S | past] + delta over the common past keeps (epsilon, delta).  A record
enters no second stream (its stream's later prefixes all hold it, inside
that stream's event), so nothing is composed and nothing is split.

The differencing the relation fears -- the sum of {1..5} and then of {1..4},
each over all records -- never happens: a stream's prefix holds only the
records routed to it, once; when a contributor leaves, the stream closes
(its frozen prefix is never released again) and a fresh stream starts
from the next records.

Ledgers: per local server p, "party p" (exact Gaussian: the per-user streams'
event, charged once, users being disjoint) and "party p (cluster sums)"
(zCDP: the cluster streams' event, charged once when the first cluster
stream opens, before it releases: each record of p enters one step of one of
them).  A record of p is paid by exactly one of the two: the
party's guarantee is the larger, which is each ledger's budget.

Trust model (`ClusterSums.trust_model`).  A local server sees its own
users' raw records and what is sent down to it (partition, routing, models:
post-processing).  The global server (the aggregator, honest but curious)
sees every per-user release, each cluster stream's masked shares of every
local server (uniform modulo m but for their sum: `secure_sum`'s view, on
an audit's tape as each entry's `view`) and the noisy sums, the membership
and the routing.  A coalition of the aggregator with local servers: with
`collusion` c (the servers whose shares may be pooled with the aggregator's
view; 0 in "cdp-fclub-dc") the calibration leaves the noise of n - c shares
a whole stream's, so the other servers' records keep the full guarantee;
with c' > c colluders the remaining n - c' shares carry (n - c') / (n - c)
of the stream's noise variance, and the guarantee of the cluster-sum
records weakens to mu sqrt((n - c) / (n - c')) (the per-user releases,
noised by each server itself, keep theirs; a server's own users' records
are never protected from itself).

Noise bounds (utility, not privacy): the members' per-user part by
`RewardStreams.noise_bound` (every set of users at once); each piece's
prefix noise (sub-Gaussian with variance proxy its prefix variance,
`mechanisms.secure_stream`) by `mechanisms.vector_noise_norm_bound` at
failure F / 2 x 6 / (pi^2 j^2) / R for the j-th stream opened (the sum over
every stream that can open and every step is at most F / 2); a cluster's
bound is their sum (triangle inequality), whatever chose the pieces.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from privbandit.accounting.events import PrivacyEvent
from privbandit.accounting.ledger import Ledger
from privbandit.accounting.validation import check_count
from privbandit.mechanisms.noise_bounds import vector_noise_norm_bound
from privbandit.mechanisms.publication import Publication
from privbandit.mechanisms.secure_reward import SecureRewardOnlyRelease

from ..errors import config_error
from ..validation import check_probability

_WHY = "acts on released statistics only (each record's action chose from released data)"


class ClusterSums:
    """The seam every cluster sum passes: reward-only continual releases over secure sums
    whose parties are the local servers (`mechanisms.SecureRewardOnlyRelease`), each
    calibrated alike (one event for every stream, whenever it opens).

    publications: one per local server (the party that marks its records' features
    public and publishes their public part); dim: d; mechanism: "mf" or "tree";
    releases: every stream's horizon (the schedule's releases); records_per_step: the
    most records one server adds to one step; feature_bound: B; epsilon, delta: the
    budget (zCDP calibration); collusion: the local servers that may pool their shares
    with the aggregator (every server must answer each step: min_survivors is all of
    them); masks: None (`pairwise_masks.SimulatedMasks`, a simulation) or a key-agreement
    scheme (`agreed_masks.AgreedMasks`).
    """

    def __init__(self, publications: Sequence[Publication], dim: int, *, mechanism: str,
                 releases: int, records_per_step: int, feature_bound: float, epsilon: float,
                 delta: float, collusion: int = 0, masks=None) -> None:
        self.publications = list(publications)
        self.options = dict(mechanism=mechanism, epsilon=epsilon, delta=delta,
                            feature_bound=feature_bound, records_per_step=records_per_step,
                            collusion=collusion, masks=masks)
        self.dim, self.releases = dim, releases
        self._probe = self.open()  # every stream's settings, read before any opens

    @property
    def parties(self) -> int:
        return len(self.publications)

    def open(self) -> SecureRewardOnlyRelease:
        """A fresh stream of the sum of the parties' records from now on."""
        return SecureRewardOnlyRelease(self.parties, self.dim, self.releases, **self.options)

    @property
    def event(self) -> PrivacyEvent:
        """Every stream's event for one record."""
        return self._probe.event

    @property
    def sigma(self) -> float:
        return self._probe.sigma

    @property
    def trust_model(self) -> str:
        return self._probe.stream.trust_model


@dataclass
class Piece:
    """A cluster stream: the users whose records it holds (`contributors`), its last prefix
    (exact Gram, noisy moments, their count) and a bound on that prefix's noise norm;
    `stream` while open (None once closed: the prefix is frozen)."""

    contributors: np.ndarray
    stream: SecureRewardOnlyRelease | None
    source: int
    gram: np.ndarray
    moments: np.ndarray
    count: int = 0
    bound: float = 0.0
    waiting: list[tuple[list, list]] = field(default_factory=list)


class RoutedSums:
    """Routes each record to one stream and keeps the cluster streams (module docstring).

    sums: the seam (`ClusterSums`); party_of: (n,) each user's local server; keep: the
    public-coin share of a settled user's records kept on its own stream; settle: the
    releases a user's cluster must keep all its co-members; ledgers: one per local
    server, charged here once with the cluster streams' event; failure: F, the
    probability that any piece's noise bound fails over the run.
    """

    def __init__(self, sums: ClusterSums, party_of: np.ndarray, *, keep: float, settle: int,
                 ledgers: Sequence[Ledger], failure: float) -> None:
        self.sums, self.party_of = sums, np.asarray(party_of, dtype=np.intp)
        if len(ledgers) != sums.parties:
            raise config_error("ledgers", len(ledgers), f"one per party ({sums.parties})")
        if self.party_of.ndim != 1 or not np.all((self.party_of >= 0)
                                                 & (self.party_of < sums.parties)):
            raise config_error("party_of", party_of, f"(n,) party indices in 0..{sums.parties - 1}")
        if not 0.0 <= keep < 1.0:
            raise config_error("keep", keep, "a number in [0, 1)")
        self.keep, self.failure = float(keep), check_probability("failure", failure)
        self.settle = check_count("settle", settle, minimum=0)
        self.ledgers = list(ledgers)  # charged when the first stream opens (`_open`)
        n = self.party_of.size
        self.pieces: list[Piece] = []
        self.open_of: dict[int, int] = {}  # cluster index -> its open piece
        self.cluster_of = np.zeros(n, dtype=np.intp)
        self.age = np.zeros(n, dtype=np.int64)  # releases since a co-member last left
        self.settled = np.zeros(n, dtype=bool)
        self.routed = 0
        self.publication = Publication("global server (cluster sums)")

    # -- records ------------------------------------------------------------------------
    def takes(self, user: int, coins: np.random.Generator) -> bool:
        """Whether the record `user` is about to enter goes to its cluster's sum (public: the
        user is settled and a public coin says so)."""
        return bool(self.settled[user]) and coins.random() >= self.keep

    def enter(self, user: int, record: tuple[np.ndarray, float], schedule) -> None:
        """Keep a record of a settled `user` for its cluster's open stream (opened now if the
        cluster has none), declared with it to an end-to-end audit."""
        k = int(self.cluster_of[user])
        j = self.open_of.get(k)
        if j is None:
            j = self.open_of[k] = self._open()
        piece = self.pieces[j]
        party = int(self.party_of[user])
        piece.contributors[user] = True
        xs, ys = piece.waiting[party]
        xs.append(record[0])
        ys.append(record[1])
        self.routed += 1
        self.sums.publications[party].fed(piece.stream.stream, schedule=schedule,
                                           unit=int(user), party=party, routed=True)

    def _open(self) -> int:
        """A fresh cluster stream; the first one charges every party's ledger, before it
        releases, with the streams' event (each record enters one step of one of them)."""
        d, n = self.sums.dim, self.party_of.size
        if not self.pieces:
            for ledger in self.ledgers:
                ledger.charge(self.sums.event)
        self.pieces.append(Piece(np.zeros(n, dtype=bool), self.sums.open(), len(self.pieces) + 1,
                                 np.zeros((d, d)), np.zeros(d),
                                 waiting=[([], []) for _ in range(self.sums.parties)]))
        return len(self.pieces) - 1

    def release(self, rng: np.random.Generator) -> int:
        """Step every open stream with the records its members entered since its last step;
        returns how many streams stepped (each local server sent one masked share to each)."""
        d = self.sums.dim
        stepped = 0
        for piece in self.pieces:
            if piece.stream is None:
                continue
            stepped += 1
            features = [pub.features(np.array(xs, dtype=float).reshape(-1, d), why=_WHY)
                        for pub, (xs, _) in zip(self.sums.publications, piece.waiting,
                                                strict=True)]
            rewards = [np.array(ys, dtype=float) for _, ys in piece.waiting]
            out = piece.stream.add(features, rewards, rng)
            piece.gram, piece.moments, piece.count = out.gram, out.moments, out.count
            piece.bound = 0.0 if out.variance <= 0.0 else vector_noise_norm_bound(
                out.variance, d, self._failure(piece.source))
            piece.waiting = [([], []) for _ in range(self.sums.parties)]
        return stepped

    def _failure(self, source: int) -> float:
        return self.failure / 2.0 * 6.0 / (math.pi**2 * source**2) / max(self.sums.releases, 1)

    # -- membership ---------------------------------------------------------------------
    def repartition(self, cluster_of: np.ndarray, powered: np.ndarray) -> None:
        """Adopt the partition `cluster_of` (n,) (cluster indices 0..m-1), right after a
        release: ages, who is settled (`powered`: the users whose test against the rest of
        their cluster has the power to see the resolution), which stream each cluster
        continues; published."""
        old, new = self.cluster_of, np.asarray(cluster_of, dtype=np.intp)
        lowest = np.full(int(old.max()) + 1, new.size)
        highest = np.full(int(old.max()) + 1, -1)
        np.minimum.at(lowest, old, new)
        np.maximum.at(highest, old, new)
        kept = lowest[old] == highest[old]  # every former co-member is still with the user
        self.age = np.where(kept, self.age + 1, 0)
        self.settled = np.asarray(powered, dtype=bool) & (self.age >= self.settle)
        follow: dict[int, int] = {}
        for j in sorted(self.open_of.values(), key=lambda j: -self.pieces[j].count):
            piece = self.pieces[j]
            owners = np.unique(new[piece.contributors])
            if owners.size == 1 and int(owners[0]) not in follow:
                follow[int(owners[0])] = j
            else:  # its contributors split, or another stream continues that cluster
                piece.stream = None
        self.open_of, self.cluster_of = follow, new
        self.publication.value("routing", np.concatenate((
            self.settled, [-1 if follow.get(k) is None else follow[k]
                           for k in range(int(new.max()) + 1)])))

    def pieces_of(self, members: np.ndarray) -> tuple[np.ndarray, np.ndarray, float, int]:
        """(Gram, noisy moments, noise norm bound, records) of every piece whose contributors
        all belong to `members`."""
        d = self.sums.dim
        inside = np.zeros(self.party_of.size, dtype=bool)
        inside[members] = True
        gram, moments, bound, count = np.zeros((d, d)), np.zeros(d), 0.0, 0
        for piece in self.pieces:
            if piece.count and np.all(inside[piece.contributors]):
                gram += piece.gram
                moments += piece.moments
                bound += piece.bound
                count += piece.count
        return gram, moments, bound, count
