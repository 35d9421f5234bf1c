"""CDP-FedC3UCB-H: ledgers, privatized uploads only, noise-aware widths, noise bounds."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.auditing.end_to_end import differing_releases
from privbandit.auditing.target import AuditTarget
from privbandit.cascade import TreeNoiseBounds, cdp_fedc3ucb_h
from privbandit.cascade.study import world_keywords
from privbandit.envs import seed001_environment
from privbandit.errors import NormBoundError
from privbandit.mechanisms.samplers import FAST
from privbandit.mechanisms.tree import TreePrivatizer
from privbandit.registry import get_algorithm

HORIZON = 400


def _manual_run(small_env, epsilon, seed=0, **settings):
    """Play HORIZON rounds by hand; return the policy and each agent's raw (Gram, moment)."""
    env = seed001_environment(np.random.default_rng(seed), **world_keywords(small_env))
    policy = cdp_fedc3ucb_h(env.dim, env.n_users, env.n_items, env.list_len, HORIZON,
                            epsilon=epsilon, delta=1e-6, **settings)
    env.reset(np.random.default_rng(seed + 1))
    rng = np.random.default_rng(seed + 2)
    raw = np.zeros((env.n_users, env.dim + 1, env.dim + 1))
    for t in range(HORIZON):
        _, user, items = env.observe(t)
        action = policy.select(items, user, t, rng)
        out = env.act(t, action)
        policy.update(items, user, action, out.feedback, t)
        m = min(out.feedback + 1, env.list_len)
        z = np.zeros((m, env.dim + 1))
        z[:, :-1] = items[action[:m]]
        if out.feedback < env.list_len:
            z[-1, -1] = 1.0
        raw[user] += z.T @ z
    return policy, raw


def test_every_agent_has_a_ledger_charged_once_with_its_tree(small_env):
    policy, _ = _manual_run(small_env, epsilon=4.0)
    ledgers = policy.ledgers()
    assert len(ledgers) == policy.n_users
    for ledger, tree in zip(ledgers, policy.trees, strict=True):
        assert ledger.events == (tree.event,)
        spent, _ = ledger.spent()
        assert spent <= 4.0 * (1 + 1e-9) and spent > 3.9  # tight calibration uses the budget
    assert policy.trees[0].l2_sensitivity == pytest.approx(math.sqrt(2) * (3 + 1))


def test_server_holds_only_privatized_uploads(small_env):
    policy, raw = _manual_run(small_env, epsilon=1.0)
    d = policy.dim
    uploaded = policy.server.count > 0
    assert uploaded.sum() >= 3
    for agent in np.flatnonzero(uploaded):
        np.testing.assert_array_equal(policy.server.gram[agent], policy._uploaded[agent, :d, :d])
        np.testing.assert_array_equal(policy.server.moment[agent], policy._uploaded[agent, :d, d])
        noise = policy.server.gram[agent] - raw[agent, :d, :d]
        if policy.buffers.count[agent] == 0:
            assert np.abs(noise).max() > 1.0  # sigma is in the hundreds at epsilon = 1
    # T_u comes from the privatized trace, kept within [1, K] items per arrival
    assert (policy.server.count[uploaded] >= 1).all()
    assert (policy.server.count <= policy.list_len * policy.arrivals).all()


def test_width_accounts_for_the_noise_and_shrinks_with_epsilon(small_env):
    tight, _ = _manual_run(small_env, epsilon=1.0)
    loose, _ = _manual_run(small_env, epsilon=16.0)
    talked = (tight.server.count > 0) & (loose.server.count > 0)
    assert talked.any()
    assert (tight.widths_beta[talked] > tight.beta).all()
    assert tight.widths_beta[talked].min() > loose.widths_beta[talked].max()


@settings(max_examples=10)
@given(seed=st.integers(0, 2**32 - 1), steps=st.integers(1, 64))
def test_noise_bounds_cover_the_tree_noise(seed, steps):
    dim = 4
    rng = np.random.default_rng(seed)
    tree = TreePrivatizer((dim + 1, dim + 1), 64, sigma=1.0, symmetric=True, sampler=FAST)
    bounds = TreeNoiseBounds(1.0, dim, releases=64, level=0.1)
    for _ in range(steps):
        prefix = tree.add(np.zeros((dim + 1, dim + 1)), rng)
    nodes = TreePrivatizer.nodes_in_prefix(steps)
    assert np.linalg.norm(prefix, 2) <= bounds.rho(nodes)
    assert np.linalg.norm(prefix[:dim, dim]) <= bounds.gamma(nodes)


def test_examined_item_over_the_norm_bound_is_refused(small_env):
    env = seed001_environment(np.random.default_rng(0), **world_keywords(small_env))
    policy = cdp_fedc3ucb_h(env.dim, env.n_users, env.n_items, env.list_len, HORIZON,
                            epsilon=1.0, delta=1e-6)
    items = np.full((env.n_items, env.dim), 1.0)  # norm sqrt(5) > item_bound = 1
    action = policy.select(items, 0, 0, np.random.default_rng(1))
    with pytest.raises(NormBoundError, match="item_bound=1"):
        policy.update(items, 0, action, 0, 0)
    assert policy.trees[0].steps == 0  # nothing was released


def test_run_result_reports_ledgers_and_the_guarantee(small_env):
    config = {"horizon": 300, "environment": small_env, "epsilon": 2.0, "delta": 1e-6,
              "calibration": "paper"}
    result = get_algorithm("cdp-fedc3ucb-h").run(config, np.random.SeedSequence(3))
    assert len(result.ledgers) == small_env["users"]
    assert "one user-round's click feedback" in result.privacy.unit and result.privacy.is_dp
    assert result.privacy.details["calibration"] == "paper" and result.privacy.details["sigma"] > 0


@pytest.mark.parametrize("mechanism", ["honaker", "mf"])
def test_any_continual_mechanism_by_name(mechanism):
    from privbandit.runtime import run

    policy = cdp_fedc3ucb_h(4, 6, 12, 2, 300, epsilon=2.0, delta=1e-5, mechanism=mechanism)
    env = seed001_environment(np.random.default_rng(1), n_users=6, n_clusters=2, dim=4,
                              n_items=12, list_len=2)
    result = run(policy, env, 300, 2)
    assert result.privacy.details["mechanism"] == mechanism
    assert all(led["epsilon_spent"] <= 2.0 * (1 + 1e-9) for led in result.ledgers)


def test_paper_calibration_needs_the_tree():
    from privbandit.errors import ConfigError

    with pytest.raises(ConfigError, match="calibration"):
        cdp_fedc3ucb_h(4, 6, 12, 2, 300, epsilon=2.0, delta=1e-5, mechanism="mf",
                       calibration="paper")


@pytest.mark.parametrize("kind", ["fixed", "doubling"])
def test_a_batched_schedule_puts_each_record_in_one_release(small_env, kind):
    policy, raw = _manual_run(small_env, epsilon=4.0, schedule=kind, batch=16)
    schedule = policy.schedule
    assert policy.trees[0].horizon == schedule.releases < HORIZON
    for agent, tree in enumerate(policy.trees):
        assert tree.steps <= schedule.releases
        waiting = len(policy._waiting[agent])  # records after the last release round
        assert policy._in_prefix[agent] + waiting == policy.arrivals[agent]
    assert policy.trees[0].records_per_step == schedule.longest_batch()
    for ledger, tree in zip(policy.ledgers(), policy.trees, strict=True):
        assert ledger.events == (tree.event,)
        assert ledger.spent()[0] == pytest.approx(4.0, rel=1e-6)
    details = policy.privacy().details
    assert (details["schedule"], details["batch"]) == (kind, 16)


def test_paper_calibration_needs_every_round_releases():
    from privbandit.errors import ConfigError

    with pytest.raises(ConfigError, match="schedule 'fixed'"):
        cdp_fedc3ucb_h(4, 6, 12, 2, 300, epsilon=2.0, delta=1e-5, schedule="fixed",
                       calibration="paper")


def test_the_audit_finds_the_click_moves_the_gram_block_but_never_position_one():
    # docs/cascade.md "What is public in a cascade": the list is public, what is examined
    # below position 1 depends on the click, so the Gram block is not public and stays
    # noised; the flip adds or removes examined positions 2..K only
    config = dict(AuditTarget.of("cdp-fedc3ucb-h", epsilon=1.0).config)
    list_len = config["environment"]["list_len"]
    traces = []
    for at in (38, 72, 207, 409):
        moved = differing_releases("cdp-fedc3ucb-h", config, 3, at)
        assert len(moved) == 1  # the flipped round's release only
        first, second = (np.asarray(e.value) for e in moved[0])
        change = second - first
        assert np.abs(change[-1]).max() > 0  # the click itself always moves
        block = change[:-1, :-1]
        trace = float(np.trace(block))
        assert trace == pytest.approx(round(trace), abs=1e-9)  # unit-norm items
        assert abs(round(trace)) <= list_len - 1  # position 1 is examined in both neighbours
        assert np.linalg.matrix_rank(block, tol=1e-9) == abs(round(trace))
        traces.append(round(trace))
    assert traces == [1, -3, 2, 0]  # a click on the last position moves no Gram entry


@pytest.mark.parametrize("epsilon", [1.0, 8.0])
def test_the_audit_world_splits_the_servers_graph(epsilon):
    from privbandit.runtime import play_setup

    built, streams = AuditTarget.of("cdp-fedc3ucb-h", epsilon=epsilon, world=1).setup(3)
    play_setup(built, streams, 3)
    assert built.protocol.server.deleted > 0
    assert len(set(built.protocol.server.labels().tolist())) > 1
