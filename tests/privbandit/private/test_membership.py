"""Cluster sums whose membership changes: every record in one stream step, at most `limit`
one-shot releases, estimates that cover exactly their members' records, ledgers in budget."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting.accountants import ExactGaussianAccountant
from privbandit.accounting.ledger import Ledger
from privbandit.private import ClusterReleases, ReleasePlan, RewardStreams, TrustedSums
from privbandit.private.sums import SumStream

DIM, RELEASES = 2, 12


class LoggedSums(TrustedSums):
    """Logs which records of which user each stream step and each one-shot release read."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.steps: list[tuple[int, int, int]] = []  # (user, start, end) read by stream steps
        self.onces: list[tuple[int, int, int]] = []

    def once(self, members, starts, ends, sigma, rng):
        self.onces += list(zip(members, starts, ends, strict=True))
        return super().once(members, starts, ends, sigma, rng)


class LoggedStream(SumStream):
    def step(self, rng):
        ends = np.array([self._owner.count(u) for u in self.members])
        self._owner.steps += list(zip(self.members, self._fed, ends, strict=True))
        return super().step(rng)


def _world(n: int, limit: int, settle: int):
    parties = [np.arange(0, n // 2), np.arange(n // 2, n)]
    plan = ReleasePlan(2.0, 1e-5, 400, "mf", "fixed", batch=400 // RELEASES)
    sums = LoggedSums(n, DIM, mechanism="mf", releases=RELEASES, records_per_step=400 // RELEASES,
                      horizon=400, feature_bound=1.0)
    sums.open = lambda members, sigma: LoggedStream(  # every stream logs its steps
        sums, np.sort(np.asarray(members, dtype=np.intp)),
        sums._release(RELEASES, 400 // RELEASES, sigma))
    ledgers = [Ledger(f"party {p}", 2.0, 1e-5, accountant="exact-gaussian") for p in range(2)]
    detection = RewardStreams(parties, DIM, plan, feature_bound=1.0, sigma=8.0, ledgers=ledgers)
    party_of = np.repeat([0, 1], [n // 2, n - n // 2])
    releases = ClusterReleases(sums, detection, party_of, sigma_stream=8.0, sigma_once=8.0,
                               limit=limit, settle=settle, ledgers=ledgers, failure=0.1)
    return sums, detection, releases, ledgers


@settings(max_examples=25, deadline=None)
@given(n=st.integers(3, 7), limit=st.integers(1, 3), settle=st.integers(0, 2),
       seed=st.integers(0, 2**32 - 1))
def test_every_record_meets_one_stream_step_and_at_most_limit_one_shots(n, limit, settle, seed):
    """Partitions drawn at random at every release (detection moving users at will): each
    record is read by exactly one stream step, by at most `limit` one-shot releases, every
    estimate's Gram matrix is its members' exact Gram over all their records, and the
    ledgers hold the worst record's composition within budget."""
    rng = np.random.default_rng(seed)
    sums, detection, releases, ledgers = _world(n, limit, settle)
    releases.repartition([np.arange(n)], None)
    grams = np.zeros((n, DIM, DIM))
    for _ in range(RELEASES):
        for _ in range(int(rng.integers(0, 30))):
            u = int(rng.integers(n))
            x = rng.normal(size=DIM)
            x /= max(1.0, float(np.linalg.norm(x)))
            y = float(rng.random())
            detection.observe(u, detection.public(u, x[None], "test"), y)
            releases.observe(u, x, y)
            grams[u] += np.outer(x, x)
        detection.release(rng)
        releases.release(rng)
        labels = rng.integers(0, int(rng.integers(1, n + 1)), size=n)
        groups = [np.flatnonzero(labels == k) for k in np.unique(labels)]
        releases.repartition(groups, rng)
        for k, g in enumerate(groups):
            gram, _, bound, variance = releases.model(k)
            np.testing.assert_allclose(gram, grams[g].sum(axis=0), atol=1e-9)
            assert bound >= 0.0 and variance >= 0.0
    for u in range(n):
        total = sums.count(u)
        read = np.zeros(total, dtype=int)
        for who, a, b in sums.steps:
            if who == u:
                read[a:b] += 1
        assert np.all(read == 1), (u, read)
        once = np.zeros(total, dtype=int)
        for who, a, b in sums.onces:
            if who == u:
                once[a:b] += 1
        assert once.max(initial=0) <= limit
    mu2 = [ExactGaussianAccountant().compose(e).mu ** 2 for e in (
        detection.streams[0].event, releases.stream_event, releases.once_event)]
    worst = mu2[0] + mu2[1] + limit * mu2[2]
    for ledger in ledgers:
        assert ledger.accountant.mu ** 2 <= worst * (1 + 1e-9)


def test_a_stream_continued_by_a_part_reads_the_new_members_from_now_only():
    sums = TrustedSums(3, DIM, mechanism="mf", releases=4, records_per_step=10, horizon=40,
                       feature_bound=1.0)
    rng = np.random.default_rng(0)
    for u in range(3):
        sums.observe(u, np.array([1.0, 0.0]), 1.0)
    stream = sums.open([0, 1], 1.0)
    assert stream.step(rng).count == 0  # opened after the records: none of them
    sums.observe(0, np.array([0.0, 1.0]), 0.5)
    stream.follow(np.array([0, 2]))
    sums.observe(2, np.array([0.0, 1.0]), 0.5)
    out = stream.step(rng)
    assert out.count == 2  # user 0's new record and user 2's record after it joined
    np.testing.assert_allclose(out.gram, np.diag([0.0, 2.0]))
    once = sums.once([1, 2], [0, 0], [1, 2], 1.0, rng)
    assert once.count == 3
