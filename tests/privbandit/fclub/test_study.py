"""The FCLUB family in the study registry: entries, paired worlds, results, the default study."""
import numpy as np
import pytest

from privbandit.errors import ConfigError
from privbandit.fclub.study import ENTRIES
from privbandit.registry import algorithms, get_algorithm
from privbandit.studies.command import default_study_text
from privbandit.studies.spec import parse_study

NAMES = ("fclub", "fclub-dc", "cdp-fclub-dc", "cdp-fclub-dc+", "club-per-server",
         "sclub-per-server", "homo", "homo-dc", "fclub-dc-sets",
         "oracle-clusters")
ENV = {"dim": 3, "users": 6, "clusters": 2, "servers": 2, "items": 4}


def config(name, horizon=120):
    out = {"horizon": horizon, "environment": dict(ENV), **get_algorithm(name).defaults}
    if get_algorithm(name).private:
        out.update(epsilon=2.0)
    return out


def test_every_name_is_registered_with_its_privacy_flags():
    registered = algorithms()
    for name in NAMES:
        entry = registered[name]
        assert entry in ENTRIES
        assert entry.private == entry.needs_delta == name.startswith("cdp-")
        assert entry.calibrations == (("tight", "paper") if name == "cdp-fclub-dc-paper"
                                      else ())
        assert entry.defaults.get("delta", 1e-5) == 1e-5  # deployment default
    assert registered["fclub-dc"].defaults["upload_threshold"] == 1.01


@pytest.mark.parametrize("name", NAMES)
def test_each_algorithm_runs_and_reports(name):
    seed = np.random.SeedSequence(3, spawn_key=(0,))
    result = get_algorithm(name).run(config(name), seed)
    assert result.horizon == 120 and result.algorithm == name
    assert np.all(result.regret >= -1e-12)
    if name == "cdp-fclub-dc+":
        assert result.privacy.summary.startswith("(2, 1e-05)-DP for one user-round's reward")
    elif name == "cdp-fclub-dc":  # acts on released statistics: interactive, reward-only
        assert result.privacy.holds_interactively and result.privacy.epsilon == 2.0
        assert result.privacy.details["L"] == 2 and result.privacy.details["m"] == 2
        assert result.ledgers and all(led["epsilon_spent"] <= 2.0 + 1e-9
                                      for led in result.ledgers)
    else:
        assert result.privacy.summary.startswith("none") and not result.privacy.is_dp
    if name == "oracle-clusters":  # told the true clusters: a ceiling, and it says so
        assert result.params["oracle"] is True and result.cluster_mixing[-1] == 0.0
        assert get_algorithm(name).description.startswith("ORACLE, reads the world's hidden")
    if name in ("fclub", "fclub-dc", "cdp-fclub-dc", "homo", "homo-dc", "fclub-dc-sets"):
        assert result.comm["messages"] > 0
        assert result.comm_rounds is not None and result.comm_rounds.size == result.comm["rounds"]
        record = result.to_dict(max_points=10)
        assert record["comm_rounds_curve"][-1] == result.comm["rounds"]


def test_runs_sharing_a_seed_share_the_world():
    from privbandit.runtime import seed_streams

    seed = np.random.SeedSequence(5, spawn_key=(2,))
    a = get_algorithm("fclub-dc").run(config("fclub-dc", 200), seed)
    b = get_algorithm("cdp-fclub-dc").run(config("cdp-fclub-dc", 200), seed)
    assert a.environment == b.environment and not np.array_equal(a.regret, b.regret)
    worlds = [get_algorithm(name).setup(config(name, 200), seed).env
              for name in ("fclub-dc", "cdp-fclub-dc")]
    views = []
    for env in worlds:  # replay each world's round stream: same users, items, expectations
        env.reset(seed_streams(seed)["rounds"])
        rows = []
        for t in range(50):
            rnd = env.observe(t)
            rows.append((rnd.user, *rnd.items.ravel(), env.act(t, 0).expected))
        views.append(np.array(rows))
    assert np.array_equal(views[0], views[1])


@pytest.mark.parametrize("name", ["cdp-fclub-dc", "cdp-fclub-dc+"])
def test_the_merge_resolution_reaches_the_entry_that_tests_merges(name):
    from privbandit.fclub.guarded import RESOLUTION

    built = get_algorithm(name).setup(config(name, 50), 0)
    default = RESOLUTION if name == "cdp-fclub-dc+" else 0.2
    assert built.protocol.plan.resolution == default
    built = get_algorithm(name).setup({**config(name, 50), "resolution": 0.7}, 0)
    assert built.protocol.plan.resolution == 0.7


def test_the_oracle_needs_a_world_with_hidden_clusters(monkeypatch):
    from privbandit.envs.linear import LinearUsersEnv

    monkeypatch.setattr(LinearUsersEnv, "true_clusters", lambda self: None)
    with pytest.raises(ConfigError, match="a world with hidden clusters for the oracle"):
        get_algorithm("oracle-clusters").run(config("oracle-clusters"), 0)


def test_bad_environment_and_parameters_are_named():
    seed = np.random.SeedSequence(0)
    bad_env = {**config("fclub"), "environment": {**ENV, "colour": 1}}
    with pytest.raises(ConfigError, match=r"unknown key 'colour' in \[environment\]"):
        get_algorithm("fclub").run(bad_env, seed)
    with pytest.raises(ConfigError, match=r"horizon must be an integer >= 1 in the run's config"):
        get_algorithm("fclub").run({"environment": ENV}, seed)
    with pytest.raises(ConfigError, match=r"n_servers must be at most n_users = 6"):
        get_algorithm("fclub-dc").run({**config("fclub-dc"),
                                       "environment": {**ENV, "servers": 7}}, seed)


def test_default_tradeoff_study_compares_released_plain_and_alone():
    spec = parse_study(default_study_text(), "default_tradeoff.toml")
    runs = spec.runs()
    assert {run.algorithm for run in runs} == {"club-per-server", "fclub-dc", "cdp-fclub-dc"}
    private = [run for run in runs if run.algorithm.startswith("cdp-")]
    assert {run.cell["epsilon"] for run in private} == {1, 4, 16, 64}  # starts at 1
    assert {run.config()["delta"] for run in private} == {1e-5}
    # the deployment's settings: the float-safe sampler, reward-only releases
    assert {run.config()["sampler"] for run in private} == {"grid"}
    assert all("act_on" not in run.config() for run in private)  # released statistics only
    assert spec.break_even == ("CDP-FCLUB-DC", "alone", "FCLUB-DC")
    assert len(spec.seeds) == 5 and len(runs) == 5 * (2 + 4) and spec.horizon == 65536


def test_linucb_is_the_per_user_baseline_of_federated_studies():
    """One LinUCB entry: it runs in a study with servers; its second name is refused."""
    spec = parse_study(
        'name = "x"\nhorizon = 50\nseeds = 1\n[environment]\nusers = 6\nclusters = 2\n'
        'dim = 3\nitems = 4\nservers = 2\n[[algorithm]]\nname = "linucb"\n'
        '[[algorithm]]\nname = "fclub"\n')
    assert [a.name for a in spec.algorithms] == ["linucb", "fclub"]
    with pytest.raises(ConfigError, match="must be 'linucb': 'linucb-per-user' .* retired"):
        get_algorithm("linucb-per-user")
    with pytest.raises(ConfigError, match="retired .*use name = 'linucb'"):
        parse_study('name = "x"\nhorizon = 50\n[[algorithm]]\nname = "linucb-per-user"\n')
