"""The README's quick start is what CI runs: keep them in sync."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.strip().splitlines() if line.strip()]


def test_quick_start_has_exactly_two_commands():
    assert len(quick_start_commands()) == 2


def test_ci_runs_the_readme_test_command_verbatim():
    test_command = quick_start_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_command in [line.strip() for line in ci]


def test_a_newcomer_clones_and_makes_a_virtual_environment_before_installing():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    before, after = text.split("## Quick start", 1)
    assert "Python 3.10 or newer" in before
    assert "git clone" in before and "python3 -m venv .venv" in before
    assert "pip install" not in before.split("```bash", 1)[1].split("```", 1)[0]
    assert "Until a release exists" in after and "pip install -e ." in after
    assert "quiet 2-core machine" in after.split("## Layers", 1)[0]
