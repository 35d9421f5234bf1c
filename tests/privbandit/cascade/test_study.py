"""Registered study entries: names, flags, one run each, one world per seed."""
import numpy as np
import pytest

from privbandit.cascade.study import build_environment
from privbandit.registry import REGISTRATION_MODULES, get_algorithm
from privbandit.result import RunResult
from privbandit.runtime import seed_streams

NAMES = ["fedc3ucb-h", "forcecomm", "noauxiliary", "fedlinucb", "fedind", "cdp-fedc3ucb-h"]


def test_cascade_family_is_a_registration_module():
    assert "privbandit.cascade.study" in REGISTRATION_MODULES


@pytest.mark.parametrize("name", NAMES)
def test_entry_runs_and_returns_a_complete_result(name, small_env):
    entry = get_algorithm(name)
    config = {"horizon": 300, "environment": small_env, "cluster_points": 10}
    if entry.private:
        assert entry.needs_delta and entry.calibrations == ("tight", "paper")
        config.update(epsilon=8.0, delta=1e-6, calibration="tight")
    result = entry.run(config, np.random.SeedSequence(5))
    assert isinstance(result, RunResult) and result.algorithm == name
    assert result.horizon == 300 and np.isfinite(result.regret).all()
    assert result.cluster_error is not None and result.cluster_error.size == 10
    assert result.comm_rounds is not None and result.comm_rounds.size == result.comm["rounds"]
    assert result.environment["name"] == "seed001"
    record = result.to_dict(max_points=20)
    assert "comm_rounds_curve" in record and record["comm_rounds_curve"][-1] == result.comm[
        "rounds"]


def test_one_seed_gives_one_world_for_every_algorithm(small_env):
    """Every entry builds its world with build_environment and plays the seed's round stream."""
    worlds = []
    for _ in range(2):
        seed = np.random.SeedSequence(9)
        env = build_environment(small_env, seed_streams(seed)["world"])
        env.reset(seed_streams(seed)["rounds"])
        rounds = [env.observe(t) for t in range(50)]
        worlds.append((env._theta, [r.user for r in rounds], np.stack([r.items for r in rounds])))
    np.testing.assert_array_equal(worlds[0][0], worlds[1][0])
    assert worlds[0][1] == worlds[1][1]
    np.testing.assert_array_equal(worlds[0][2], worlds[1][2])
    other = build_environment(small_env, seed_streams(np.random.SeedSequence(10))["world"])
    assert not np.array_equal(other._theta, worlds[0][0])


def test_an_old_environment_spelling_names_the_new_one(small_env):
    message = r"'n_users' in \[environment\] is an old spelling: write 'users'"
    with pytest.raises(ValueError, match=message):
        get_algorithm("fedind").run({"horizon": 10, "environment": {"n_users": 3}},
                                    np.random.SeedSequence(0))


def test_prefetch_gives_the_same_run(small_env):
    config = {"horizon": 400, "environment": small_env, "cluster_points": 10}
    plain = get_algorithm("fedc3ucb-h").run(config, np.random.SeedSequence(3))
    piped = get_algorithm("fedc3ucb-h").run({**config, "prefetch": True},
                                            np.random.SeedSequence(3))
    np.testing.assert_array_equal(plain.regret, piped.regret)
    np.testing.assert_array_equal(plain.comm_rounds, piped.comm_rounds)
