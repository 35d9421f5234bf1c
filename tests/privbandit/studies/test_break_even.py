"""The break-even epsilon: where a private algorithm first reaches its baseline."""
import csv
import math
import textwrap

import pytest

from privbandit.cli import main
from privbandit.errors import ConfigError
from privbandit.studies.spec import parse_study
from privbandit.studies.summary import break_even_epsilon

from . import toy_algorithm  # noqa: F401

STUDY = """
    name = "be"
    horizon = 40
    seeds = 2
    max_points = 5
    [[algorithm]]
    name = "toy-plain"
    label = "alone"
    [algorithm.params]
    scale = {scale}
    [[algorithm]]
    name = "toy"
    label = "private"
    [algorithm.grid]
    epsilon = [1, 4, 16]
    [break_even]
    private = "private"
    baseline = "alone"
"""


def _study(tmp_path, scale):
    path = tmp_path / "be.toml"
    path.write_text(textwrap.dedent(STUDY.format(scale=scale)))
    return path


@pytest.mark.parametrize("scale, expected", [(1.6, 4.0), (1.0, math.inf), (9.0, 1.0)])
def test_study_prints_the_break_even_last_and_writes_it_to_the_summary(
        tmp_path, capsys, scale, expected):
    # toy regret scales with 1 + 1/epsilon, the baseline's with `scale`, same draws
    out = tmp_path / "out"
    assert main(["study", "run", str(_study(tmp_path, scale)), "--out", str(out),
                 "--workers", "1", "--no-plots"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1] == f"break_even_epsilon: {expected:g}"
    rows = list(csv.DictReader((out / "summary.csv").open()))
    marked = {r["break_even_epsilon"] for r in rows if r["label"] == "private"}
    assert marked == {f"{expected:.6g}"}
    assert {r["break_even_epsilon"] for r in rows if r["label"] == "alone"} == {""}
    # `study plot` reads the study's choice back from the results folder
    assert main(["study", "plot", str(out)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == printed[-1]


def test_summary_columns_come_first_in_the_documented_order(tmp_path):
    out = tmp_path / "out"
    assert main(["study", "run", str(_study(tmp_path, 1.6)), "--out", str(out),
                 "--workers", "1", "--no-plots"]) == 0
    header = (out / "summary.csv").read_text().splitlines()[0].split(",")
    assert header[:7] == ["algorithm", "epsilon", "delta", "regret_mean", "regret_sd", "seeds",
                          "cluster_error"]
    epsilons = [r["epsilon"] for r in csv.DictReader((out / "summary.csv").open())
                if r["label"] == "private"]
    assert epsilons == ["1", "4", "16"]  # numeric order, not text order


@pytest.mark.parametrize("table, message", [
    ('private = "alone"\nbaseline = "alone"', "break_even.private"),
    ('private = "private"\nbaseline = "nobody"', "break_even.baseline"),
    ('private = "private"\nbaseline = "private"', "break_even.baseline"),
    ('private = "private"\nbaseline = "alone"\nbasline = "x"', "basline"),
])
def test_bad_break_even_tables_are_named(table, message):
    text = textwrap.dedent(STUDY.format(scale=1.0)).split("[break_even]")[0]
    with pytest.raises(ConfigError, match=message):
        parse_study(text + "[break_even]\n" + table)


def test_break_even_needs_one_baseline_row():
    rows = [{"label": "a", "epsilon": 1, "regret_mean": 1.0},
            {"label": "b", "epsilon": "", "regret_mean": 2.0},
            {"label": "b", "epsilon": "", "regret_mean": 3.0}]
    with pytest.raises(ConfigError, match="baseline"):
        break_even_epsilon(rows, "a", "b")
    assert break_even_epsilon(rows[:2], "a", "b") == 1.0
