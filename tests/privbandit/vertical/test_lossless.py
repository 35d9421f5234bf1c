"""Lossless: VFUCB decides exactly as LinUCB; VFTS samples scores with LinTS's law."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from privbandit.envs.vertical import VerticalSplit, seed003_environment
from privbandit.policies import LinTS, LinUCB, Policy
from privbandit.runtime import run as run_centralized
from privbandit.runtime import seed_streams
from privbandit.vertical import VerticalFederation
from privbandit.vertical.ties import TieTolerant

from .runs import mask_stream, run_vertical

WIDTHS = (4, 3, 3)


class Recorder(Policy):
    """Delegates to a policy and records its actions and (for LinUCB) its scores."""

    def __init__(self, inner):
        self.inner, self.dim, self.name = inner, inner.dim, inner.name
        self.actions, self.scores = [], []

    def select(self, items, user, t, rng):
        if hasattr(self.inner, "scores"):
            self.scores.append(self.inner.scores(items, user))
        return self.inner.select(items, user, t, rng)

    def update(self, items, user, action, feedback, t):
        self.actions.append(action)
        self.inner.update(items, user, action, feedback, t)


def _pair(dim, widths, horizon, seed, make, seal=False):
    world = seed003_environment(dim, 8, rng=np.random.default_rng(seed + 1))
    central, vertical = Recorder(make(dim)), Recorder(make(dim))
    a = run_centralized(central, world, horizon, seed)
    b = run_vertical(vertical, VerticalSplit(world, widths), horizon, seed, seal_traffic=seal)
    return a, b, central, vertical


@pytest.mark.parametrize("beta", [0.5, "oful"])
def test_vfucb_takes_linucbs_action_every_round_and_regrets_agree(beta):
    a, b, central, vertical = _pair(
        10, WIDTHS, 250, 11, lambda d: TieTolerant(LinUCB(d, beta=beta)), seal=True
    )
    assert central.actions == vertical.actions
    np.testing.assert_allclose(np.array(vertical.scores), np.array(central.scores),
                               rtol=0, atol=1e-10)
    np.testing.assert_allclose(b.regret, a.regret, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.reward, a.reward, rtol=0, atol=1e-12)
    assert b.algorithm == "vfucb" and a.algorithm == "linucb"


@settings(max_examples=12)
@given(
    st.lists(st.integers(1, 4), min_size=2, max_size=5), st.integers(0, 2**31 - 1)
)
def test_vfucb_is_lossless_for_any_partition_and_seed(widths, seed):
    dim = sum(widths)
    _, _, central, vertical = _pair(
        dim, widths, 40, seed, lambda d: TieTolerant(LinUCB(d, beta=0.5))
    )
    assert central.actions == vertical.actions
    np.testing.assert_allclose(np.array(vertical.scores), np.array(central.scores),
                               rtol=0, atol=1e-10)


def _shared_history(v: float, rounds: int = 40):
    """A LinTS and a VFTS federation fed the same history; returns them and round `rounds`."""
    world = seed003_environment(10, 8, rng=np.random.default_rng(3))
    split = VerticalSplit(world, WIDTHS)
    central = LinTS(10, v=v)
    federation = VerticalFederation(split.split, LinTS(10, v=v), rng=mask_stream(5),
                                    seal_traffic=False)
    streams = seed_streams(5)
    split.reset(streams["rounds"])
    for t in range(rounds):
        rnd = split.observe(t)
        pending = federation.decide(rnd, streams["policy"])
        reward = split.act(t, pending.action).feedback
        central.update(np.concatenate(rnd.items, axis=1), 0, pending.action, reward, t)
        federation.commit(pending, reward)
    rnd = split.observe(rounds)
    masked = federation.decide(rnd, streams["policy"]).masked
    return central, np.concatenate(rnd.items, axis=1), federation.policy, masked


def _score_samples(policy, items, draws, seed):
    rng = np.random.default_rng(seed)
    return np.stack([items @ policy.sample_theta(0, rng) for _ in range(draws)])


def _min_ks_pvalue(a, b):
    return min(stats.ks_2samp(a[:, k], b[:, k]).pvalue for k in range(a.shape[1]))


def test_vfts_sampled_scores_have_lints_distribution():
    central, items, vertical, masked = _shared_history(v=0.3)
    plain = _score_samples(central, items, 3000, 1)
    hidden = _score_samples(vertical, masked, 3000, 2)
    # Bonferroni over the K = 8 arms at a 1e-3 family-wise level
    assert _min_ks_pvalue(plain, hidden) > 1e-3 / 8
    # the means agree to rounding: theta_tilde = Q theta_hat (Theorem A.1)
    np.testing.assert_allclose(masked @ vertical.models.theta[0],
                               items @ central.models.theta[0], atol=1e-12)
    # which item wins has the same law too (chi-square on the winners' counts)
    table = np.stack([np.bincount(s.argmax(axis=1), minlength=8) for s in (plain, hidden)])
    table = table[:, table.sum(axis=0) > 0]
    assert stats.chi2_contingency(table).pvalue > 1e-3


def test_the_two_sample_check_tells_a_wrong_posterior_apart():
    # positive control: same history, posterior scale 30% off -> rejected
    central, items, _, _ = _shared_history(v=0.3)
    wrong, _, _, _ = _shared_history(v=0.39)
    plain = _score_samples(central, items, 3000, 1)
    off = _score_samples(wrong, items, 3000, 2)
    assert _min_ks_pvalue(plain, off) < 1e-6


def test_vfts_regret_agrees_with_lints_within_the_seed_spread():
    totals = {"lints": [], "vfts": []}
    for seed in range(6):
        a, b, _, _ = _pair(10, WIDTHS, 300, seed, lambda d: LinTS(d, v=0.1))
        totals[a.algorithm].append(a.total_regret)
        totals[b.algorithm].append(b.total_regret)
    x, y = np.array(totals["lints"]), np.array(totals["vfts"])
    spread = np.sqrt(x.var(ddof=1) / x.size + y.var(ddof=1) / y.size)
    assert abs(x.mean() - y.mean()) < 3 * spread
