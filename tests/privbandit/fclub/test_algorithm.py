"""FederatedClub: the sharing protocols' invariants, phases, privacy bookkeeping, seeds."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.envs import seed000_environment
from privbandit.fclub import FclubConfig, FederatedClub, PerServer, make_policy
from privbandit.fclub.audit import phase_starts
from privbandit.fclub.models import logdet
from privbandit.policies.linear import LinUCB
from privbandit.registry import get_algorithm

SMALL = {"dim": 3, "users": 6, "clusters": 2, "servers": 2, "items": 4}


def play(policy, horizon, seed=0, env_seed=1, hook=None):
    env = seed000_environment(np.random.default_rng(env_seed), n_users=6, n_clusters=2, dim=3,
                              n_items=4)
    env.reset(np.random.default_rng(env_seed + 1))
    rng = np.random.default_rng(seed)
    for t in range(horizon):
        _, user, items = env.observe(t)
        a = policy.select(items, user, t, rng)
        policy.update(items, user, a, env.act(t, a).feedback, t)
        if hook is not None:
            hook(policy, t)
    return policy


def check_delayed_invariants(policy, t):
    sync, u_ln, d_ln = policy.sync, math.log(policy.config.upload_threshold), math.log(
        policy.config.download_threshold)
    for k, group in enumerate(sync.groups):
        for c in group:
            # the global statistics are every copy plus its download buffer (Algorithms 3-4)
            assert np.allclose(sync.S_g[k], sync.S[c] + sync.s_down[c], atol=1e-8)
            assert np.allclose(sync.u_g[k], sync.u[c] + sync.u_down[c], atol=1e-8)
            assert sync.n_g[k] == sync.n_sync[c] + sync.n_down[c]
            # no download is pending after a round
            assert sync.logdet_g[k] - sync.logdet_s[c] < d_ln + 1e-9
            # the model is the synchronized copy, plus the own raw buffer when acting on raw
            # data (non-private, or the paper's act_on="raw"); else the copy alone
            raw = policy.plan is None or policy.plan.act_on == "raw"
            own, own_b, own_n = sync.raw_buffer(c) if raw else (0.0, 0.0, 0)
            assert np.allclose(sync.models.inv[c] @ (sync.S[c] + own), np.eye(3), atol=1e-6)
            assert np.allclose(sync.models.b[c], sync.u[c] + own_b, atol=1e-8)
            assert sync.models.count[c] == sync.n_sync[c] + own_n
            if policy.plan is None:  # the raw trigger: no upload is pending either
                assert sync.models.logdet[c] - sync.logdet_s[c] < u_ln + 1e-9
            else:
                assert sync.logdet_s[c] == pytest.approx(logdet(sync.S[c]), abs=1e-6)


@settings(max_examples=8)
@given(st.integers(0, 10**6), st.floats(1.001, 1.5),
       st.sampled_from(["fclub-dc", "released", "raw"]))
def test_delayed_protocol_invariants(seed, threshold, kind):
    kw = {"upload_threshold": threshold, "download_threshold": threshold}
    if kind != "fclub-dc":
        policy = make_policy("cdp-fclub-dc", dim=3, n_users=6, n_servers=2, horizon=150,
                             epsilon=50.0, delta=0.1, act_on=kind, **kw)
    else:
        policy = make_policy("fclub-dc", dim=3, n_users=6, n_servers=2, **kw)
    play(policy, 150, seed=seed, hook=check_delayed_invariants)


def test_instant_sharing_gives_one_model_per_global_cluster():
    policy = play(make_policy("fclub", dim=3, n_users=6, n_servers=2), 200)
    rows = policy.sync.row_of
    labels = policy.cluster_labels()
    for user in range(6):
        for other in range(6):
            same = labels[user] == labels[other]
            local_u, local_o = policy._local_of_user[user], policy._local_of_user[other]
            assert (rows[local_u] == rows[local_o]) == same
    log = policy.comm
    assert log.by_direction("upload")[0] >= 200  # every observation is uploaded
    assert set(range(200)) <= set(log.round_indices().tolist())


def test_phases_start_at_powers_of_two_minus_two():
    seen = []

    class Recorder:
        def upload(self, *args):
            pass

        def download(self, *args):
            pass

        def phase_upload(self, t, server, users, merge, gram, b, count):
            seen.append(t)

    policy = make_policy("fclub-dc", dim=3, n_users=6, n_servers=2, observer=Recorder())
    play(policy, 100)
    assert sorted(set(seen)) == phase_starts(100) == [0, 2, 6, 14, 30, 62]


def test_homo_keeps_every_user_in_one_cluster():
    for name in ("homo", "homo-dc"):
        policy = play(make_policy(name, dim=3, n_users=6, n_servers=2), 300)
        assert np.all(policy.cluster_labels() == 0)
        assert len(policy.local_layout()) == 2  # one local cluster per server


def test_delayed_sharing_communicates_less_than_instant():
    instant = play(make_policy("fclub", dim=3, n_users=6, n_servers=2), 1000)
    delayed = play(make_policy("fclub-dc", dim=3, n_users=6, n_servers=2,
                               upload_threshold=1.1, download_threshold=1.1), 1000)
    assert delayed.comm.messages < instant.comm.messages / 3
    assert delayed.comm.rounds < instant.comm.rounds / 3


class _Uploads:
    """Observer keeping every asynchronous upload (round, Gram, moment vector)."""

    def __init__(self):
        self.sent = []

    def upload(self, t, server, gram, b):
        self.sent.append((t, gram.copy(), b.copy()))

    def download(self, *args):
        pass

    def phase_upload(self, *args):
        pass


class _FixedTree:
    """Stands in for a tree privatizer: returns preset noisy prefixes."""

    def __init__(self, prefixes):
        self.prefixes = iter(prefixes)

    def add(self, increment, rng):
        return next(self.prefixes)


def test_private_trigger_reads_only_privatized_statistics():
    # Two runs whose raw observations differ but whose noisy prefixes are identical make
    # identical upload decisions and send identical contents: timing is post-processing.
    rng = np.random.default_rng(0)
    prefixes = np.cumsum(rng.normal(0, 3, (40, 4, 4)), axis=0)
    prefixes = (prefixes + prefixes.transpose(0, 2, 1)) / 2
    runs = []
    for data_seed in (1, 2):
        recorder = _Uploads()
        policy = make_policy("cdp-fclub-dc", dim=3, n_users=2, n_servers=1, horizon=40,
                             epsilon=1.0, delta=0.1, observer=recorder,
                             upload_threshold=1.001, download_threshold=1.001)
        data = np.random.default_rng(data_seed)
        for t in range(40):
            items = data.standard_normal((3, 3))
            items /= np.linalg.norm(items, axis=1, keepdims=True)
            a = policy.select(items, 0, t, rng)
            if t == 0:
                policy.sync.trees = [_FixedTree(prefixes)]
            policy.update(items, 0, a, float(data.random()), t)
        runs.append(recorder.sent)
    assert len(runs[0]) > 0
    assert [t for t, _, _ in runs[0]] == [t for t, _, _ in runs[1]]
    for (_, g0, b0), (_, g1, b1) in zip(runs[0], runs[1], strict=True):
        assert np.array_equal(g0, g1) and np.array_equal(b0, b1)


def test_private_run_books_one_ledger_per_tree_within_budget():
    policy = make_policy("cdp-fclub-dc", dim=3, n_users=6, n_servers=2, horizon=200,
                         epsilon=2.0, delta=0.1)
    trees = []
    play(policy, 200, hook=lambda p, t: trees.append(id(p.sync.trees)))
    ledgers = policy.ledgers()
    renewals = len(set(trees))
    assert len(ledgers) >= renewals  # one ledger per tree of every renewal
    for ledger in ledgers:
        spent, delta = ledger.spent()
        assert spent <= 2.0 * (1 + 1e-9) and delta == 0.1
        assert ledger.unit.startswith("server ")
    statement = policy.privacy().summary
    assert "(2, 0.1, L=2, m=" in statement and "-CDP" in statement
    raw = make_policy("cdp-fclub-dc", dim=3, n_users=6, n_servers=2, horizon=50, epsilon=2.0,
                      delta=0.1, detection="raw")
    assert raw.privacy().summary.startswith("NOT (2, 0.1") and not raw.privacy().is_dp


def test_same_seed_same_run_and_different_seed_differs():
    # flaw 5 of the public code: its seeds came from the clock
    config = {"horizon": 300, "environment": SMALL, "epsilon": 1.0, "delta": 0.1,
              "sampler": "grid"}
    seq = np.random.SeedSequence(7, spawn_key=(0,))
    a = get_algorithm("cdp-fclub-dc").run(config, seq)
    b = get_algorithm("cdp-fclub-dc").run(config, np.random.SeedSequence(7, spawn_key=(0,)))
    c = get_algorithm("cdp-fclub-dc").run(config, np.random.SeedSequence(7, spawn_key=(1,)))
    assert np.array_equal(a.regret, b.regret) and np.array_equal(a.reward, b.reward)
    assert a.comm == b.comm and a.ledgers == b.ledgers
    assert np.array_equal(a.comm_rounds, b.comm_rounds)
    assert not np.array_equal(a.regret, c.regret)


def test_per_server_baseline_splits_users():
    policy = PerServer(lambda n: LinUCB(3, n), n_users=6, n_servers=2)
    assert list(policy.server) == [0, 0, 0, 1, 1, 1]
    play(policy, 100)
    counts = [p.models.count.sum() for p in policy.policies]
    assert sum(counts) == 100 and min(counts) > 0
    assert policy.comm is None and policy.ledgers() == []


def test_config_is_frozen_and_reports_its_parameters():
    config = FclubConfig(3, 6, 2)
    with pytest.raises(AttributeError):
        config.alpha = 2.0  # type: ignore[misc]
    policy = FederatedClub(config)
    assert policy.params()["upload_threshold"] == 1.01
    assert policy.privacy().relation.value == "none"
