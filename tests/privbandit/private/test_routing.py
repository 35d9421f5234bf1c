"""Routing each record to one stream: its user's until settled, then its cluster's secure sum."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.accounting.ledger import Ledger
from privbandit.mechanisms.publication import Publication
from privbandit.private import ClusterSums, RoutedSums

DIM, RELEASES, BATCH = 2, 8, 40


def _routes(n: int, keep: float, settle: int, epsilon: float = 2.0) -> RoutedSums:
    sums = ClusterSums([Publication("party 0"), Publication("party 1")], DIM, mechanism="mf",
                       releases=RELEASES, records_per_step=BATCH, feature_bound=1.0,
                       epsilon=epsilon, delta=1e-5)
    ledgers = [Ledger(f"party {p} (cluster sums)", epsilon, 1e-5, accountant="zcdp")
               for p in range(2)]
    return RoutedSums(sums, np.arange(n) % 2, keep=keep, settle=settle, ledgers=ledgers,
                      failure=0.1)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 6), keep=st.sampled_from([0.0, 0.3]), settle=st.integers(0, 2),
       seed=st.integers(0, 2**32 - 1))
def test_every_record_enters_exactly_one_stream_step(n, keep, settle, seed):
    """Random partitions and random powered users at every release: a record goes to its
    user's stream or to exactly one step of one cluster stream (only a settled user's);
    every piece's exact Gram matrix is that of the records routed to it, a closed piece
    never moves again, `pieces_of` returns exactly the pieces its members hold whole, and
    each ledger is charged once, within budget."""
    rng = np.random.default_rng(seed)
    coins = np.random.default_rng(seed + 1)
    routes = _routes(n, keep, settle)
    own = 0  # records kept on their users' streams
    grams: dict[int, np.ndarray] = {}  # piece -> exact Gram of the records routed to it
    frozen: dict[int, int] = {}  # closed piece -> its count when it closed
    entered = 0
    for _ in range(RELEASES):
        for _ in range(int(rng.integers(0, BATCH // 2))):
            u = int(rng.integers(n))
            x = rng.normal(size=DIM)
            x /= max(1.0, float(np.linalg.norm(x)))
            entered += 1
            settled = bool(routes.settled[u])
            if not routes.takes(u, coins):
                own += 1
                continue
            assert settled
            routes.enter(u, (x, float(rng.random())), None)
            j = routes.open_of[int(routes.cluster_of[u])]
            grams[j] = grams.get(j, np.zeros((DIM, DIM))) + np.outer(x, x)
        routes.release(rng)
        assert all(not any(xs for xs, _ in p.waiting) for p in routes.pieces)
        labels = rng.integers(0, int(rng.integers(1, n + 1)), size=n)
        _, cluster_of = np.unique(labels, return_inverse=True)
        powered = rng.random(n) < 0.7
        routes.repartition(cluster_of, powered)
        assert np.all(routes.settled <= powered) and np.all(routes.age[routes.settled] >= settle)
        for j, piece in enumerate(routes.pieces):
            if piece.stream is None:
                assert frozen.setdefault(j, piece.count) == piece.count
        for k in range(int(cluster_of.max()) + 1):
            members = np.flatnonzero(cluster_of == k)
            gram, _, bound, count = routes.pieces_of(members)
            whole = [p for p in routes.pieces if p.count and set(
                np.flatnonzero(p.contributors)) <= set(members)]
            assert count == sum(p.count for p in whole) and bound >= 0.0
            np.testing.assert_allclose(gram, sum((p.gram for p in whole), np.zeros((DIM, DIM))),
                                       atol=1e-9)
    assert own + routes.routed == entered
    assert sum(p.count for p in routes.pieces) == routes.routed  # one step each
    for j, piece in enumerate(routes.pieces):
        np.testing.assert_allclose(piece.gram, grams.get(j, np.zeros((DIM, DIM))), atol=1e-9)
    for ledger in routes.ledgers:
        assert len(ledger.events) == (1 if routes.pieces else 0)
        assert ledger.spent()[0] <= 2.0 * (1 + 1e-9)


def test_an_unsettled_user_never_reaches_a_cluster_stream():
    routes = _routes(4, 0.0, 0)
    coins = np.random.default_rng(0)
    assert not any(routes.takes(u, coins) for u in range(4))  # nobody settled yet
    routes.repartition(np.array([0, 0, 1, 1]), np.array([True, False, True, True]))
    assert [routes.takes(u, coins) for u in range(4)] == [True, False, True, True]


@pytest.mark.parametrize(("bad", "match"), [
    ({"ledgers": []}, "ledgers"), ({"party_of": np.array([0, 2])}, "party_of"),
    ({"keep": 1.0}, "keep"), ({"keep": float("nan")}, "keep"), ({"failure": 0.0}, "failure")])
def test_bad_settings_are_refused_by_name(bad, match):
    sums = _routes(2, 0.0, 0).sums
    ledgers = [Ledger(f"party {p}", 2.0, 1e-5, accountant="zcdp") for p in range(2)]
    args = {"party_of": np.arange(2) % 2, "keep": 0.0, "settle": 0, "ledgers": ledgers,
            "failure": 0.1, **bad}
    with pytest.raises(InvalidParameterError, match=match):  # ConfigError is one
        RoutedSums(sums, args.pop("party_of"), **args)
