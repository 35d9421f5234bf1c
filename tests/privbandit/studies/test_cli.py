"""The study subcommands: outputs, exit statuses, one-line errors."""
import json
import textwrap

import pytest

from privbandit.cli import main

from . import toy_algorithm  # noqa: F401


@pytest.fixture
def study_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(textwrap.dedent("""
        name = "cli"
        horizon = 30
        seeds = 2
        max_points = 5
        [[algorithm]]
        name = "toy-plain"
        [[algorithm]]
        name = "toy"
        [algorithm.grid]
        epsilon = [1, 4]
        calibration = ["tight", "paper"]
    """))
    return path


def test_study_run_writes_summary_ledgers_and_plots(study_file, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["study", "run", str(study_file), "--out", str(out), "--workers", "1"]) == 0
    assert len(list((out / "runs").glob("*.json"))) == 10
    header = (out / "summary.csv").read_text().splitlines()[0]
    assert header.startswith("algorithm,epsilon,delta,regret_mean,regret_sd,seeds,cluster_error")
    assert len(json.loads((out / "ledgers.json").read_text())) == 10
    for name in ("regret_curves", "regret_vs_epsilon", "communication", "ledgers"):
        assert (out / f"{name}.png").stat().st_size > 1000
    assert "summary:" in capsys.readouterr().out
    assert main(["study", "plot", str(out)]) == 0


def test_account_prints_each_private_cell_once(study_file, capsys):
    assert main(["account", str(study_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("toy [") for line in lines) == 4
    assert any("toy-user: spent epsilon=" in line for line in lines)


@pytest.mark.parametrize("content, message", [
    ("horizon = [", "is not valid TOML"),
    ("horizon = 5\n[[algorithm]]\nname = 'nope'", "algorithm must be one of"),
    ("horizon = 5\n[[algorithm]]\nname = 'toy'\n[algorithm.grid]\nepsilon = [0]", "got 0"),
])
def test_bad_study_exits_2_with_one_line_on_stderr(tmp_path, capsys, content, message):
    path = tmp_path / "bad.toml"
    path.write_text(content)
    assert main(["study", "run", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_missing_file_and_unwritable_folder_exit_2(study_file, tmp_path, capsys):
    assert main(["study", "run", str(tmp_path / "absent.toml")]) == 2
    assert "cannot be read" in capsys.readouterr().err
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    assert main(["study", "run", str(study_file), "--out", str(blocker / "x")]) == 2
    assert "is not writable" in capsys.readouterr().err


def test_unreachable_scheduler_exits_2(study_file, tmp_path, capsys):
    code = main(["study", "run", str(study_file), "--out", str(tmp_path / "o"),
                 "--scheduler", "tcp://127.0.0.1:9"])
    assert code == 2 and "unreachable" in capsys.readouterr().err


def test_debug_shows_the_traceback(tmp_path):
    with pytest.raises(ValueError):
        main(["--debug", "study", "run", str(tmp_path / "absent.toml")])


def test_plot_of_empty_folder_exits_2(tmp_path, capsys):
    assert main(["study", "plot", str(tmp_path)]) == 2
    assert "holds no finished runs" in capsys.readouterr().err
