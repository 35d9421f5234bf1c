"""Study specifications: grid expansion, seeds, and a table of bad input."""
import pytest

from privbandit.errors import ConfigError
from privbandit.studies import parse_study

from . import toy_algorithm  # noqa: F401  (registers "toy")

GOOD = """
name = "s"
horizon = 50
seeds = 2
[[algorithm]]
name = "toy-plain"
[[algorithm]]
name = "toy"
[algorithm.grid]
epsilon = [0.5, 2]
calibration = ["tight", "paper"]
"""


def test_grid_expands_to_product_times_seeds():
    spec = parse_study(GOOD)
    runs = spec.runs()
    assert len(runs) == 2 + 2 * 2 * 2
    assert len({r.run_id for r in runs}) == len(runs)
    # a run's seed depends on its index alone: same index, same key component
    toy = [r for r in runs if r.algorithm == "toy" and r.cell["epsilon"] == 2]
    assert {r.seed_index for r in toy} == {0, 1}


def test_run_ids_are_stable_across_loads():
    ids = [r.run_id for r in parse_study(GOOD).runs()]
    assert ids == [r.run_id for r in parse_study(GOOD).runs()]


BAD = [
    ("horizon = [", "not valid TOML"),
    ("horizon = 10\n[[algorithm]]\nname = 'nope'", "algorithm must be one of"),
    ("horizon = 10\n[[algorithm]]\nname = 'toy'\n[algorithm.grid]\nepsilon = [1, 0]",
     "epsilon must be a finite number > 0; got 0"),
    ("horizon = 10\n[[algorithm]]\nname = 'toy'\n[algorithm.grid]\nepsilon = [-1]",
     "got -1"),
    ("horizon = 10\n[[algorithm]]\nname = 'toy'\n[algorithm.grid]\nepsilon = [1]\ndelta = [1.5]",
     "unknown key 'delta' in [algorithm.grid] of toy; allowed: calibration, epsilon, "),
    ("horizon = 10\n[[algorithm]]\nname = 'cdp-fclub-dc'\n[algorithm.grid]\nepsilon = [1]\n"
     "delta = [1.5]", "algorithm[0].delta must be a finite number in (0, 1); got 1.5"),
    ("horizon = 10\n[[algorithm]]\nname = 'toy'\n[algorithm.grid]\nepsilon = [1]\n"
     "calibration = ['loose']", "calibration must be one of ['tight', 'paper']; got 'loose'"),
    ("horizon = 10\n[[algorithm]]\nname = 'toy'", "epsilon must be set in [algorithm.params] or"),
    ("horizon = 10\n[[algorithm]]\nname = 'toy-plain'\n[algorithm.params]\nepsilon = 1",
     "unknown key 'epsilon' in [algorithm.params] of toy-plain"),
    ("horizon = 0\n[[algorithm]]\nname = 'toy-plain'", "horizon must be an integer >= 1; got 0"),
    ("horizon = 10\nseeds = 0\n[[algorithm]]\nname = 'toy-plain'", "seeds must be an integer >= 1"),
    ("horizon = 10\nhorizn = 3\n[[algorithm]]\nname = 'toy-plain'",
     "unknown key 'horizn' in the study's top level; did you mean 'horizon'?"),
    ("horizon = 10", "at least one [[algorithm]] table"),
    ("name = 'a b'\nhorizon = 10\n[[algorithm]]\nname = 'toy-plain'", "name must be"),
]


@pytest.mark.parametrize("text, message", BAD)
def test_bad_study_is_a_config_error_naming_key_and_value(text, message):
    with pytest.raises(ConfigError) as info:
        parse_study(text)
    assert message in str(info.value)


def test_the_example_studies_load_and_name_registered_entries():
    """Study files shipped in examples/ (quoted by the docs) stay valid."""
    from pathlib import Path

    from privbandit.studies.spec import load_study

    root = Path(__file__).resolve().parents[3] / "examples"
    files = sorted(root.glob("*.toml"))
    assert files
    for path in files:
        spec = load_study(path)
        assert spec.runs(), path.name
