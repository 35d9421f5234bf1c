"""The break-even epsilon: where a private algorithm is first significantly below its
baseline, and the paired table the study prints and writes."""
import csv
import math
import textwrap

import pytest

from privbandit.cli import main
from privbandit.errors import ConfigError
from privbandit.studies.spec import parse_study
from privbandit.studies.summary import break_even_epsilon, format_epsilon

from . import toy_algorithm  # noqa: F401

STUDY = """
    name = "be"
    horizon = 40
    seeds = 3
    max_points = 5
    [[algorithm]]
    name = "toy-plain"
    label = "alone"
    [algorithm.params]
    scale = {scale}
    [[algorithm]]
    name = "toy-plain"
    label = "federated"
    [algorithm.params]
    scale = 0.5
    [[algorithm]]
    name = "toy"
    label = "private"
    [algorithm.grid]
    epsilon = [1, 4, 16]
    [break_even]
    private = "private"
    baseline = "alone"
    federated = "federated"
"""


def _study(tmp_path, scale):
    path = tmp_path / "be.toml"
    path.write_text(textwrap.dedent(STUDY.format(scale=scale)))
    return path


@pytest.mark.parametrize("scale, expected", [(1.6, 4.0), (1.0, math.inf), (9.0, 1.0)])
def test_study_prints_the_break_even_last_and_writes_it_to_the_summary(
        tmp_path, capsys, scale, expected):
    # toy regret scales with 1 + 1/epsilon, the baseline's with `scale`, same draws: the
    # paired differences share one sign, so a lower mean is a significant one
    out = tmp_path / "out"
    assert main(["study", "run", str(_study(tmp_path, scale)), "--out", str(out),
                 "--workers", "1", "--no-plots"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1] == f"break_even_epsilon: {format_epsilon(expected)}"
    assert printed[-1] in ("break_even_epsilon: 4", "break_even_epsilon: none",
                           "break_even_epsilon: 1")
    rows = list(csv.DictReader((out / "summary.csv").open()))
    marked = {r["break_even_epsilon"] for r in rows if r["label"] == "private"}
    assert marked == {format_epsilon(expected)}
    assert {r["break_even_epsilon"] for r in rows if r["label"] == "alone"} == {""}
    # `study plot` reads the study's choice back from the results folder
    assert main(["study", "plot", str(out)]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == printed[-1]


def test_the_paired_table_is_printed_and_written_per_epsilon(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["study", "run", str(_study(tmp_path, 1.6)), "--out", str(out),
                 "--workers", "1", "--no-plots"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    rows = [r for r in csv.DictReader((out / "summary.csv").open()) if r["label"] == "private"]
    # alone = 1.6 c, federated = 0.5 c, private = (1 + 1/eps) c: FGR = (0.6 - 1/eps) / 1.1
    for row, eps, verdict in zip(rows, (1, 4, 16), ("above", "below", "below"), strict=True):
        assert row["pairs"] == "3" and row["significant"] == verdict
        for key in ("ratio_to_baseline", "ratio_low", "ratio_high"):  # proportional: exact
            assert float(row[key]) == pytest.approx((1 + 1 / eps) / 1.6, rel=1e-5)
        assert float(row["diff_low"]) <= float(row["diff_mean"]) <= float(row["diff_high"])
        fgr = (0.6 - 1 / eps) / 1.1
        for key in ("fgr", "fgr_low", "fgr_high"):
            assert float(row[key]) == pytest.approx(fgr, rel=1e-5)
        line = next(x for x in printed if x.split()[:2] == [f"{eps:g}", "3"])
        assert line.split()[-1] == verdict and f"{fgr:+.0%}" in line
    assert any("FGR = (alone - private) / (alone - federated)" in x for x in printed)


def test_fgr_against_an_oracle_is_printed_and_written_beside_fgr_against_the_federated(
        tmp_path, capsys):
    # the oracle here is the federated label's twin: its FGR equals the federated one's
    text = textwrap.dedent(STUDY.format(scale=1.6)).replace(
        '[[algorithm]]\nname = "toy"\n', '[[algorithm]]\nname = "toy-plain"\nlabel = "oracle"\n'
        '[algorithm.params]\nscale = 0.5\n[[algorithm]]\nname = "toy"\n') + 'oracle = "oracle"\n'
    path = tmp_path / "be.toml"
    path.write_text(text)
    out = tmp_path / "out"
    assert main(["study", "run", str(path), "--out", str(out), "--workers", "1",
                 "--no-plots"]) == 0
    printed = capsys.readouterr().out
    rows = [r for r in csv.DictReader((out / "summary.csv").open()) if r["label"] == "private"]
    for row in rows:
        for key in ("fgr", "fgr_low", "fgr_high"):
            assert float(row[key.replace("fgr", "fgr_oracle")]) == pytest.approx(float(row[key]))
    assert "FGR vs oracle = (alone - private) / (alone - oracle)" in printed


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
    ('private = "private"\nbaseline = "alone"\nfederated = "FCLUB"',
     r"break_even.federated must be the label of an algorithm without a grid other than "
     r"the baseline: \['federated'\]; got 'FCLUB'"),
    ('private = "private"\nbaseline = "alone"\nfederated = "alone"', "break_even.federated"),
    ('private = "private"\nbaseline = "alone"\nfederated = "private"', "break_even.federated"),
])
def test_bad_break_even_tables_are_named(table, message):
    text = textwrap.dedent(STUDY.format(scale=1.0)).split("[break_even]")[0]
    with pytest.raises(ConfigError, match=message):
        parse_study(text + "[break_even]\n" + table)


def test_the_federated_reference_is_optional():
    text = textwrap.dedent(STUDY.format(scale=1.0)).replace('federated = "federated"\n', "")
    assert parse_study(text).break_even == ("private", "alone", None, None)
    assert parse_study(textwrap.dedent(STUDY.format(scale=1.0))).break_even.federated == (
        "federated")


def test_break_even_needs_one_baseline_row_and_the_paired_columns():
    rows = [{"label": "a", "epsilon": 1, "significant": "below"},
            {"label": "a", "epsilon": 2, "significant": "no"},
            {"label": "b", "epsilon": ""},
            {"label": "b", "epsilon": ""}]
    with pytest.raises(ConfigError, match="baseline"):
        break_even_epsilon(rows, "a", "b")
    assert break_even_epsilon(rows[:3], "a", "b") == 1.0
    assert break_even_epsilon(rows[1:3], "a", "b") == math.inf
    with pytest.raises(ConfigError, match="paired columns"):
        break_even_epsilon([{"label": "a", "epsilon": 1}, rows[2]], "a", "b")


def test_study_plot_reads_a_results_folder_written_before_the_federated_key(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["study", "run", str(_study(tmp_path, 1.6)), "--out", str(out),
                 "--workers", "1", "--no-plots"]) == 0
    (out / "study.json").write_text('{"name": "be", "break_even": ["private", "alone"]}')
    capsys.readouterr()
    assert main(["study", "plot", str(out)]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-1] == "break_even_epsilon: 4"
    assert not any(line.startswith("FGR") for line in printed)
