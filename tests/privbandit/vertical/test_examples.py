"""The vertical examples run end to end at a tiny scale (so they never drift)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


@pytest.mark.parametrize(
    "script, args, expect",
    [
        ("vertical_synthetic.py", ["--seeds", "2", "--horizon", "20", "--plain"],
         "vfucb_arm_mismatches: 0"),
        ("vertical_leakage.py", ["--rounds", "5", "--sample", "50"],
         "known_plaintext_decode_error_k20:"),
    ],
)
def test_example_runs_and_writes_its_figure(tmp_path, script, args, expect):
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args, "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=120, check=True,
    )
    assert expect in done.stdout
    assert list(tmp_path.glob("*.png"))
