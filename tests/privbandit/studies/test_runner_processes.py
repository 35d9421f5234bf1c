"""The runner among processes: one study per folder, workers that die with their parent,
files with the user's umask, and a failed study that writes nothing."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from privbandit.cli import main
from privbandit.studies import parse_study, run_study
from privbandit.studies.runner import folder_lock, worker_threads

from . import toy_algorithm  # noqa: F401
from .test_runner import study

ROOT = Path(__file__).resolve().parents[3]
ENV = {**os.environ, "PRIVBANDIT_ALGORITHMS": "tests.privbandit.studies.toy_algorithm"}


def study_text(sleep: float, seeds: int = 2, extra: str = "") -> str:
    """The runner tests' study (6 grid cells of the toy algorithm), each run sleeping."""
    return study(f"sleep = {sleep}\n{extra}", seeds)


def start_study(tmp_path: Path, out: Path, sleep: float, workers: int = 2) -> subprocess.Popen:
    path = tmp_path / f"{out.name}.toml"
    path.write_text(study_text(sleep))
    return subprocess.Popen(
        [sys.executable, "-m", "privbandit.cli", "study", "run", str(path), "--out", str(out),
         "--workers", str(workers), "--no-plots"],
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_default_sigint)


def _default_sigint() -> None:
    """In the study's process before it starts: SIGINT back to its default, as in a terminal
    (a shell starts background jobs with SIGINT ignored, and a child inherits that)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_no_worker_outlives_a_killed_study(tmp_path, sig):
    child = start_study(tmp_path, tmp_path / "out", sleep=30.0)
    deadline = time.time() + 30
    workers: set[int] = set()
    while len(workers) < 2 and time.time() < deadline:
        time.sleep(0.05)
        workers = children(child.pid)
    assert len(workers) == 2
    os.kill(child.pid, sig)  # the parent alone, as a process manager would
    child.communicate(timeout=20)  # SIGINT: the study stops its runs and exits 130
    assert child.returncode == {signal.SIGINT: 130}.get(sig, -sig)
    deadline = time.time() + 10
    while any(map(alive, workers)) and time.time() < deadline:
        time.sleep(0.1)
    assert not any(map(alive, workers))


def test_a_study_on_a_locked_folder_exits_4_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    with folder_lock(out):  # as another study would hold it
        child = start_study(tmp_path, out, sleep=0.0)
        _, err = child.communicate(timeout=120)
        assert child.returncode == 4, err
        assert "is in use by another privbandit process (pid " in err and err.count("\n") == 1
        assert not (out / "runs").exists()
    assert start_study(tmp_path, out, sleep=0.0).wait(timeout=120) == 0


def test_two_concurrent_studies_on_one_folder_lose_and_repeat_no_run(tmp_path):
    out = tmp_path / "out"
    first = start_study(tmp_path, out, sleep=0.3)
    second = start_study(tmp_path, out, sleep=0.3)
    statuses = sorted(p.wait(timeout=120) for p in (first, second))
    # one runs everything; the other is refused (4) or, if it came after, finds all done (0)
    assert statuses in ([0, 0], [0, 4])
    runs = sorted(p.name for p in (out / "runs").glob("*.json"))
    assert len(runs) == len(set(runs)) == 12


def test_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        run_study(parse_study(study_text(0.0, seeds=1)), tmp_path / "o", workers=1, progress=False)
    finally:
        os.umask(old)
    for path in (tmp_path / "o" / "runs").glob("*.json"):
        assert path.stat().st_mode & 0o777 == 0o644


def test_a_study_whose_runs_all_fail_writes_nothing(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(study_text(0.0, seeds=2, extra="fail_seeds = [0, 1]"))
    out = tmp_path / "out"
    assert main(["study", "run", str(path), "--out", str(out), "--workers", "1"]) == 3
    assert "run(s) failed" in capsys.readouterr().err
    assert not out.exists()


def test_plot_refuses_mixed_horizons(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text(study_text(0.0, seeds=1))
    out = tmp_path / "out"
    for horizon in ("20", "30"):
        assert main(["study", "run", str(path), "--out", str(out), "--workers", "1",
                     "--horizon", horizon, "--no-plots"]) == 0
    assert main(["study", "plot", str(out)]) == 2
    assert "mixes runs of horizons [20, 30]" in capsys.readouterr().err


def test_worker_threads_default_one_unless_the_user_chose(monkeypatch):
    for name in ("PRIVBANDIT_WORKER_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                 "MKL_NUM_THREADS", "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                 "NUMEXPR_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    assert worker_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    assert worker_threads() is None
    monkeypatch.setenv("PRIVBANDIT_WORKER_THREADS", "2")
    assert worker_threads() == 2
    monkeypatch.setenv("PRIVBANDIT_WORKER_THREADS", "two")
    with pytest.raises(ValueError, match="PRIVBANDIT_WORKER_THREADS must be an integer >= 1"):
        worker_threads()


def test_a_dead_but_unreaped_owner_counts_as_dead():
    from privbandit.studies.runner import _alive

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.time() + 10
    while _alive(child.pid) and time.time() < deadline:  # exited, not yet reaped: a zombie
        time.sleep(0.05)
    assert not _alive(child.pid) and child.poll() == 0 and _alive(os.getpid())
