"""Aggregate finished runs: a CSV of mean and spread per grid cell, and the ledgers."""
from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import config_error
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
    """Labels in order, then cells by value: numbers numerically, before other values."""
    def value(v: Any) -> tuple:
        real = isinstance(v, (int, float)) and not isinstance(v, bool)
        return (0, float(v), "") if real else (1, 0.0, str(v))

    return (key[0], key[1], tuple((k, value(v)) for k, v in key[2]))


def max_epsilon_spent(record: dict[str, Any]) -> float:
    """The largest epsilon any ledger of the run spent (0 when it has none)."""
    spent = [led.get("epsilon_spent", 0.0) for led in record.get("ledgers", [])]
    return float(max(spent)) if spent else 0.0


def summary_rows(records: list[dict[str, Any]],
                 break_even: tuple[str, str] | None = None) -> list[dict[str, Any]]:
    """One row per grid cell: mean and standard deviation over seeds.

    With `break_even = (private label, baseline label)`, the private
    algorithm's rows also carry `break_even_epsilon` (see `break_even_epsilon`).
    """
    rows = []
    for (label, algorithm, cell), group in group_cells(records).items():
        final = np.array([r["final_regret"] for r in group])
        comm = np.array([r.get("comm", {}).get("rounds", 0) for r in group], dtype=float)
        msgs = np.array([r.get("comm", {}).get("messages", 0) for r in group], dtype=float)
        cell_d = dict(cell)
        row = {"algorithm": algorithm, "epsilon": cell_d.get("epsilon", ""),
               "delta": cell_d.get("delta", group[0].get("params", {}).get("delta", "")),
               "regret_mean": float(final.mean()),
               "regret_sd": float(final.std(ddof=1)) if len(group) > 1 else 0.0,
               "seeds": len(group), "cluster_error": final_cluster_error(group),
               "label": label, "calibration": cell_d.get("calibration", "")}
        row["other"] = ";".join(f"{k}={v}" for k, v in cell if k not in PRIVACY_KEYS)
        row.update(
            comm_rounds_mean=float(comm.mean()),
            comm_messages_mean=float(msgs.mean()),
            epsilon_spent_max=max(max_epsilon_spent(r) for r in group),
        )
        rows.append(row)
    if break_even is not None:
        value = break_even_epsilon(rows, *break_even)
        for row in rows:
            row["break_even_epsilon"] = value if row["label"] == break_even[0] else ""
    return rows


def final_cluster_error(group: list[dict[str, Any]]) -> float | str:
    """Mean over seeds of the last measured cluster error ("" when none is measured)."""
    last = [r["cluster_error"][-1] for r in group if r.get("cluster_error")]
    return float(np.mean(last)) if last else ""


def break_even_epsilon(rows: list[dict[str, Any]], private: str, baseline: str) -> float:
    """The smallest epsilon at which the `private` label's mean regret is at or below the
    `baseline` label's mean regret (inf when there is none)."""
    base = [r["regret_mean"] for r in rows if r["label"] == baseline]
    if len(base) != 1:
        raise config_error("break_even.baseline", baseline,
                           "the label of one study cell (an algorithm without a grid)")
    hits = [float(r["epsilon"]) for r in rows if r["label"] == private
            and r["epsilon"] != "" and r["regret_mean"] <= base[0]]
    return min(hits, default=math.inf)


def write_summary(records: list[dict[str, Any]], out_dir: Path,
                  break_even: tuple[str, str] | None = None) -> Path:
    """Write `summary.csv` (atomically) and return its path."""
    return write_rows(summary_rows(records, break_even), out_dir)


def write_rows(rows: list[dict[str, Any]], out_dir: Path) -> Path:
    """Write rows of `summary_rows` as `summary.csv` (atomically); return its path."""
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
