"""docs/adding_a_family.md runs: its code is a family, its commands and study work."""
import csv
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from privbandit.errors import ConfigError
from privbandit.studies import parse_study

CLI = "import sys; from privbandit.cli import main; sys.exit(main(sys.argv[1:]))"
DOC = Path(__file__).resolve().parents[3] / "docs" / "adding_a_family.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    """The page's module written out and imported (which registers its entry)."""
    folder = tmp_path_factory.mktemp("family")
    (folder / "my_family.py").write_text("\n\n".join(_blocks("python")), encoding="utf-8")
    (folder / "greedy.toml").write_text(_blocks("toml")[0], encoding="utf-8")
    spec = importlib.util.spec_from_file_location("my_family", folder / "my_family.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return folder, module


def test_the_pages_commands_list_and_run_the_new_family(family):
    folder, _ = family
    env = {**os.environ, "PYTHONPATH": str(folder), "PRIVBANDIT_ALGORITHMS": "my_family"}
    lines = [line.split() for line in _blocks("bash")[0].splitlines()]
    assert all(words[:2] == ["PRIVBANDIT_ALGORITHMS=my_family", "privbandit"] for words in lines)
    commands = [words[2:] for words in lines]
    assert [c[:2] for c in commands] == [["study", "algorithms"], ["study", "run"]]
    outputs = []
    for args in commands:
        extra = ["--workers", "1", "--no-plots"] if args[1] == "run" else []
        done = subprocess.run([sys.executable, "-c", CLI, *args, *extra], cwd=folder,
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert "explore: a finite number in [0, 1]; default 0.1" in outputs[0]
    assert "preset 'greedy': explore = 0.0" in outputs[0]
    with open(folder / "results" / "greedy" / "summary.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert sorted(r["label"] for r in rows) == ["epsilon-greedy", "epsilon-greedy", "greedy"]
    assert all(r["seeds"] == "3" and float(r["regret_mean"]) > 0 for r in rows)


def test_the_entry_declares_what_the_page_says(family):
    _, module = family
    spec = parse_study(_blocks("toml")[0])
    configs = {run.label: run.config() for run in spec.runs()}
    assert configs["greedy"]["explore"] == 0.0  # the preset
    assert configs["greedy"]["environment"] == {"arms": 5}
    result = module.ENTRY.run(configs["greedy"], np.random.SeedSequence(1))
    assert result.algorithm == "epsilon-greedy" and result.horizon == 3000
    assert result.params["explore"] == 0.0
    direct = module.ENTRY.run({"horizon": 3000, "explore": 0.0, "environment": {"arms": 5}},
                              np.random.SeedSequence(1))
    np.testing.assert_array_equal(direct.regret, result.regret)
    with pytest.raises(ConfigError, match="unknown key 'explroe'"):
        module.ENTRY.run({"horizon": 10, "explroe": 0.1}, 1)


@pytest.mark.parametrize("bad, message", [
    ("explore = [0.02, 0.2]", None),
    ("explroe = [0.1]", "unknown key 'explroe' in [algorithm.grid] of epsilon-greedy; did you "
                        "mean 'explore'? allowed: explore"),
    ("explore = [1.5]", "algorithm[0].explore must be a finite number in [0, 1]; got 1.5"),
])
def test_the_pages_error_messages(family, bad, message):
    text = _blocks("toml")[0].replace("explore = [0.02, 0.2]", bad)
    if message is None:
        parse_study(text)
        return
    with pytest.raises(ConfigError) as info:
        parse_study(text)
    assert str(info.value) == message
    assert f"`{message}`".replace(" ", "") in DOC.read_text().replace("\n", "").replace(" ", "")
