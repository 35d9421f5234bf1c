"""The baselines' registry entries and the environment factory they use."""
from __future__ import annotations

import numpy as np
import pytest

import privbandit.studies.baselines  # noqa: F401  (registers the entries)
from privbandit.envs import CascadeEnv, LinearUsersEnv
from privbandit.envs.factory import make_environment
from privbandit.errors import ConfigError
from privbandit.registry import get_algorithm

SEED = np.random.SeedSequence(2026, spawn_key=(1,))


@pytest.mark.parametrize("name", ["linucb", "linucb-shared", "lints", "club", "sclub"])
def test_entries_run_and_repeat(name):
    config = {"horizon": 150, "environment": {"dim": 4, "users": 6, "clusters": 2, "items": 5}}
    a = get_algorithm(name).run(config, SEED)
    b = get_algorithm(name).run(config, SEED)
    assert a.algorithm == name and a.horizon == 150
    assert np.array_equal(a.regret, b.regret)
    assert a.environment["name"] == "seed000"


def test_entry_passes_parameters_and_refuses_unknown_ones():
    config = {"horizon": 20, "environment": {"users": 4, "clusters": 2}, "beta": 0.2}
    assert get_algorithm("linucb").run(config, SEED).params["beta"] == 0.2
    with pytest.raises(ConfigError, match=r"unknown key 'betta' in \[algorithm.params\] of "
                                          r"linucb; did you mean 'beta'\?"):
        get_algorithm("linucb").run({**config, "betta": 1}, SEED)


def test_factory_settings_and_bad_keys():
    rng = np.random.default_rng(0)
    assert isinstance(make_environment({"setting": "seed001", "users": 10, "clusters": 2,
                                        "dim": 4, "items": 6, "list_len": 2}, rng), CascadeEnv)
    env = make_environment({"setting": "clustered", "reward": "gaussian", "gap": 0.3}, rng)
    assert isinstance(env, LinearUsersEnv) and env.reward_model == "gaussian"
    message = r"unknown key 'usres' in \[environment\]; did you mean 'users'\? allowed: "
    with pytest.raises(ConfigError, match=message):
        make_environment({"usres": 3}, rng)
    with pytest.raises(ConfigError, match="environment.setting must be one of"):
        make_environment({"setting": "movielens"}, rng)
    with pytest.raises(ConfigError, match="environment.path must be the path of a ratings file"):
        make_environment({"setting": "ratings"}, rng)


def test_a_direct_config_is_checked_like_a_studys():
    entry = get_algorithm("linucb")
    with pytest.raises(ConfigError, match=r"environment.list_len must be unset: linucb does "
                                          r"not read it with these settings"):
        entry.run({"horizon": 10, "environment": {"setting": "seed000", "list_len": 3}}, SEED)
    with pytest.raises(ConfigError, match="horizon must be an integer >= 1 in the run's config"):
        entry.run({"environment": {}}, SEED)
    private = get_algorithm("cdp-fclub-dc")
    with pytest.raises(ConfigError, match=r"values for the required keys \['epsilon'\]"):
        private.run({"horizon": 10}, SEED)
