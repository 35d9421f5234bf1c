"""One noise per cluster while detection moves users: cluster sums whose membership changes.

`ClusterReleases` keeps, for every cluster of the current partition, an
estimate of the sum of its members' reward moments over all their records
(their exact Gram matrix beside it), built from releases of the seam
(`sums.TrustedSums`) and of the per-user detection streams only:

- a stream per cluster (`SumStream`), stepped at every release with the
  records its members entered since its previous step.  When the partition
  changes, each changed cluster continues the stream of the old cluster
  whose largest part it holds (the stream now sums the new members' records
  from now on); a cluster with no such part opens a fresh stream; the other
  old streams close and their last prefixes stay as fixed pieces;
- a term for every part that leaves an old cluster other than its largest:
  the part's members' records so far.  The new cluster adds the term, the
  old cluster's continuation subtracts it, so both estimates again cover
  exactly their members' records.  A term is stood in by the detection
  streams' prefixes (free) until it is released once (`TrustedSums.once`):
  at once when its stand-in is noisier than a release (`settle` 0), or when
  the cluster holding it has stood `settle` releases; a user's records enter
  at most `limit` such releases (a public count; a term with a member at
  the limit stays stood in).

Privacy guarantee
-----------------
Neighbouring relation: interactive -- one user-round's reward differs (world,
arrivals, contexts the same); the caller acts on released statistics only, so
every record's features, every Gram matrix, count and partition are public
along a forced transcript.  Sensitivity: one changed reward moves every sum
holding its record by at most Delta = (hi - lo) B.  Claim: each record meets
one step of one cluster stream and at most `limit` one-shot releases, so
with the caller's detection stream the view is mu-GDP for it with
mu^2 = mu_detect^2 + mu_stream^2 + limit mu_once^2; the party ledgers are
charged with exactly that.

Proof.  Write the data as atoms a_(u,r): the sum of (y - c) x over user u's
records of release interval r.  Every release is a linear map of atoms plus
Gaussian noise drawn afresh, and its map is fixed by earlier outputs: the
partition after release r is computed from releases up to r (the caller's
detection), and it fixes which stream each atom of interval r + 1 enters,
which terms exist and when they are released.  The view is therefore an
adaptive composition of Gaussian mechanisms whose queries are chosen from
earlier outputs (Dong, Roth & Su 2019, Theorem 3.2 and Corollary 3.3).

(1) Streams.  Atom a_(u,r) enters exactly one step of one stream: the
stream of u's cluster at the release that closes interval r.  A user
belongs to one cluster, hence one stream, at a time; every stream steps at
every release and reads each member's records from where its own last step
stopped; a partition changes only right after a release, when every stream
has just read every record, and a stream a user enters (continued or fresh)
reads that user's records from then on.  A stream is one `RewardOnlyRelease`
whose event covers one record entering ANY one of its steps (a
factorization: the largest column norm of C; a tree: the nodes above a
leaf), and which records form a step does not change the step's
sensitivity, so a record costs mu_stream whatever the adaptive choices, and
the streams it is not in cost it nothing.  The differencing the relation
fears -- the sum over {1..5}, then over {1..4}, both over all records, with
the correlated noise of one stream -- never happens: when 5 leaves, the
stream of {1..4} goes on with increments of {1..4} only, and 5's past
records appear again only in a term, a fresh one-shot release accounted
below.

(2) Terms.  A term's release sums the records of its members up to their
counts at the cut: one Gaussian release, mu_once for each record in it.  A
user's records enter one only while the user's public count of such
releases is below `limit`, so a record is in at most `limit` of them.
Stand-ins, subtractions, fixed pieces, the mixing with the detection sums and
every estimate are post-processing.

(3) Composition.  By (1) and (2), the releases that read a given record are
its detection stream, one cluster stream and at most `limit` one-shot
releases, each of fixed mu; the others have it outside their query.
Padding the missing one-shot releases with releases that read nothing, the
view is an adaptive composition of at most 2 + limit Gaussian mechanisms
with fixed mu for that record: mu-GDP with the mu^2 above, and
(epsilon, delta)-DP by the exact conversion (Balle & Wang 2018, Theorem 8).
Fully adaptive composition (Smith & Thakurta 2022; Whitehouse, Ramdas,
Rogers & Wu 2023) is not needed: every mu is fixed in advance.  Along a
forced transcript the neighbours make the same choices, so the forced-replay
audit reads, for one flipped reward, its detection step, the one cluster
stream step holding it and the one-shot releases of its user after it.

The audit's view holds every sum (its Gram part as a public value), every
one-shot release and the membership of the sums (`publication`'s channel
"membership", a public
value: equal between neighbours along a forced transcript, or caught as an
unbounded loss).

Ledgers: one per party (a local server), charged before any release with the
detection and stream events (each record meets one of each), and with one
more one-shot event whenever the largest count of one-shot releases over
the party's users rises, before that release: the party's ledger holds the
composition of its worst record (records of different users are different
atoms).  Trust: `TrustedSums` is a trusted aggregator (its docstring).

Noise bounds (utility, not privacy).  Every noise vector is an atom: the
prefix noise of stream j at one of its steps, the noise of one-shot release
j (j counts sources in order of opening), or the detection prefixes of a set
of users at one release.  A cluster's noise is a signed sum of atoms, so
||h|| <= sum |c_j| H_j with H_j a (1 - f_j) bound on atom j
(`mechanisms.vector_noise_norm_bound`; for detection sets,
`RewardStreams.noise_bound`, which holds for every set at once).  Half the
failure F goes to sources, f_j = F / 2 x 6 / (pi^2 j^2) (split over a
stream's steps), whose sum over every source that can ever open is at most
F / 2; half to the detection sets, F / 2 per release split evenly.  Each
atom is drawn fresh when its source releases, so its bound holds whatever
chose the partitions.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from privbandit.accounting.ledger import Ledger
from privbandit.mechanisms.noise_bounds import vector_noise_norm_bound
from privbandit.mechanisms.publication import Publication

from ..errors import config_error
from .streams import RewardStreams
from .sums import SumStream, TrustedSums


@dataclass
class Piece:
    """Reward moments of a set of records: exact Gram (d, d), noisy moments (d,), and the
    noise as signed atoms {atom id: coefficient}."""

    gram: np.ndarray
    moments: np.ndarray
    noise: dict[int, float] = field(default_factory=dict)

    def __add__(self, other: Piece) -> Piece:
        return Piece(self.gram + other.gram, self.moments + other.moments,
                     _combine(self.noise, other.noise, 1.0))

    def __sub__(self, other: Piece) -> Piece:
        return Piece(self.gram - other.gram, self.moments - other.moments,
                     _combine(self.noise, other.noise, -1.0))


def _combine(a: dict[int, float], b: dict[int, float], sign: float) -> dict[int, float]:
    out = dict(a)
    for k, c in b.items():
        out[k] = out.get(k, 0.0) + sign * c
        if out[k] == 0.0:
            del out[k]
    return out


@dataclass
class Term:
    """The moments of `members`' records before `ends` (their counts when a cluster was
    cut): stood in by the detection prefixes until released once (`released`)."""

    members: np.ndarray
    ends: np.ndarray
    piece: Piece
    released: bool = False


@dataclass
class Cluster:
    """A cluster of the current partition: members (sorted), its stream and that stream's
    latest prefix, the fixed pieces it inherited (closed streams' last prefixes), the
    terms it holds {term id: coefficient}, and the releases it has stood."""

    members: np.ndarray
    stream: SumStream
    source: int
    fixed: Piece
    terms: dict[int, float]
    current: Piece | None = None
    age: int = 0


class ClusterReleases:
    """The cluster sums of a partition that changes (see the module docstring).

    sums: the seam (`TrustedSums`); detection: the per-user streams (`RewardStreams`)
    whose released prefixes stand in for a moved part's history until it is released;
    party_of: (n,) each user's party; sigma_stream, sigma_once: noise scales of the
    streams and the one-shot releases; limit: the most one-shot releases a user's
    records enter; settle: the releases a cluster stands before the parts it took from
    cut clusters are released once; ledgers: one per party (charged here with the
    stream event and the one-shot events); failure: F, the probability that any noise
    bound fails over the run.
    """

    def __init__(self, sums: TrustedSums, detection: RewardStreams, party_of: np.ndarray, *,
                 sigma_stream: float, sigma_once: float, limit: int, settle: int,
                 ledgers: list[Ledger], failure: float) -> None:
        if len(ledgers) != int(party_of.max()) + 1:
            raise config_error("ledgers", len(ledgers), "one per party")
        self.sums, self.detection, self.party_of = sums, detection, np.asarray(party_of)
        self.sigma_stream, self.sigma_once = sigma_stream, sigma_once
        self.limit, self.settle = limit, settle
        self.ledgers, self.failure = ledgers, failure
        self.stream_event = sums.stream_event(sigma_stream)
        self.once_event = sums.once_event(sigma_once)
        for ledger in ledgers:
            ledger.charge(self.stream_event)  # each record enters one step of one stream
        n = self.party_of.size
        self.once_count = np.zeros(n, dtype=np.int64)  # one-shot releases per user (public)
        self._charged = np.zeros(len(ledgers), dtype=np.int64)  # one-shots charged per party
        self._variance: list[float] = []
        self._bound: list[float] = []
        self._sources = 0
        self._detected: tuple[int, int] = (-1, 0)  # (detection release, its first atom)
        self.terms: list[Term] = []
        self.clusters: list[Cluster] = []
        # the membership of every sum, on an audit's tape: equal in neighbours or caught
        self.publication = Publication("global server (cluster sums' membership)")
        self.opened = self.once_releases = 0

    # -- records and releases ----------------------------------------------------------
    def observe(self, user: int, x: np.ndarray, y: float) -> None:
        self.sums.observe(user, x, y)

    def release(self, rng: np.random.Generator) -> None:
        """Step every cluster's stream (its members' records since the last step)."""
        for c in self.clusters:
            out = c.stream.step(rng)
            atom = self._atom(out.variance, self._source_failure(c.source) / self.sums.releases)
            c.current = Piece(out.gram, out.moments, {atom: 1.0} if atom >= 0 else {})

    def estimate(self, c: Cluster) -> Piece:
        """Cluster c's estimate of its members' records so far."""
        out = c.fixed if c.current is None else c.fixed + c.current
        for t, coef in c.terms.items():
            out = out + _scaled(self.terms[t].piece, coef)
        return out

    def model(self, k: int) -> tuple[np.ndarray, np.ndarray, float, float]:
        """(Gram, noisy moments, noise norm bound, noise variance per entry) of cluster k."""
        piece = self.estimate(self.clusters[k])
        bound = sum(abs(c) * self._bound[a] for a, c in piece.noise.items())
        variance = sum(c * c * self._variance[a] for a, c in piece.noise.items())
        return piece.gram, piece.moments, float(bound), float(variance)

    # -- membership ---------------------------------------------------------------------
    def repartition(self, groups: list[np.ndarray], rng: np.random.Generator | None) -> None:
        """Adopt the partition `groups` (member arrays, in the caller's cluster order): keep
        every cluster whose members are unchanged (releasing the parts it took once it has
        stood `settle` releases) and rebuild the others from the parts their members bring
        (module docstring)."""
        old = {tuple(c.members): c for c in self.clusters}
        wanted = [np.sort(np.asarray(g, dtype=np.intp)) for g in groups]
        new_of = np.empty(self.party_of.size, dtype=np.intp)
        for i, g in enumerate(wanted):
            new_of[g] = i
        self.publication.value("membership", new_of)
        kept = {i: old[tuple(g)] for i, g in enumerate(wanted) if tuple(g) in old}
        for c in kept.values():
            c.age += 1
            if c.age >= self.settle:
                self._settle(c, rng)
        bundles: dict[int, list[tuple[int, Cluster, dict[int, float]]]] = {}
        moved: dict[int, dict[int, float]] = {}
        for c in self.clusters:
            if any(c is k for k in kept.values()):
                continue
            target = new_of[c.members]
            labels, sizes = np.unique(target, return_counts=True)
            order = np.argsort(-sizes, kind="stable")
            terms = dict(c.terms)
            for lb in labels[order[1:]]:  # every part but the largest leaves as a term
                part = c.members[target == lb]
                t = self._stand_in(part)
                if self.settle == 0 and part.size * self.detection.variance > self.sigma_once**2:
                    self._release_term(t, rng)  # its stand-in is noisier than a release
                moved[int(lb)] = _combine(moved.get(int(lb), {}), {t: 1.0}, 1.0)
                terms = _combine(terms, {t: 1.0}, -1.0)
            main = int(labels[order[0]])
            bundles.setdefault(main, []).append((int(sizes[order[0]]), c, terms))
        self.clusters = [kept[i] if i in kept else self._build(g, bundles.get(i, []),
                                                                moved.get(i, {}))
                         for i, g in enumerate(wanted)]

    def _build(self, members: np.ndarray, bundles: list[tuple[int, Cluster, dict]],
               moved: dict[int, float]) -> Cluster:
        """A changed cluster: it continues the stream of the old cluster whose largest part
        it holds (the largest such), takes the other old clusters' parts frozen, and holds
        the parts moved in as terms; with no old cluster's largest part, a fresh stream."""
        bundles = sorted(bundles, key=lambda b: -b[0])
        fixed, terms = self._zero(), dict(moved)
        for _, c, held in bundles[1:]:  # frozen: their streams close
            fixed = fixed + c.fixed + (c.current if c.current is not None else self._zero())
            terms = _combine(terms, held, 1.0)
        if bundles:
            _, c, held = bundles[0]
            c.stream.follow(members)
            return Cluster(members, c.stream, c.source, c.fixed + fixed,
                           _combine(terms, held, 1.0), c.current)
        self.opened += 1
        return Cluster(members, self.sums.open(members, self.sigma_stream), self._new_source(),
                       fixed, terms)

    def _settle(self, c: Cluster, rng: np.random.Generator | None) -> None:
        """Release once each part cluster c holds in full (a term of coefficient +1 still
        stood in)."""
        for t, coef in c.terms.items():
            if coef == 1.0:
                self._release_term(t, rng)

    def _release_term(self, t: int, rng: np.random.Generator | None) -> None:
        """Release term t once, if it is still stood in and its members are below the limit."""
        term = self.terms[t]
        if not term.released and rng is not None and np.all(
                self.once_count[term.members] < self.limit):
            term.piece = self._once(term.members, term.ends, rng)
            term.released = True

    def _stand_in(self, members: np.ndarray) -> int:
        """A new term for the members' records so far, stood in by the detection streams'
        latest prefixes (free: post-processing), whose noise is bounded for every set of
        users at once."""
        st = self.detection
        if self._detected[0] != st.releases:
            self._detected = (st.releases, len(self._bound))
            share = self.failure / 2.0 / max(st.schedule.releases, 1)
            for size in range(1, st.n_units + 1):  # one atom per set size, uniform over sets
                self._variance.append(size * st.variance)
                self._bound.append(st.noise_bound(size, share))
        noise = {self._detected[1] + members.size - 1: 1.0} if st.variance > 0.0 else {}
        piece = Piece(st.gram[members].sum(axis=0), st.moments[members].sum(axis=0), noise)
        ends = np.array([self.sums.count(u) for u in members], dtype=np.int64)
        self.terms.append(Term(members, ends, piece))
        return len(self.terms) - 1

    def _zero(self) -> Piece:
        d = self.sums.dim
        return Piece(np.zeros((d, d)), np.zeros(d))

    def _once(self, members: np.ndarray, ends: np.ndarray, rng: np.random.Generator) -> Piece:
        """One release of the members' records up to ends, charged first."""
        counts = self.once_count.copy()
        counts[members] += 1
        top = np.zeros(len(self.ledgers), dtype=np.int64)
        np.maximum.at(top, self.party_of, counts)
        for p in np.flatnonzero(top > self._charged):
            self.ledgers[p].charge(self.once_event, int(top[p] - self._charged[p]))
        self._charged = np.maximum(self._charged, top)
        self.once_count = counts
        self.once_releases += 1
        out = self.sums.once(members, np.zeros(members.size, np.int64), ends, self.sigma_once,
                             rng)
        atom = self._atom(out.variance, self._source_failure(self._new_source()))
        return Piece(out.gram, out.moments, {atom: 1.0} if atom >= 0 else {})

    # -- noise atoms -------------------------------------------------------------------------
    def _new_source(self) -> int:
        self._sources += 1
        return self._sources

    def _source_failure(self, source: int) -> float:
        return self.failure / 2.0 * 6.0 / (math.pi**2 * source**2)

    def _atom(self, variance: float, failure: float) -> int:
        """Register the noise of one release (its variance and norm bound); -1 if none."""
        if variance <= 0.0:
            return -1
        self._variance.append(variance)
        self._bound.append(vector_noise_norm_bound(variance, self.sums.dim, failure))
        return len(self._bound) - 1


def _scaled(piece: Piece, coef: float) -> Piece:
    return Piece(coef * piece.gram, coef * piece.moments,
                 {a: coef * c for a, c in piece.noise.items()})
