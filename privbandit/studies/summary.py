"""Aggregate finished runs: a CSV of mean and spread per grid cell, and the ledgers."""
from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from .runner import write_atomic

PRIVACY_KEYS = ("epsilon", "delta", "calibration")


def cell_key(record: dict[str, Any]) -> tuple:
    """(label, algorithm, sorted cell items): the runs one summary row averages."""
    run = record["run"]
    return (run["label"], run["algorithm"], tuple(sorted(run["cell"].items())))


def group_cells(records: list[dict[str, Any]]) -> dict[tuple, list[dict[str, Any]]]:
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in sorted(records, key=lambda r: r["run_id"]):
        groups[cell_key(r)].append(r)
    return dict(sorted(groups.items(), key=lambda kv: _sortable(kv[0])))


def _sortable(key: tuple) -> tuple:
    return (key[0], key[1], tuple((k, str(v)) for k, v in key[2]))


def max_epsilon_spent(record: dict[str, Any]) -> float:
    """The largest epsilon any ledger of the run spent (0 when it has none)."""
    spent = [led.get("epsilon_spent", 0.0) for led in record.get("ledgers", [])]
    return float(max(spent)) if spent else 0.0


def summary_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per grid cell: mean and standard deviation over seeds."""
    rows = []
    for (label, algorithm, cell), group in group_cells(records).items():
        final = np.array([r["final_regret"] for r in group])
        comm = np.array([r.get("comm", {}).get("rounds", 0) for r in group], dtype=float)
        msgs = np.array([r.get("comm", {}).get("messages", 0) for r in group], dtype=float)
        cell_d = dict(cell)
        row = {"label": label, "algorithm": algorithm}
        row.update({k: cell_d.get(k, "") for k in PRIVACY_KEYS})
        row["other"] = ";".join(f"{k}={v}" for k, v in cell if k not in PRIVACY_KEYS)
        row.update(
            seeds=len(group),
            final_regret_mean=float(final.mean()),
            final_regret_std=float(final.std(ddof=1)) if len(group) > 1 else 0.0,
            comm_rounds_mean=float(comm.mean()),
            comm_messages_mean=float(msgs.mean()),
            epsilon_spent_max=max(max_epsilon_spent(r) for r in group),
        )
        rows.append(row)
    return rows


def write_summary(records: list[dict[str, Any]], out_dir: Path) -> Path:
    """Write `summary.csv` (atomically) and return its path."""
    rows = summary_rows(records)
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: f"{v:.6g}" if isinstance(v, float) else v for k, v in row.items()})
    path = Path(out_dir) / "summary.csv"
    write_atomic(path, buf.getvalue())
    return path


def write_ledgers(records: list[dict[str, Any]], out_dir: Path) -> Path:
    """Write `ledgers.json`: every run's ledgers and stated guarantee, by run id."""
    data = {
        r["run_id"]: {"privacy": r.get("privacy", {}), "ledgers": r.get("ledgers", [])}
        for r in sorted(records, key=lambda r: r["run_id"])
    }
    path = Path(out_dir) / "ledgers.json"
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True))
    return path


def load_records(out_dir: str | Path) -> list[dict[str, Any]]:
    """Every run record in `out_dir/runs` (unreadable files are skipped)."""
    records = []
    for path in sorted((Path(out_dir) / "runs").glob("*.json")):
        try:
            records.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return records
