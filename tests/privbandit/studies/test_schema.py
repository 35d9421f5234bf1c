"""The declarative study schema: unknown keys, bad values, shared environment, presets."""
import inspect

import pytest

from privbandit.errors import ConfigError
from privbandit.registry import AlgorithmEntry, algorithms, get_algorithm
from privbandit.schema import REQUIRED, Param, check_table, fill
from privbandit.studies import parse_study
from privbandit.studies.command import _load

FEDMAB = """
horizon = 100
seeds = 1
[environment]
{env}
[[algorithm]]
name = "cdp-mab"
[algorithm.grid]
epsilon = [1]
"""


def _error(text):
    with pytest.raises(ConfigError) as info:
        parse_study(text)
    return str(info.value)


def test_an_unknown_environment_key_is_named_with_a_suggestion():
    message = _error(FEDMAB.format(env="usres = 6"))
    assert message.startswith("unknown key 'usres' in [environment]; did you mean 'users'? "
                              "allowed: arms, heterogeneous, users")


@pytest.mark.parametrize("table, line, message", [
    ("params", "alpah = 1.0", "unknown key 'alpah' in [algorithm.params] of "
                              "cdp-fclub-dc-paper; did you mean 'alpha'? allowed: alpha, "
                              "alpha2, "),
    ("grid", "calibraton = ['paper']", "unknown key 'calibraton' in [algorithm.grid] of "
                                       "cdp-fclub-dc-paper; did you mean 'calibration'?"),
    ("params", "alpha = 'big'", "algorithm[0].alpha must be a finite number > 0; got 'big'"),
    ("params", "detection = 'noisy'",
     "algorithm[0].detection must be one of ['private', 'noise-aware', 'raw']"),
    ("params", "upload_threshold = 1.0", "upload_threshold must be a finite number > 1; got 1.0"),
    ("grid", "delta = [0.1, 1]", "algorithm[0].delta must be a finite number in (0, 1); got 1"),
    ("grid", "epsilon = [inf]", "algorithm[0].epsilon must be a finite number > 0; got inf"),
])
def test_params_and_grid_are_checked_against_the_declarations(table, line, message):
    text = (f"horizon = 10\n[[algorithm]]\nname = 'cdp-fclub-dc-paper'\n[algorithm.{table}]\n"
            f"{line}\n"
            + ("[algorithm.grid]\nepsilon = [1]\n" if table == "params" else
               "" if "epsilon" in line else "epsilon = [1]\n"))
    assert message in _error(text)


def test_bad_environment_values_name_the_key_and_what_is_allowed():
    assert "environment.users must be an integer >= 1; got 0" in _error(
        FEDMAB.format(env="users = 0"))
    assert "environment.heterogeneous must be true or false; got 1" in _error(
        FEDMAB.format(env="heterogeneous = 1"))


def test_the_environment_is_shared_and_each_algorithm_gets_its_keys_filled():
    spec = parse_study("""
horizon = 100
seeds = 1
[environment]
users = 6
[[algorithm]]
name = "cdp-mab"
[algorithm.grid]
epsilon = [1]
[[algorithm]]
name = "ddp-mab"
[algorithm.params]
graph = "star"
[algorithm.grid]
epsilon = [1]
[[algorithm]]
name = "hdp-mab"
[algorithm.params]
components = 2
[algorithm.grid]
epsilon = [1]
""")
    envs = {run.algorithm: run.config()["environment"] for run in spec.runs()}
    assert all(env == {"users": 6, "arms": 100, "heterogeneous": False}
               for env in envs.values())
    assert [run.config().get("graph") for run in spec.runs()] == [None, "star", None]
    # a key no algorithm of the study reads is refused, naming the closest one
    assert "unknown key 'usres' in [environment]; did you mean 'users'?" in _error(
        FEDMAB.format(env="usres = 6"))


MIXED = """
horizon = 10
seeds = 1
[environment]
{env}
[[algorithm]]
name = "fclub-dc"
[[algorithm]]
name = "fedc3ucb-h"
"""


def test_a_key_one_family_of_a_mixed_study_would_ignore_is_refused():
    # both families read the world's sizes: each run gets them
    spec = parse_study(MIXED.format(env="users = 12\ndim = 6\nitems = 8\nclusters = 3"))
    for run in spec.runs():
        env = run.config()["environment"]
        assert (env["users"], env["dim"], env["items"], env["clusters"]) == (12, 6, 8, 3)
    # the servers are FCLUB's, the list length the cascade's: each would reach one family
    assert ("[environment] key 'servers' would be ignored by algorithm 'fedc3ucb-h'"
            in _error(MIXED.format(env="servers = 2")))
    assert ("[environment] key 'list_len' would be ignored by algorithm 'fclub-dc'"
            in _error(MIXED.format(env="list_len = 2")))
    # a key the world setting does not read is ignored too: refused
    assert "key 'list_len' would be ignored by algorithm 'fclub-dc'" in _error(
        "horizon = 10\n[environment]\nlist_len = 3\n[[algorithm]]\nname = 'fclub-dc'\n")


@pytest.mark.parametrize("old, new", [("agents", "users"), ("n_users", "users"),
                                      ("n_items", "items"), ("n_clusters", "clusters")])
def test_an_old_spelling_names_the_new_one(old, new):
    assert (f"'{old}' in [environment] is an old spelling: write '{new}'"
            in _error(MIXED.format(env=f"{old} = 6")))


def test_every_declared_parameter_reaches_the_run_with_its_default():
    spec = parse_study(FEDMAB.format(env=""))
    config = spec.runs()[0].config()
    assert config == {"epsilon": 1, "sampler": "grid", "participation": 1.0, "rounds": None,
                      "server_cost": 25.0, "horizon": 100, "environment": config["environment"]}


PRESET = """
horizon = 10
[[algorithm]]
name = "cdp-fclub-dc-paper"
{preset}
[algorithm.params]
{params}
[algorithm.grid]
epsilon = [1]
{grid}
"""


def _private_config(preset="", params="", grid=""):
    text = PRESET.format(preset=preset, params=params, grid=grid)
    return parse_study(text).runs()[0].config()


def test_privacy_defaults_are_a_deployments_and_the_paper_lives_in_a_preset():
    plain = _private_config()
    assert (plain["delta"], plain["calibration"], plain["sampler"]) == (1e-5, "tight", "grid")
    paper = _private_config(preset='preset = "paper"')
    assert (paper["delta"], paper["calibration"], paper["sampler"]) == (0.1, "paper", "grid")
    assert paper["alpha"] == plain["alpha"] == 1.5  # what the preset leaves alone: the defaults


def test_explicit_params_and_grid_override_the_preset():
    config = _private_config(preset='preset = "paper"', params="delta = 0.01",
                             grid='calibration = ["tight"]')
    assert (config["delta"], config["calibration"]) == (0.01, "tight")


def test_an_unknown_preset_lists_the_presets():
    assert ("algorithm[0].preset must be one of ['paper'] (cdp-fclub-dc-paper's presets); got "
            "'papr'") in (
        _error(PRESET.format(preset='preset = "papr"', params="", grid="")))
    text = "horizon = 10\n[[algorithm]]\nname = 'homo'\npreset = 'paper'"
    assert "homo has no presets" in _error(text)
    text = "horizon = 10\n[[algorithm]]\nname = 'fclub'\npreset = 'paper'"
    assert "one of ['public-code'] (fclub's presets); got 'paper'" in _error(text)


def test_an_unknown_key_of_an_algorithm_table_is_named():
    text = "horizon = 10\n[[algorithm]]\nname = 'fclub'\nparmas = {}"
    assert "unknown key 'parmas' in [[algorithm]] #0; did you mean 'params'?" in _error(text)


def test_a_preset_is_checked_when_the_entry_is_declared():
    with pytest.raises(ConfigError, match="unknown key 'delt' in preset 'paper' of x"):
        AlgorithmEntry("x", lambda config, streams: None, private=True, needs_delta=True,
                       presets={"paper": {"delt": 0.1}})
    with pytest.raises(ConfigError, match=r"paper.*delta must be a finite number in \(0, 1\)"):
        AlgorithmEntry("x", lambda config, streams: None, private=True, needs_delta=True,
                       presets={"paper": {"delta": 2.0}})


def test_overrides_apply_to_the_validated_spec(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(FEDMAB.format(env="users = 6"))
    spec = _load(path, 7, 55)
    assert (spec.base_seed, spec.horizon) == (7, 55)
    assert _load(path, None, None) == parse_study(path.read_text())
    with pytest.raises(ConfigError, match="horizon must be an integer >= 1; got 0"):
        _load(path, None, 0)


def test_param_checks():
    p = Param("beta", (float, str), "oful", "radius", choices=("oful",), range="(0, inf)")
    assert p.check(0.3, "x") == 0.3 and p.check("oful", "x") == "oful"
    for bad in ("ofu", 0, -1.0, True, [1]):
        with pytest.raises(ConfigError, match="x.beta must be a finite number > 0 or one of"):
            p.check(bad, "x")
    assert fill({}, (p, Param("epsilon", float, REQUIRED))) == {"beta": "oful"}
    with pytest.raises(ConfigError, match="an interval"):
        Param("bad", float, 1.0, range="0..1")
    with pytest.raises(ConfigError, match=r"unknown key 'betta' in \[t\]; did you mean 'beta'"):
        check_table("[t]", {"betta": 1}, (p,))


# -- declared defaults agree with the code they configure --------------------------------
def _signature_defaults(func):
    return {name: p.default for name, p in inspect.signature(func).parameters.items()
            if p.default is not inspect.Parameter.empty}


def _check_defaults(entry_name, func, skip=()):
    code = _signature_defaults(func)
    for p in get_algorithm(entry_name).params:
        if p.name in code and p.name not in skip:
            assert p.default == code[p.name], (entry_name, p.name, p.default, code[p.name])


def test_declared_defaults_match_the_constructors():
    from privbandit.cascade.algorithm import FederatedCascadeUCB, IndependentCascadeUCB
    from privbandit.cascade.private import CDPFedC3UCBH
    from privbandit.fclub.config import FclubConfig
    from privbandit.fclub.privacy import CdpPlan
    from privbandit.fclub.released import ReleasedPlan
    from privbandit.policies import CLUB, SCLUB, LinTS, LinUCB
    from privbandit.private import GuardPlan

    for name, cls in (("linucb", LinUCB), ("lints", LinTS), ("club", CLUB), ("sclub", SCLUB),
                      ("club-per-server", CLUB),
                      ("sclub-per-server", SCLUB)):
        _check_defaults(name, cls)
    for name, cls, own in (("vfucb", LinUCB, "beta"), ("partial-linucb", LinUCB, "beta"),
                           ("vfts", LinTS, "v"), ("partial-lints", LinTS, "v")):
        _check_defaults(name, cls, skip=(own,))  # seed 003's radius 0.5, posterior scale 0.01
    for name in ("fclub", "fclub-dc", "homo", "cdp-fclub-dc"):
        _check_defaults(name, FclubConfig)
    # the entry's default builds the released class; the paper preset's keys go to CdpPlan
    _check_defaults("cdp-fclub-dc", ReleasedPlan, skip=("sampler",))
    _check_defaults("cdp-fclub-dc", CdpPlan, skip=("sampler", "mechanism", "schedule"))
    for name in ("fedc3ucb-h", "forcecomm", "noauxiliary", "fedlinucb"):
        _check_defaults(name, FederatedCascadeUCB)
    _check_defaults("fedind", IndependentCascadeUCB)
    _check_defaults("cdp-fedc3ucb-h", CDPFedC3UCBH, skip=("sampler",))
    _check_defaults("cdp-fedc3ucb-h+", GuardPlan, skip=("sampler",))
    _check_defaults("cdp-fclub-dc+", GuardPlan, skip=("sampler", "resolution"))
    from privbandit.fclub.guarded import RESOLUTION  # its own, measured on real data

    assert get_algorithm("cdp-fclub-dc+").defaults["resolution"] == RESOLUTION == 0.15
    _check_defaults("cdp-fclub-dc+", FclubConfig)
    _check_defaults("cdp-fedc3ucb-h+", IndependentCascadeUCB)
    from privbandit.clustering import SplitMergeClustering
    from privbandit.fclub.sets import SetFederatedClub

    for cls in (FclubConfig, SplitMergeClustering, SetFederatedClub):
        _check_defaults("fclub-dc-sets", cls)
    _check_defaults("oracle-clusters", LinUCB)


def test_every_entry_declares_and_lists_its_keys(capsys):
    from privbandit.cli import main

    for name, entry in algorithms().items():
        if not getattr(entry.build, "func", entry.build).__module__.startswith("privbandit."):
            continue  # the tests' own entries
        assert entry.environment, name
        assert entry.private == ("epsilon" in {p.name for p in entry.params}), name
    assert main(["study", "algorithms", "cdp-fclub-dc-paper"]) == 0
    out = capsys.readouterr().out
    assert "delta: a finite number in (0, 1); default 1e-05" in out
    assert "preset 'paper': delta = 0.1, calibration = 'paper'" in out
    assert "servers: an integer >= 1; default 5" in out


def test_the_retired_spelling_of_the_paper_path_is_refused_by_name():
    """cdp-fclub-dc's act_on and its preset 'paper' became the entry cdp-fclub-dc-paper."""
    text = ("horizon = 10\n[[algorithm]]\nname = 'cdp-fclub-dc'\n{}\n"
            "[algorithm.grid]\nepsilon = [1]\n")
    message = _error(text.format("[algorithm.params]\nact_on = 'raw'"))
    assert "act_on" in message and "'cdp-fclub-dc-paper'" in message
    message = _error(text.format("preset = 'paper'"))
    assert "paper" in message and "'cdp-fclub-dc-paper'" in message
