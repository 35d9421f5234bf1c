"""C-anonymous aggregation and the feedback-eliciting sub-algorithm (seed 004 §3.1)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting import (
    BudgetExceededError,
    LaplaceEvent,
    Ledger,
    NotDifferentiallyPrivate,
    NotDifferentiallyPrivateError,
)
from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms.anonymous import (
    KAnonymousAggregator,
    elicit_feedback,
    pack_groups,
    split_groups,
)
from privbandit.mechanisms.errors import AnonymityError, OutOfBoundsError, ShapeError
from privbandit.mechanisms.samplers import FAST, OpenDPSampler


class RecordingSource:
    """Reward 2**user: a sum tells exactly which users it covers.  Records every call."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, users, arms, rng):
        self.calls += 1
        return np.ldexp(1.0, users)


def _members_of(total: float) -> list[int]:
    bits, user, t = [], 0, int(total)
    while t:
        if t & 1:
            bits.append(user)
        t >>= 1
        user += 1
    return bits


def gaussian_source(mu, sd=1.0):
    def source(users, arms, rng):
        return mu[users, arms] + sd * rng.standard_normal(users.shape)
    return source


@st.composite
def requests(draw):
    n = draw(st.integers(1, 40))
    rounds = draw(st.integers(1, 3))
    s = draw(st.integers(0, 5))
    g = draw(st.integers(1, 6))
    members = np.array(
        draw(st.lists(st.integers(-1, n - 1), min_size=rounds * s * g, max_size=rounds * s * g)),
        dtype=np.int64,
    ).reshape(rounds, s, g)
    arms = np.array(draw(st.lists(st.integers(0, 2), min_size=rounds * s,
                                  max_size=rounds * s)), dtype=np.int64).reshape(rounds, s)
    return n, members, arms, draw(st.integers(1, 4))


@given(requests())
def test_no_released_sum_covers_fewer_than_c_distinct_users(request):
    n, members, arms, c = request
    source = RecordingSource()
    agg = KAnonymousAggregator(c, source, n_users=n)
    try:
        sums = agg.aggregate(members, arms, np.random.default_rng(0))
    except AnonymityError:
        assert source.calls == 0  # refused before any reward was drawn
        return
    assert sums.shape == members.shape[:-1]
    for r in range(members.shape[0]):
        seen: set[int] = set()
        for s in range(members.shape[1]):
            covered = _members_of(sums[r, s])
            assert len(covered) >= c
            assert sorted(covered) == sorted(u for u in members[r, s] if u >= 0)
            assert seen.isdisjoint(covered)  # groups of one round never overlap
            seen.update(covered)


@given(st.integers(1, 4), st.integers(0, 3), st.data())
def test_any_overlap_within_a_round_is_refused(c, extra, data):
    users = data.draw(st.permutations(range(20)))
    size = c + 1 + extra
    groups = [users[:size], users[size:2 * size]]
    dup = data.draw(st.sampled_from(groups[0]))
    groups[1] = groups[1] + [dup]
    source = RecordingSource()
    agg = KAnonymousAggregator(c, source)
    with pytest.raises(AnonymityError, match=rf"overlap check failed: user {dup} appears"):
        agg.aggregate(pack_groups(groups), np.zeros(2, dtype=int), np.random.default_rng(0))
    assert source.calls == 0


@st.composite
def assignments(draw):
    n = draw(st.integers(1, 30))
    k = draw(st.integers(1, 4))
    a = draw(st.lists(st.integers(-1, k - 1), min_size=n, max_size=n))
    return np.array(a, dtype=np.int64), k, draw(st.integers(1, 4))


@given(assignments())
def test_elicitation_structure(case):
    a, k, c = case
    mu = np.arange(a.size * k, dtype=float).reshape(a.size, k) / 7.0
    agg = KAnonymousAggregator(c, gaussian_source(mu, sd=0.0), n_users=a.size, n_arms=k)
    e = elicit_feedback(agg, a, np.random.default_rng(1))
    counts = np.bincount(a[a >= 0], minlength=k)
    expect_covered = (a >= 0) & (counts[np.maximum(a, 0)] >= c + 1)
    np.testing.assert_array_equal(e.covered, expect_covered)
    np.testing.assert_array_equal(e.uncovered, np.flatnonzero((a >= 0) & ~expect_covered))
    sizes = (e.groups >= 0).sum(axis=1)
    assert np.all((sizes >= c + 1) & (sizes <= 2 * c + 1))
    members = e.groups[e.groups >= 0]
    assert np.array_equal(np.sort(members), np.flatnonzero(expect_covered))
    assert np.all(a[e.groups][e.groups >= 0] == np.repeat(e.group_arms, sizes))
    assert e.rounds == 2 * c + 2 and e.aggregates.shape == (2 * c + 2, e.groups.shape[0])
    # deterministic rewards: the estimates are the means themselves
    idx = np.flatnonzero(e.covered)
    np.testing.assert_allclose(e.estimates[idx], mu[idx, a[idx]], atol=1e-9)
    assert np.all(np.isnan(e.estimates[~e.covered]))


@settings(max_examples=8, derandomize=True)
@given(st.integers(1, 3), st.integers(8, 16), st.integers(0, 2**32 - 1))
def test_elicited_estimates_are_unbiased(c, n, seed):
    rng = np.random.default_rng(seed)
    k, runs = 2, 1500
    mu = rng.uniform(0.0, 1.0, (n, k))
    a = rng.integers(0, k, n)
    agg = KAnonymousAggregator(c, gaussian_source(mu), n_users=n, n_arms=k)
    results = [elicit_feedback(agg, a, rng) for _ in range(runs)]
    covered = results[0].covered
    if not covered.any():
        return
    est = np.array([r.estimates for r in results])[:, covered]
    truth = mu[covered, a[covered]]
    z = (est.mean(axis=0) - truth) / (est.std(axis=0, ddof=1) / np.sqrt(runs))
    # Bonferroni over the covered users keeps the per-example false alarm at 0.27%.
    assert np.all(np.abs(z) < 3.0 + np.sqrt(2 * np.log(covered.sum())))
    # Power check: pairing the wrong rounds (k+1 instead of k) estimates a neighbour's
    # reward, which this test tells apart from the truth.
    g = results[0].groups
    first = g[:, 0]
    wrong = np.array([r.aggregates[0] - r.aggregates[2] for r in results])
    zw = (wrong.mean(axis=0) - mu[first, a[first]]) / (wrong.std(axis=0, ddof=1) / np.sqrt(runs))
    assert np.max(np.abs(zw)) > 3.0 or np.allclose(mu[first, a[first]], mu[g[:, 1], a[g[:, 1]]],
                                                   atol=0.2)


def test_laplace_option_keeps_estimates_unbiased_and_is_charged():
    rng = np.random.default_rng(3)
    n, k, c, runs = 10, 2, 2, 3000
    p = rng.uniform(0.2, 0.8, (n, k))
    a = np.array([0] * 6 + [1] * 4)

    def bernoulli(users, arms, rng):
        return (rng.random(users.shape) < p[users, arms]).astype(float)

    agg = KAnonymousAggregator(c, bernoulli, laplace_epsilon=2.0, reward_bounds=(0, 1))
    # the default grid sampler adds its rounding slack to the sensitivity and the scale
    assert agg.event.scale == pytest.approx(0.5, rel=1e-9) and agg.event.scale >= 0.5
    assert agg.event.l1_sensitivity == pytest.approx(1.0, rel=1e-9)
    ledger = Ledger("one user's reward", epsilon=1e9)
    est = np.array([elicit_feedback(agg, a, rng, ledger=ledger).estimates for _ in range(runs)])
    assert ledger.summary()["releases"] == runs  # one charge per elicitation, x(2C+2) rounds
    assert ledger.spent()[0] == pytest.approx(2.0 * runs * (2 * c + 2))
    z = (est.mean(0) - p[np.arange(n), a]) / (est.std(0, ddof=1) / np.sqrt(runs))
    assert np.all(np.abs(z) < 3.0 + np.sqrt(2 * np.log(n)))


def test_laplace_noise_has_the_declared_scale():
    agg = KAnonymousAggregator(1, lambda u, a, r: np.zeros(u.shape), laplace_epsilon=0.5,
                               reward_bounds=(-1.0, 1.0))
    assert agg.scale == pytest.approx(4.0, rel=1e-9) and agg.noisy
    noise = agg.aggregate(np.arange(4000).reshape(4000, 1), np.zeros(4000, dtype=int),
                          np.random.default_rng(0))
    # Laplace(b): E|X| = b, Var X = 2 b^2
    assert abs(np.abs(noise).mean() - 4.0) < 0.25
    assert abs(noise.var() - 32.0) < 4.0


def test_exact_sampler_adds_its_grid_slack_to_the_event():
    agg = KAnonymousAggregator(2, lambda u, a, r: np.full(u.shape, 0.5), laplace_epsilon=1.0,
                               reward_bounds=(0, 1), sampler=OpenDPSampler(k=-40))
    sens = 1.0 + 2.0**-40
    assert agg.event == LaplaceEvent(scale=sens, l1_sensitivity=sens)
    out = agg.aggregate([[0, 1], [2, 3]], [0, 0], np.random.default_rng(0))
    assert out.shape == (2,) and np.all(np.isfinite(out))
    fast = KAnonymousAggregator(2, lambda u, a, r: u, laplace_epsilon=1.0, reward_bounds=(0, 1),
                                sampler=FAST)
    assert fast.event.l1_sensitivity == 1.0 and FAST.exact is False


def test_events_are_not_dp_without_noise_and_ledgers_note_them():
    agg = KAnonymousAggregator(2, RecordingSource())
    assert isinstance(agg.event, NotDifferentiallyPrivate) and "C=2" in agg.event.reason
    ledger = Ledger("user", epsilon=1.0)
    with pytest.raises(NotDifferentiallyPrivateError):
        ledger.charge(agg.event)
    agg.aggregate([[0, 1]], [0], np.random.default_rng(0), ledger=ledger)
    assert ledger.summary()["not_dp_releases"] == [agg.event.reason]


def test_budget_refusal_draws_and_releases_nothing():
    source = RecordingSource()
    agg = KAnonymousAggregator(1, source, laplace_epsilon=1.0, reward_bounds=(0, 1))
    ledger = Ledger("user", epsilon=2.5)
    rng = np.random.default_rng(0)
    agg.aggregate(np.array([[[0]], [[1]]]), np.zeros((2, 1), dtype=int), rng, ledger=ledger)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError):
        agg.aggregate(np.array([[[0]], [[1]]]), np.zeros((2, 1), dtype=int), rng, ledger=ledger)
    assert source.calls == 1 and rng.bit_generator.state == state
    assert ledger.spent()[0] == pytest.approx(2.0)


def test_same_seed_same_aggregates_bit_for_bit():
    mu = np.random.default_rng(0).uniform(size=(12, 3))
    agg = KAnonymousAggregator(2, gaussian_source(mu), laplace_epsilon=1.0, reward_bounds=(-3, 4))
    a = np.array([0, 1, 2] * 4)
    one = elicit_feedback(agg, a, np.random.default_rng(9))
    two = elicit_feedback(agg, a, np.random.default_rng(9))
    assert one.aggregates.tobytes() == two.aggregates.tobytes()
    assert one.estimates.tobytes() == two.estimates.tobytes()


def test_clipping_and_rejecting_out_of_bound_rewards():
    high = lambda u, a, r: np.full(u.shape, 5.0)
    clip = KAnonymousAggregator(2, high, reward_bounds=(0, 1))
    np.testing.assert_array_equal(clip.aggregate([[0, 1, 2]], [0], np.random.default_rng(0)),
                                  [3.0])
    reject = KAnonymousAggregator(2, high, reward_bounds=(0, 1), out_of_bounds="reject")
    with pytest.raises(OutOfBoundsError, match=r"rewards must lie in reward_bounds \[0, 1\] "
                                                r"\(out_of_bounds='reject'\); got 5.0"):
        reject.aggregate([[0, 1, 2]], [0], np.random.default_rng(0))


def test_split_groups_balances_sizes_and_skips_small_arms():
    a = np.array([0] * 9 + [1] * 3 + [2] * 4 + [-1] * 2)
    groups, arms = split_groups(a, threshold=3)
    assert arms.tolist() == [0, 0, 2]
    assert (groups >= 0).sum(1).tolist() == [5, 4, 4]
    assert groups[0].tolist() == [0, 1, 2, 3, 4, -1, -1]
    assert groups[1].tolist() == [5, 6, 7, 8, -1, -1, -1]
    assert groups[2].tolist() == [12, 13, 14, 15, -1, -1, -1]


def test_arm_without_enough_users_gives_no_release():
    source = RecordingSource()
    agg = KAnonymousAggregator(3, source, n_users=4)
    e = elicit_feedback(agg, np.array([0, 0, 1, 1]), np.random.default_rng(0))
    assert source.calls == 0 and e.uncovered.tolist() == [0, 1, 2, 3]
    assert e.aggregates.shape == (8, 0) and np.all(np.isnan(e.estimates))


def test_results_are_read_only():
    agg = KAnonymousAggregator(1, RecordingSource())
    e = elicit_feedback(agg, np.array([0, 0]), np.random.default_rng(0))
    with pytest.raises(ValueError):
        e.estimates[0] = 1.0


def _agg(**kw):
    base = dict(n_users=6, n_arms=2)
    base.update(kw)
    return KAnonymousAggregator(2, RecordingSource(), **base)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(threshold=0), InvalidParameterError, r"threshold must be an integer >= 1; got 0"),
        (dict(threshold=True), InvalidParameterError, r"threshold must be an integer >= 1"),
        (dict(threshold=2.5), InvalidParameterError, r"got 2.5"),
        (dict(reward_source=3), InvalidParameterError,
         r"reward_source must be a callable \(users, arms, rng\); got 3"),
        (dict(laplace_epsilon=1.0), InvalidParameterError,
         r"reward_bounds must be a \(lo, hi\) pair with lo < hi when laplace_epsilon is set"),
        (dict(laplace_epsilon=0.0, reward_bounds=(0, 1)), InvalidParameterError,
         r"laplace_epsilon must be a finite number > 0; got 0.0"),
        (dict(laplace_epsilon=float("nan"), reward_bounds=(0, 1)), InvalidParameterError,
         r"laplace_epsilon must be a finite number > 0; got nan"),
        (dict(reward_bounds=(1, 0)), InvalidParameterError,
         r"reward_bounds must be a \(lo, hi\) pair of finite numbers with lo < hi; got \(1, 0\)"),
        (dict(reward_bounds=(0, float("inf"))), InvalidParameterError, r"with lo < hi"),
        (dict(reward_bounds="ab"), InvalidParameterError, r"pair of finite numbers; got 'ab'"),
        (dict(out_of_bounds="wrap"), InvalidParameterError,
         r"out_of_bounds must be one of 'clip', 'reject'; got 'wrap'"),
        (dict(n_users=0), InvalidParameterError, r"n_users must be an integer >= 1; got 0"),
        (dict(n_arms=-2), InvalidParameterError, r"n_arms must be an integer >= 1; got -2"),
        (dict(sampler="numpy", laplace_epsilon=1.0, reward_bounds=(0, 1)),
         InvalidParameterError, r"sampler must be a Sampler"),
    ],
)
def test_bad_construction_is_refused(kwargs, error, match):
    args = dict(threshold=2, reward_source=RecordingSource())
    args.update(kwargs)
    with pytest.raises(error, match=match):
        KAnonymousAggregator(args.pop("threshold"), args.pop("reward_source"), **args)


@pytest.mark.parametrize(
    "members, arms, error, match",
    [
        ([[0, 1, 2]], [0, 0], ShapeError, r"arms must have shape members.shape\[:-1\] = \(1,\)"),
        ([0, 1, 2], [0], ShapeError, r"members must be an integer array with at least 2 axes"),
        ([[0.0, 1.0]], [0], ShapeError, r"members must be an integer array.*float64"),
        ([[0, 1]], [[0.5]], ShapeError, r"arms must be an integer array"),
        ([[0, 6]], [0], InvalidParameterError,
         r"members must be a user index in \[0, 6\) or -1 for padding; got 6"),
        ([[0, -2]], [0], InvalidParameterError, r"members must be .*; got -2"),
        ([[0, 1]], [2], InvalidParameterError, r"arms must be an arm index in \[0, 2\); got 2"),
        ([[0, 1]], [-1], InvalidParameterError, r"arms must be .*; got -1"),
        ([[0, -1, -1]], [0], AnonymityError,
         r"anonymity check failed: group \(0,\) has 1 members, fewer than the threshold C=2; "
         r"nothing was released"),
        ([[[0, 1], [2, 3]], [[4, 5], [-1, -1]]], [[0, 1], [0, 1]], AnonymityError,
         r"group \(1, 1\) has 0 members"),
        ([[0, 1], [1, 2]], [0, 0], AnonymityError,
         r"overlap check failed: user 1 appears more than once in release \(\)"),
        ([[0, 0, 1]], [0], AnonymityError, r"overlap check failed: user 0"),
        ([[[0, 1]], [[3, 3]]], [[0], [0]], AnonymityError, r"user 3 .* in release \(1,\)"),
    ],
)
def test_bad_requests_are_refused_and_change_nothing(members, arms, error, match):
    agg = _agg()
    ledger = Ledger("user", epsilon=1.0)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(error, match=match):
        agg.aggregate(members, arms, rng, ledger=ledger)
    assert agg._source.calls == 0 and rng.bit_generator.state == state
    assert ledger.summary()["not_dp_releases"] == [] and ledger.summary()["releases"] == 0


@pytest.mark.parametrize(
    "source, error, match",
    [
        (lambda u, a, r: np.zeros(u.size + 1), ShapeError,
         r"reward_source must return one reward per requested user, shape \(2,\); got shape"),
        (lambda u, a, r: np.full(u.shape, np.nan), InvalidParameterError,
         r"reward_source output must be finite rewards"),
    ],
)
def test_bad_reward_sources_are_refused(source, error, match):
    with pytest.raises(error, match=match):
        KAnonymousAggregator(2, source).aggregate([[0, 1]], [0], np.random.default_rng(0))


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda agg: elicit_feedback(agg, [[0, 1]], np.random.default_rng(0)), ShapeError,
         r"assignment must be a 1-D array \(N,\) of arms; got shape \(1, 2\)"),
        (lambda agg: elicit_feedback(agg, [0, 2], np.random.default_rng(0)),
         InvalidParameterError, r"assignment must be an arm index in \[0, 2\) or -1"),
        (lambda agg: elicit_feedback(agg, [0.0, 1.0], np.random.default_rng(0)), ShapeError,
         r"assignment must be an integer array"),
        (lambda agg: elicit_feedback(agg, [0] * 7, np.random.default_rng(0)),
         InvalidParameterError, r"members must be a user index in \[0, 6\)"),
        (lambda agg: elicit_feedback(agg, [0, 0, 0], 42), InvalidParameterError,
         r"rng must be a numpy.random.Generator"),
        (lambda agg: elicit_feedback("agg", [0, 0, 0], np.random.default_rng(0)),
         InvalidParameterError, r"aggregator must be a KAnonymousAggregator"),
    ],
)
def test_bad_elicitation_input_is_refused(call, error, match):
    agg = _agg()
    with pytest.raises(error, match=match):
        call(agg)
    assert agg._source.calls == 0


def test_rounds_without_groups_release_and_cost_nothing():
    source = RecordingSource()
    agg = KAnonymousAggregator(1, source, laplace_epsilon=1.0, reward_bounds=(0, 1))
    ledger = Ledger("user", epsilon=1.0)
    out = agg.aggregate(np.zeros((3, 0, 2), dtype=int), np.zeros((3, 0), dtype=int),
                        np.random.default_rng(0), ledger=ledger)
    assert out.shape == (3, 0) and source.calls == 0 and ledger.spent()[0] == 0.0


def test_an_aggregator_tied_to_play_releases_each_played_round_once_and_a_failure_keeps_them():
    def source(users, arms, rng):
        return np.ones(users.size)

    agg = KAnonymousAggregator(2, source, n_users=4, n_arms=2, require_play=True)
    rng, groups = np.random.default_rng(0), pack_groups([[0, 1], [2, 3]])
    agg.grant(np.array([[0, 0, 1, 1]]), np.array([2]))
    with pytest.raises(AnonymityError, match="play check failed: 3 round"):
        agg.aggregate(np.tile(groups, (3, 1, 1)), np.array([[0, 1]] * 3), rng)
    assert agg.unreleased_rounds == 2  # a refused request consumes nothing
    np.testing.assert_array_equal(
        agg.aggregate(np.tile(groups, (2, 1, 1)), np.array([[0, 1]] * 2), rng), 2.0)
    assert agg.unreleased_rounds == 0
    with pytest.raises(InvalidParameterError, match="grant"):
        KAnonymousAggregator(2, source).grant(np.zeros((1, 4), int), np.array([1]))
    with pytest.raises(ShapeError, match=r"assignments must be \(P, N\) and rounds \(P,\)"):
        agg.grant(np.zeros((2, 4), int), np.array([1]))
