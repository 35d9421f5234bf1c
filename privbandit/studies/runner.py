"""Run a study: expand the grid, map runs over an Executor, write each run atomically.

The results folder holds `runs/<run_id>.json` (one file per finished run,
written to a temporary file then renamed, so a killed study never leaves a
half-written run), `summary.csv` (mean and spread per grid cell) and
`ledgers.json`.  Re-running skips every run whose file exists and matches the
run's key; an unreadable or mismatching file is run again.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BanditError
from ..progress import Progress
from ..registry import get_algorithm
from .spec import RunSpec, StudySpec


class StudyError(BanditError):
    """Some runs of a study failed; the finished ones are kept."""


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


def execute_cell(run_dicts: list[dict[str, Any]], max_points: int) -> list[dict[str, Any]]:
    """Run the seeds of one grid cell (in a worker process) in lockstep and return their
    JSON records (each as `execute_run` would; wall time shared equally)."""
    runs = [RunSpec(**d) for d in run_dicts]
    if len(runs) == 1:
        return [execute_run(run_dicts[0], max_points)]
    start = time.perf_counter()
    results = get_algorithm(runs[0].algorithm).lockstep(
        runs[0].config(), [run_seed(run) for run in runs])
    wall = (time.perf_counter() - start) / len(runs)
    return [_record(run, result, wall, max_points)
            for run, result in zip(runs, results, strict=True)]


def cell_tasks(pending: list[RunSpec], lockstep: bool = True) -> list[list[RunSpec]]:
    """The pending runs as tasks: the seeds of one cell together when its algorithm runs
    seeds in lockstep (and `lockstep`), every other run alone."""
    tasks: dict[str, list[RunSpec]] = {}
    for run in pending:
        together = lockstep and get_algorithm(run.algorithm).lockstep is not None
        key = (json.dumps([run.algorithm, run.config(), run.base_seed], sort_keys=True,
                          default=str) if together else run.key)
        tasks.setdefault(key, []).append(run)
    return list(tasks.values())


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temporary file and a rename."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
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


def prepare_out_dir(out_dir: Path) -> Path:
    """Create `out_dir/runs` and check it is writable (before any run starts)."""
    runs_dir = out_dir / "runs"
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
        probe = runs_dir / ".write-check"
        probe.write_text("ok")
        probe.unlink()
        for stale in runs_dir.glob(".*.tmp"):  # left by a run killed mid-write
            stale.unlink()
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
    Raises `StudyError` after the others finish if some runs failed.
    """
    out_dir = Path(out_dir)
    runs_dir = prepare_out_dir(out_dir)
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
        pool = executor or ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1)
        try:
            _map_runs(pool, pending, spec.max_points, runs_dir, outcome, progress, on_record,
                      lockstep)
        finally:
            if own:
                pool.shutdown(wait=True, cancel_futures=True)
    outcome.records.sort(key=lambda r: r["run_id"])
    if outcome.failed:
        lines = "; ".join(f"{rid}: {msg}" for rid, msg in outcome.failed[:5])
        raise StudyError(f"{len(outcome.failed)} run(s) failed (finished runs kept): {lines}")
    return outcome


def _map_runs(pool, pending, max_points, runs_dir, outcome, progress, on_record,
              lockstep) -> None:
    bar = Progress(len(pending), "runs", enabled=True if progress is None else progress)
    futures = {pool.submit(execute_cell, [run.to_dict() for run in task], max_points): task
               for task in cell_tasks(pending, lockstep)}
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
