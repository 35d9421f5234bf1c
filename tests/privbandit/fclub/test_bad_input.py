"""Bad input to the FCLUB family raises named errors: parameter, value, what is allowed."""
import numpy as np
import pytest

from privbandit.accounting.errors import InvalidParameterError
from privbandit.errors import ConfigError, ShapeError
from privbandit.fclub import CdpPlan, FclubConfig, FederatedClub, make_policy, server_of_users

CONFIG_CASES = [
    ({"upload_threshold": 1.0}, r"upload_threshold must be a finite number > 1 .*got 1\.0"),
    ({"upload_threshold": 0.5}, r"upload_threshold must be .*> 1.*got 0\.5"),
    ({"download_threshold": 1}, r"download_threshold must be a finite number > 1 .*got 1$"),
    ({"download_threshold": float("inf")}, r"download_threshold must be .*got inf"),
    ({"upload_threshold": True}, r"upload_threshold must be .*got True"),
    ({"alpha": 0.0}, r"alpha must be a finite number > 0; got 0\.0"),
    ({"alpha": -1.5}, r"alpha must be a finite number > 0; got -1\.5"),
    ({"alpha2": 0}, r"alpha2 must be a finite number > 0; got 0"),
    ({"n_servers": 21}, r"n_servers must be at most n_users = 20 .*got 21"),
    ({"n_servers": 0}, r"n_servers must be an integer >= 1; got 0"),
    ({"sync": "eager"}, r"sync must be one of \('instant', 'delayed'\); got 'eager'"),
    ({"detect": "yes"}, r"detect must be True or False; got 'yes'"),
    ({"lam": 0.0}, r"lam must be a finite number > 0; got 0\.0"),
    ({"confidence": 1.0}, r"confidence must be a failure probability in \(0, 1\); got 1\.0"),
    ({"beta_scale": -1.0}, r"beta_scale must be a finite number >= 0; got -1\.0"),
]


@pytest.mark.parametrize(("kwargs", "message"), CONFIG_CASES)
def test_config_rejects(kwargs, message):
    settings = {"dim": 3, "n_users": 20, "n_servers": 5, **kwargs}
    with pytest.raises(InvalidParameterError, match=message):
        FclubConfig(**settings)


PLAN_CASES = [
    ({"epsilon": 0.0}, r"epsilon must be a finite number > 0; got 0\.0"),
    ({"epsilon": -1.0}, r"epsilon must be a finite number > 0; got -1\.0"),
    ({"epsilon": float("nan")}, r"epsilon must be a finite number > 0; got nan"),
    ({"delta": 0.0}, r"delta must be a number in \(0, 1\) \(Gaussian noise\); got 0\.0"),
    ({"delta": 1.0}, r"delta must be a number in \[0, 1\); got 1\.0"),
    ({"calibration": "loose"}, r"calibration must be one of \('tight', 'paper'\); got 'loose'"),
    ({"detection": "none"},
     r"detection must be one of \('private', 'noise-aware', 'raw'\); got 'none'"),
    ({"sampler": "numpy"}, r"sampler must be a Sampler, None or one of .*got 'numpy'"),
    ({"detection_share": 1.0}, r"detection_share must be a number in \(0, 1\); got 1\.0"),
    ({"detection_share": 0.0}, r"detection_share must be a finite number > 0; got 0\.0"),
    ({"failure": 1.5}, r"failure must be a probability in \(0, 1\); got 1\.5"),
    ({"horizon": 0}, r"horizon must be an integer >= 1; got 0"),
]


@pytest.mark.parametrize(("kwargs", "message"), PLAN_CASES)
def test_plan_rejects(kwargs, message):
    settings = {"epsilon": 1.0, "delta": 0.1, "horizon": 100, "dim": 3, "n_users": 6, **kwargs}
    with pytest.raises(InvalidParameterError, match=message):
        CdpPlan(**settings)


def test_more_servers_than_users_is_named():
    with pytest.raises(ConfigError, match=r"n_servers must be at most n_users = 3 .*got 4"):
        server_of_users(3, 4)
    with pytest.raises(ConfigError, match=r"n_servers must be at most n_users = 3"):
        make_policy("fclub-dc", dim=2, n_users=3, n_servers=4)


def test_factory_rejects_bad_names_and_missing_budget():
    with pytest.raises(ConfigError, match=r"name must be one of .*got 'fclub-x'"):
        make_policy("fclub-x", dim=2, n_users=4, n_servers=2)
    with pytest.raises(ConfigError, match=r"\(horizon, epsilon, delta\) must be all given"):
        make_policy("cdp-fclub-dc", dim=2, n_users=4, n_servers=2, horizon=10, epsilon=1.0)
    with pytest.raises(ConfigError, match=r"settings must be no privacy keys for 'fclub'"):
        make_policy("fclub", dim=2, n_users=4, n_servers=2, calibration="tight")
    with pytest.raises(ConfigError, match=r"settings must be .*got \['gamma'\]"):
        make_policy("fclub", dim=2, n_users=4, n_servers=2, gamma=1.0)


def test_private_algorithm_needs_delayed_sync_and_matching_sizes():
    plan = CdpPlan(1.0, 0.1, 50, 3, 6)
    with pytest.raises(ConfigError, match=r"sync must be 'delayed' for CDP-FCLUB-DC; got 'inst"):
        FederatedClub(FclubConfig(3, 6, 2, sync="instant"), privacy=plan)
    with pytest.raises(ConfigError, match=r"privacy must be a CdpPlan with the config's dim"):
        FederatedClub(FclubConfig(4, 6, 2), privacy=plan)


def test_round_inputs_are_checked():
    policy = make_policy("fclub-dc", dim=3, n_users=6, n_servers=2)
    rng = np.random.default_rng(0)
    items = np.eye(3)
    with pytest.raises(ConfigError, match=r"update must be select\(\.\.\.\) first"):
        policy.update(items, 0, 0, 1.0, 0)
    with pytest.raises(ConfigError, match=r"user must be an integer in \[0, 6\); got 6"):
        policy.select(items, 6, 0, rng)
    with pytest.raises(ShapeError, match=r"items must be a \(K, 3\) array"):
        policy.select(np.ones((2, 4)), 0, 0, rng)
