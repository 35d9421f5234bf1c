"""Every example and bench script that takes `--smoke` runs end to end at a tiny size.

The scripts run in this process (runpy), one after the other, in a scratch
folder, so that they cannot rot unseen; the figures they print at full size are
not checked here (that is what they are for).
"""
from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    p for folder in ("examples", "bench") for p in (ROOT / folder).glob("*.py")
    if "__main__" in (text := p.read_text(encoding="utf-8"))
    and ('"--smoke"' in text or "from fedmab_common import" in text)  # its parse_args has it
)


def test_every_script_takes_the_smoke_flag():
    """Every runnable example and bench script is in SCRIPTS (shared modules are not)."""
    runnable = {p.name for folder in ("examples", "bench") for p in (ROOT / folder).glob("*.py")
                if "__main__" in p.read_text(encoding="utf-8")}
    assert runnable == {p.name for p in SCRIPTS}
    assert len(runnable) >= 30 and {"bench_fclub.py", "bench_linucb.py"} <= runnable


@pytest.mark.parametrize("script", SCRIPTS, ids=[f"{p.parent.name}/{p.name}" for p in SCRIPTS])
def test_script_runs_at_smoke_size(script, tmp_path, monkeypatch, capsys):
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(script.parent))
    monkeypatch.setattr(sys, "argv", [str(script), "--smoke"])
    runpy.run_path(str(script), run_name="__main__")
    assert capsys.readouterr().out.strip()
