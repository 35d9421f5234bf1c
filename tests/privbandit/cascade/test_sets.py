"""fedc3ucb-sets: agents alone until split/merge proves a set shares preferences; the oracle."""
import numpy as np
import pytest

from privbandit.cascade import fed_ind
from privbandit.cascade.ceiling import CascadeClusterOracle
from privbandit.cascade.sets import SetFederatedCascade, fedc3ucb_sets
from privbandit.cascade.study import world_keywords
from privbandit.clustering import SplitMergeClustering
from privbandit.envs import seed001_environment
from privbandit.errors import ConfigError
from privbandit.registry import get_algorithm
from privbandit.runtime import run

WORLD = {"users": 8, "clusters": 2, "dim": 4, "items": 20, "list_len": 3}


def _env(seed=3, world=WORLD):
    return seed001_environment(np.random.default_rng(seed), **world_keywords(world))


def _play(factory, horizon, seed=3, world=WORLD, **kw):
    env = _env(seed, world)
    policy = factory(env.dim, env.n_users, env.n_items, env.list_len, horizon, **kw)
    return policy, run(policy, env, horizon, seed), env


def test_finds_the_true_clusters_and_beats_going_alone():
    policy, result, env = _play(fedc3ucb_sets, 6000)
    _, alone, _ = _play(fed_ind, 6000)
    assert result.cluster_error[-1] == 0.0 and result.cluster_mixing[-1] == 0.0
    assert policy.sets.last is not None and np.unique(policy.sets.labels).size == 2
    assert result.regret.sum() < alone.regret.sum()
    comm = result.comm["messages_by_direction"]
    assert comm["upload"] > 0 and comm["download"] > 0


def test_an_agent_alone_plays_on_its_own_data_as_fedind_does():
    """Without the power to merge (a resolution nothing can prove) every agent stays alone:
    its decision model is the ridge model of its own examined items, as FedInd's."""
    never = SplitMergeClustering(4, resolution=1e-6)
    policy, result, _ = _play(SetFederatedCascade, 800, detection=never)
    alone, plain, _ = _play(fed_ind, 800)
    assert np.array_equal(policy.cluster_labels(), np.arange(8))
    assert result.comm["messages_by_direction"].get("download", 0) == 0
    own = np.linalg.inv(np.eye(4) + policy.server.gram + policy.buffers.gram)
    np.testing.assert_allclose(policy.inv, own, atol=1e-9)
    np.testing.assert_allclose(policy.inv, alone.inv, atol=1e-9)
    np.testing.assert_allclose(policy.theta, alone.theta, atol=1e-9)
    np.testing.assert_allclose(result.regret, plain.regret)


def test_a_merged_agent_recommends_from_its_cluster_and_its_own_buffer():
    policy, _, _ = _play(fedc3ucb_sets, 3000)
    members = policy.sets.members(0)
    assert members.size > 1
    gram = np.eye(4) + policy.server.gram[members].sum(axis=0)
    moment = policy.server.moment[members].sum(axis=0)
    decision = np.linalg.inv(gram + policy.buffers.gram[0])
    np.testing.assert_allclose(policy.inv[0], decision, atol=1e-9)
    np.testing.assert_allclose(policy.theta[0], decision @ (moment + policy.buffers.moment[0]),
                               atol=1e-9)


def test_same_seed_same_run_other_seed_other_run():
    _, a, _ = _play(fedc3ucb_sets, 1500)
    _, b, _ = _play(fedc3ucb_sets, 1500)
    _, c, _ = _play(fedc3ucb_sets, 1500, seed=4)
    np.testing.assert_array_equal(a.regret, b.regret)
    assert a.comm == b.comm and not np.array_equal(a.regret, c.regret)


def test_the_entry_takes_the_detection_keys_and_reports_them():
    config = {"horizon": 400, "environment": WORLD, "resolution": 0.5, "simulations": 8,
              "phase_growth": 1.5}
    result = get_algorithm("fedc3ucb-sets").run(config, np.random.SeedSequence(1))
    params = result.params
    assert (params["resolution"], params["simulations"], params["phase_growth"]) == (0.5, 8, 1.5)
    assert params["detection"] == "split-merge" and params["start"] == "alone"
    assert "alpha_d" not in params and result.privacy is None or not result.privacy.is_dp


@pytest.mark.parametrize("kwargs, match", [
    ({"alpha_d": 4.0}, "alpha_d must be not given"),
    ({"detection": SplitMergeClustering(3, resolution=0.3)}, "detection must be None or a "
     "SplitMergeClustering of dim 4"),
    ({"detection": SplitMergeClustering(4)}, "start must be 'together' unless"),
    ({"phase_growth": 1.0}, "growth must be a finite number > 1"),
])
def test_bad_settings_are_named(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        SetFederatedCascade(4, 8, 20, 3, 100, **kwargs)


def test_the_oracle_pools_each_true_cluster_and_says_it_is_one():
    env = _env()
    truth = env.true_clusters()
    oracle = CascadeClusterOracle(env.dim, truth, env.n_items, env.list_len, 2000)
    result = run(oracle, env, 2000, 3)
    _, sets, _ = _play(fedc3ucb_sets, 2000)
    assert result.cluster_error[-1] == 0.0 and oracle.params()["oracle"] is True
    assert result.comm["messages"] == 0 and oracle.params()["n_clusters"] == 2
    assert result.regret.sum() < sets.regret.sum()  # the ceiling
    mates = np.flatnonzero(truth == truth[0])
    items = np.random.default_rng(0).standard_normal((env.n_items, env.dim))
    items /= np.linalg.norm(items, axis=1, keepdims=True)
    lists = {tuple(oracle.select(items, int(u), 0, np.random.default_rng(0))) for u in mates}
    assert len(lists) == 1  # one model per true cluster
    with pytest.raises(ConfigError, match="clusters must be a non-empty 1-D array"):
        CascadeClusterOracle(4, np.zeros((2, 2)), 20, 3, 100)
