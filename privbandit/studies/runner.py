"""Run a study: expand the grid, map runs over an Executor, write each run atomically.

The results folder holds `runs/<run_id>.json` (one file per finished run,
written to a temporary file then renamed, so a killed study never leaves a
half-written run), `summary.csv` (mean and spread per grid cell) and
`ledgers.json`.  Re-running skips every run whose file exists and matches the
run's key; an unreadable or mismatching file is run again.

One process at a time works in a results folder: `run_study` holds an
exclusive lock on `<out_dir>/.lock` (released by the kernel when the process
ends, however it ends), and a second process is refused with `FolderBusyError`.
Files get the permissions the user's umask gives.  Local pool workers limit
their BLAS/OpenMP threads (one each, unless `PRIVBANDIT_WORKER_THREADS` or one
of the usual thread variables such as OMP_NUM_THREADS says otherwise), and exit
on their own when the process that started them dies.
"""
from __future__ import annotations

import fcntl
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BanditError, FolderBusyError, config_error
from ..registry import get_algorithm
from ..runtime.progress import Progress
from .spec import RunSpec, StudySpec


class StudyError(BanditError):
    """Some runs of a study failed; the finished ones are kept."""


# Variables by which a user sets the BLAS/OpenMP threads; any of them set means
# "the user chose", and pool workers then keep the libraries' own setting.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
_PARENT_POLL_SECONDS = 0.5
LOCK_FILE = ".lock"


def worker_threads() -> int | None:
    """BLAS/OpenMP threads per pool worker: PRIVBANDIT_WORKER_THREADS if set, None
    (no limit) if the user set one of THREAD_VARIABLES, else 1."""
    raw = os.environ.get("PRIVBANDIT_WORKER_THREADS")
    if raw is not None:
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value < 1:
            raise config_error("PRIVBANDIT_WORKER_THREADS", raw, "an integer >= 1")
        return value
    return None if any(v in os.environ for v in THREAD_VARIABLES) else 1


def _alive(pid: int) -> bool:
    """Whether process `pid` runs: a zombie (dead, not yet reaped by its parent) does not."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (not Linux): signal 0 tells at least whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def _init_worker(owner: int, threads: int | None) -> None:
    """Pool worker start-up: limit BLAS threads, and exit when `owner` is gone.

    Several workers each running a BLAS with one thread per core oversubscribe
    the machine; and a worker whose owner was killed (SIGKILL leaves no
    chance to clean up) would otherwise run on.  The watch is a daemon thread
    that, twice a second, checks the owner (the process that made the pool;
    it may already be dead when this runs) and the worker's own parent (the
    owner, or a fork server that ends with it).
    """
    if threads is not None:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent and _alive(owner):
            time.sleep(_PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="privbandit-parent-watch", daemon=True).start()


def local_pool(workers: int | None = None) -> ProcessPoolExecutor:
    """A process pool whose workers limit their threads and die with this process."""
    return ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1,
                               initializer=_init_worker,
                               initargs=(os.getpid(), worker_threads()))


def run_seed(run: RunSpec) -> np.random.SeedSequence:
    """The run's seed: a child of `base_seed` fixed by the seed index alone."""
    return np.random.SeedSequence(run.base_seed, spawn_key=(run.seed_index,))


def execute_run(run_dict: dict[str, Any], max_points: int) -> dict[str, Any]:
    """Run one configuration (in a worker process) and return its JSON record."""
    run = RunSpec(**run_dict)
    entry = get_algorithm(run.algorithm)
    start = time.perf_counter()
    result = entry.run(run.config(), run_seed(run))
    return _record(run, result, time.perf_counter() - start, max_points)


def _record(run: RunSpec, result: Any, wall: float, max_points: int) -> dict[str, Any]:
    record = result.to_dict(max_points=max_points)
    record["final_regret"] = result.total_regret
    record.update(run=run.to_dict(), run_id=run.run_id, key=run.key, wall_seconds=wall)
    return record


def _file_mode() -> int:
    """The mode a plain new file gets under the process's umask (0o666 & ~umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def execute_cell(run_dicts: list[dict[str, Any]], max_points: int) -> list[dict[str, Any]]:
    """Run the seeds of one grid cell (in a worker process) in lockstep and return their
    JSON records (each as `execute_run` would; wall time shared equally)."""
    runs = [RunSpec(**d) for d in run_dicts]
    if len(runs) == 1:
        return [execute_run(run_dicts[0], max_points)]
    start = time.perf_counter()
    results = get_algorithm(runs[0].algorithm).run_seeds(
        runs[0].config(), [run_seed(run) for run in runs])
    wall = (time.perf_counter() - start) / len(runs)
    return [_record(run, result, wall, max_points)
            for run, result in zip(runs, results, strict=True)]


def _in_lockstep(run: RunSpec) -> bool:
    """Whether the seeds of `run`'s cell play in lockstep; a run whose build fails runs
    alone, in a worker, where its failure is recorded like any other."""
    try:
        return get_algorithm(run.algorithm).runs_in_lockstep(run.config(), run_seed(run))
    except Exception:  # noqa: BLE001 (any build error: the worker reports it)
        return False


def cell_tasks(pending: list[RunSpec], lockstep: bool = True,
               width: int = 1) -> list[list[RunSpec]]:
    """The pending runs as tasks: the seeds of one cell together when their runs play in
    lockstep (and `lockstep`; judged on the cell's first run: `AlgorithmEntry.runs_in_lockstep`),
    every other run alone.

    While there are fewer tasks than `width` (the executor's workers), the largest
    lockstep group is halved, so that a study of a few cells still uses every worker
    (a replicate's records do not depend on which seeds share its task).
    """
    groups: dict[str, list[RunSpec]] = {}
    judged: dict[str, bool] = {}
    for run in pending:
        cell = json.dumps([run.algorithm, run.config(), run.base_seed], sort_keys=True,
                          default=str)
        if lockstep and cell not in judged:
            judged[cell] = _in_lockstep(run)
        key = cell if judged.get(cell) else run.key
        groups.setdefault(key, []).append(run)
    tasks = list(groups.values())
    while len(tasks) < width:
        largest = max(range(len(tasks)), key=lambda i: len(tasks[i]), default=None)
        if largest is None or len(tasks[largest]) < 2:
            break
        task = tasks.pop(largest)
        tasks += [task[: len(task) // 2], task[len(task) // 2:]]
    return tasks


def executor_width(executor: Executor) -> int:
    """How many tasks `executor` runs at once: a process pool's workers, a Dask
    client's threads, else the machine's cores."""
    workers = getattr(executor, "_max_workers", None)
    if isinstance(workers, int) and workers > 0:
        return workers
    client = getattr(executor, "_client", None)
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # a client that cannot say: fall back to the cores
            pass
    return os.cpu_count() or 1


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file and a rename.

    The file gets the user's umask (mkstemp alone would make it private, 0o600).
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_finished(path: Path, run: RunSpec) -> dict[str, Any] | None:
    """The saved record of `run` if `path` holds a valid one, else None."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = (
        isinstance(record, dict) and record.get("key") == run.key
        and isinstance(record.get("final_regret"), (int, float))
        and isinstance(record.get("cumulative_regret"), list)
    )
    return record if ok else None


@dataclass
class StudyOutcome:
    """What `run_study` did: records of every run, how many were skipped."""

    out_dir: Path
    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0
    ran: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)


# Results folders this process holds the lock of (resolved path -> lock file descriptor).
_HELD: dict[Path, int] = {}


@contextmanager
def folder_lock(out_dir: Path) -> Iterator[Path]:
    """Create `out_dir` and hold its exclusive lock for the block (re-entrant).

    Opening the lock file is the write check.  A second process gets
    FolderBusyError at once (no waiting), so two studies never share a folder;
    the kernel drops the lock when the holder ends, however it ends.
    """
    key = Path(out_dir).resolve()
    if key in _HELD:
        yield out_dir
        return
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(out_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, _file_mode())
    except OSError as exc:
        raise OSError(f"results folder {str(out_dir)!r} is not writable: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
        os.close(fd)
        raise FolderBusyError(
            f"results folder {str(out_dir)!r} is in use by another privbandit process "
            f"(pid {holder}); wait for it to finish or choose another --out") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    _HELD[key] = fd
    try:
        yield out_dir
    finally:
        del _HELD[key]
        os.close(fd)  # releases the lock


def prepare_runs_dir(out_dir: Path) -> Path:
    """Create `out_dir/runs` and clear what a killed run left (call with the lock held)."""
    runs_dir = out_dir / "runs"
    try:
        runs_dir.mkdir(exist_ok=True)
        for stale in runs_dir.glob(".*.tmp"):  # left by a run killed mid-write
            stale.unlink(missing_ok=True)
    except OSError as exc:
        raise OSError(f"results folder {str(out_dir)!r} is not writable: {exc.strerror}") from None
    return runs_dir


def run_study(
    spec: StudySpec,
    out_dir: str | Path,
    executor: Executor | None = None,
    workers: int | None = None,
    progress: bool | None = None,
    on_record: Callable[[dict[str, Any]], None] | None = None,
    lockstep: bool = True,
) -> StudyOutcome:
    """Run every unfinished run of `spec`, writing `out_dir/runs/*.json` as they finish.

    executor: any `concurrent.futures.Executor` (e.g. a Dask client's); by
    default a local process pool with `workers` processes (default: cores).
    progress: a progress line on stderr, terminal or not (default: on).
    lockstep: run the seeds of a cell together in one task, in lockstep, when
    the algorithm supports it (`AlgorithmEntry.lockstep`; same records).
    Raises `FolderBusyError` if another process works in `out_dir`, and
    `StudyError` after the others finish if some runs failed.
    """
    out_dir = Path(out_dir)
    with folder_lock(out_dir):
        return _run_locked(spec, out_dir, executor, workers, progress, on_record, lockstep)


def _run_locked(spec, out_dir, executor, workers, progress, on_record,
                lockstep) -> StudyOutcome:
    runs_dir = prepare_runs_dir(out_dir)
    outcome = StudyOutcome(out_dir)
    pending: list[RunSpec] = []
    for run in spec.runs():
        record = load_finished(runs_dir / f"{run.run_id}.json", run)
        if record is None:
            pending.append(run)
        else:
            outcome.records.append(record)
            outcome.skipped += 1
    if pending:
        own = executor is None
        pool = executor or local_pool(workers)
        try:
            _map_runs(pool, pending, spec.max_points, runs_dir, outcome, progress, on_record,
                      lockstep)
        except BaseException:  # Ctrl-C or a signal turned exception: do not wait for the runs
            if own:
                _terminate_workers(pool)
            raise
        finally:
            if own:
                pool.shutdown(wait=True, cancel_futures=True)
    outcome.records.sort(key=lambda r: r["run_id"])
    if outcome.failed:
        lines = "; ".join(f"{rid}: {msg}" for rid, msg in outcome.failed[:5])
        raise StudyError(f"{len(outcome.failed)} run(s) failed (finished runs kept): {lines}")
    return outcome


def _terminate_workers(pool: ProcessPoolExecutor) -> None:
    """Stop the pool's workers now (SIGTERM); the executor has no public way before 3.14."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


def _map_runs(pool, pending, max_points, runs_dir, outcome, progress, on_record,
              lockstep) -> None:
    bar = Progress(len(pending), "runs", enabled=True if progress is None else progress)
    futures = {pool.submit(execute_cell, [run.to_dict() for run in task], max_points): task
               for task in cell_tasks(pending, lockstep, executor_width(pool))}
    for future in as_completed(futures):
        task = futures[future]
        try:
            records = future.result()
        except Exception as exc:  # a failed run must not lose the others
            outcome.failed.extend((run.run_id, f"{type(exc).__name__}: {exc}") for run in task)
        else:
            for run, record in zip(task, records, strict=True):
                write_atomic(runs_dir / f"{run.run_id}.json", json.dumps(record))
                outcome.records.append(record)
                outcome.ran += 1
                if on_record is not None:
                    on_record(record)
        bar.update(len(task))
