"""FedC3UCB-H and its baselines on a small world: triggers, communication, reproducibility."""
import math

import numpy as np
import pytest

from privbandit.cascade import (
    auxiliary_probability,
    fed_ind,
    fedc3ucb_h,
    force_comm,
    is_forced_arrival,
    no_auxiliary,
)
from privbandit.cascade.study import world_keywords
from privbandit.envs import seed001_environment
from privbandit.registry import get_algorithm
from privbandit.runtime import run

HORIZON = 1500


def _play(factory, small_env, seed=3, **kw):
    env = seed001_environment(np.random.default_rng(seed), **world_keywords(small_env))
    policy = factory(env.dim, env.n_users, env.n_items, env.list_len, HORIZON, **kw)
    result = run(policy, env, HORIZON, seed)
    return policy, result


def test_auxiliary_probability_is_3_log_t_over_t_capped_at_one():
    assert auxiliary_probability(1) == 0.0
    assert auxiliary_probability(2) == 1.0  # 3 ln 2 / 2 > 1
    assert auxiliary_probability(1000) == pytest.approx(3 * math.log(1000) / 1000)


def test_forced_arrivals_are_the_powers_of_two():
    forced = [n for n in range(1, 70) if is_forced_arrival(n)]
    assert forced == [1, 2, 4, 8, 16, 32, 64]


def test_forcecomm_communicates_at_every_power_of_two_arrival(small_env):
    policy, _ = _play(force_comm, small_env, alpha_c=50.0)  # det trigger out of reach
    forced = sum(int(np.log2(n)) + 1 for n in policy.arrivals if n > 0)
    assert policy.triggers == {"det": 0, "auxiliary": forced}
    assert policy.comm.rounds == forced


def test_noauxiliary_uses_only_the_det_trigger(small_env):
    policy, _ = _play(no_auxiliary, small_env)
    assert policy.triggers["auxiliary"] == 0 and policy.triggers["det"] == policy.comm.rounds > 0


def test_pt_auxiliary_adds_communication_over_noauxiliary(small_env):
    with_pt, _ = _play(fedc3ucb_h, small_env, alpha_c=50.0)
    without, _ = _play(no_auxiliary, small_env, alpha_c=50.0)
    assert with_pt.triggers["auxiliary"] > 0
    assert with_pt.comm.rounds > without.comm.rounds
    # expected auxiliary count sum_t p_t ~ 1.5 ln^2 T; allow generous spread
    expected = sum(auxiliary_probability(t) for t in range(1, HORIZON + 1))
    assert 0.4 * expected < with_pt.triggers["auxiliary"] < 1.6 * expected


def test_uploads_downloads_and_buffers_account_for_every_examined_item(small_env):
    env = seed001_environment(np.random.default_rng(4), **world_keywords(small_env))
    policy = fedc3ucb_h(env.dim, env.n_users, env.n_items, env.list_len, HORIZON)
    env.reset(np.random.default_rng(5))
    rng = np.random.default_rng(6)
    examined = 0
    adopted = 0
    for t in range(HORIZON):
        _, user, items = env.observe(t)
        action = policy.select(items, user, t, rng)
        out = env.act(t, action)
        before = policy.comm.rounds
        policy.update(items, user, action, out.feedback, t)
        examined += min(out.feedback + 1, env.list_len)
        if policy.comm.rounds > before:  # this agent just communicated
            gram, theta = policy.server.cluster_statistics(user)
            np.testing.assert_allclose(policy.inv[user] @ gram, np.eye(env.dim), atol=1e-8)
            np.testing.assert_allclose(policy.theta[user], theta, atol=1e-12)
            assert policy.buffers.count[user] == 0 and policy.buffers.gain[user] == 0.0
            adopted += 1
    assert adopted == policy.comm.rounds > 0
    assert policy.buffers.count.sum() + policy.server.count.sum() == examined
    summary = policy.comm.summary()
    assert summary["messages_by_direction"]["upload"] == policy.comm.rounds
    assert summary["messages_by_direction"]["download"] == policy.comm.rounds


def test_fedind_never_communicates_and_learns_every_round(small_env):
    policy, result = _play(fed_ind, small_env)
    assert policy.comm.rounds == 0 and result.comm["messages"] == 0
    assert np.abs(policy.theta).sum() > 0


def test_clustering_separates_the_two_clusters(small_env):
    policy, result = _play(fedc3ucb_h, small_env, seed=1, alpha_d=2.0)
    assert result.cluster_error is not None
    assert result.cluster_error[-1] == 0.0


@pytest.mark.parametrize("name", ["fedc3ucb-h", "fedind"])
def test_same_seed_same_run_bit_for_bit(name, small_env):
    config = {"horizon": 600, "environment": small_env}
    a = get_algorithm(name).run(config, np.random.SeedSequence(11))
    b = get_algorithm(name).run(config, np.random.SeedSequence(11))
    np.testing.assert_array_equal(a.regret, b.regret)
    np.testing.assert_array_equal(a.comm_rounds, b.comm_rounds)
    c = get_algorithm(name).run(config, np.random.SeedSequence(12))
    assert not np.array_equal(a.regret, c.regret)
