"""The study runner: one atomic file per run, resume, failures that lose nothing."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from privbandit.studies import StudyError, parse_study, run_study
from privbandit.studies.summary import write_summary

from . import toy_algorithm  # noqa: F401

ROOT = Path(__file__).resolve().parents[3]


def study(extra_params: str = "", seeds: int = 2) -> str:
    return textwrap.dedent(f"""
        name = "t"
        horizon = 40
        seeds = {seeds}
        max_points = 10
        [[algorithm]]
        name = "toy"
        [algorithm.params]
        {extra_params}
        [algorithm.grid]
        epsilon = [0.5, 1, 2]
        calibration = ["tight", "paper"]
    """)


def run_files(out: Path) -> list[Path]:
    return sorted((out / "runs").glob("*.json"))


def test_each_run_is_written_once_and_rerun_skips_them(tmp_path):
    spec = parse_study(study())
    with ThreadPoolExecutor(2) as pool:
        first = run_study(spec, tmp_path, executor=pool, progress=False)
        again = run_study(spec, tmp_path, executor=pool, progress=False)
    assert first.ran == 12 and first.skipped == 0
    assert again.ran == 0 and again.skipped == 12
    assert len(run_files(tmp_path)) == 12
    record = json.loads(run_files(tmp_path)[0].read_text())
    assert len(record["cumulative_regret"]) == 10 and record["rounds"][-1] == 39
    assert [r["run_id"] for r in first.records] == [r["run_id"] for r in again.records]


def without_times(records: list[dict]) -> list[dict]:
    """The records but for the times measured (wall clock, the run's timings)."""
    return [{k: v for k, v in r.items() if k not in ("wall_seconds", "timings")}
            for r in records]


def test_result_does_not_depend_on_executor_or_order(tmp_path):
    spec = parse_study(study())
    with ThreadPoolExecutor(1) as one, ThreadPoolExecutor(3) as three:
        a = run_study(spec, tmp_path / "a", executor=one, progress=False)
        b = run_study(spec, tmp_path / "b", executor=three, progress=False)
    assert without_times(a.records) == without_times(b.records)


def test_corrupt_or_foreign_files_are_run_again(tmp_path):
    spec = parse_study(study())
    with ThreadPoolExecutor(2) as pool:
        run_study(spec, tmp_path, executor=pool, progress=False)
        files = run_files(tmp_path)
        files[0].write_text("{ truncated")
        data = json.loads(files[1].read_text())
        data["key"] = "someone-else"
        files[1].write_text(json.dumps(data))
        again = run_study(spec, tmp_path, executor=pool, progress=False)
    assert again.ran == 2 and again.skipped == 10


def test_failed_runs_are_reported_and_finished_ones_kept(tmp_path):
    spec = parse_study(study("fail_seeds = [1]"))
    with ThreadPoolExecutor(2) as pool, pytest.raises(StudyError, match="6 run\\(s\\) failed"):
        run_study(spec, tmp_path, executor=pool, progress=False)
    assert len(run_files(tmp_path)) == 6


KILLED_CHILD = """
import sys
from concurrent.futures import ThreadPoolExecutor
from tests.privbandit.studies import toy_algorithm
from privbandit.studies import parse_study, run_study
spec = parse_study(sys.stdin.read())
with ThreadPoolExecutor(1) as pool:
    run_study(spec, sys.argv[1], executor=pool, progress=False)
"""


def test_sigkilled_study_resumes_to_the_uninterrupted_summary(tmp_path):
    text = study("sleep = 0.15")
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_CHILD, str(killed)], cwd=ROOT,
        stdin=subprocess.PIPE, text=True, start_new_session=True,
    )
    child.stdin.write(text)
    child.stdin.close()
    deadline = time.time() + 60
    while len(run_files(killed)) < 3 and time.time() < deadline:
        time.sleep(0.02)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    done_before = len(run_files(killed))
    assert 3 <= done_before < 12
    spec = parse_study(text)
    with ThreadPoolExecutor(2) as pool:
        resumed = run_study(spec, killed, executor=pool, progress=False)
        run_study(spec, clean, executor=pool, progress=False)
    assert resumed.skipped == done_before and resumed.ran == 12 - done_before
    assert len(run_files(killed)) == 12 and not list((killed / "runs").glob(".*"))
    write_summary(resumed.records, killed)
    write_summary(run_study(spec, clean, progress=False).records, clean)
    assert (killed / "summary.csv").read_text() == (clean / "summary.csv").read_text()


def test_unwritable_results_folder_is_refused_before_running(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(OSError, match="is not writable"):
        run_study(parse_study(study()), blocker / "sub", progress=False)
