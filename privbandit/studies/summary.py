"""Aggregate finished runs: a CSV of mean and spread per grid cell, and the ledgers.

With a [break_even] table, the private label's rows also carry the paired
comparison with the baseline (`paired.compare`, the one place it is
computed): `pairs`, `ratio_to_baseline` (ratio of means) with `ratio_low`,
`ratio_high` (Fieller's 95% interval), `diff_mean`, `diff_low`,
`diff_high` (private - baseline, 95% t interval over paired seeds), `fgr`,
`fgr_low`, `fgr_high` (federation gain recovered and Fieller's interval;
empty without a federated reference), `fgr_oracle`, `fgr_oracle_low`,
`fgr_oracle_high` (the same against the oracle; empty without one),
`significant` ("below" or "above" when the interval of the difference excludes 0, else "no") and
`break_even_epsilon` (written "none" when no epsilon is significantly below).
"""
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
from .paired import Paired, compare
from .runner import write_atomic
from .spec import BreakEven

PRIVACY_KEYS = ("epsilon", "delta", "calibration")
PAIRED_KEYS = ("pairs", "ratio_to_baseline", "ratio_low", "ratio_high", "diff_mean",
               "diff_low", "diff_high", "fgr", "fgr_low", "fgr_high", "fgr_oracle",
               "fgr_oracle_low", "fgr_oracle_high", "significant", "break_even_epsilon")


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
                 break_even: BreakEven | tuple | None = None) -> list[dict[str, Any]]:
    """One row per grid cell: mean and standard deviation over seeds.

    With `break_even` (a `BreakEven`, or a (private, baseline[, federated])
    tuple), every row gets the PAIRED_KEYS columns, filled on the private
    label's rows (see the module docstring) and empty on the others.
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
            cluster_mixing=final_cluster_error(group, "cluster_mixing"),
        )
        rows.append(row)
    if break_even is not None:
        _add_paired(rows, records, BreakEven(*break_even))
    return rows


def _add_paired(rows: list[dict[str, Any]], records: list[dict[str, Any]],
                break_even: BreakEven) -> None:
    """Fill the PAIRED_KEYS columns of the private label's rows (empty elsewhere)."""
    comparisons = {p.cell: p for p in compare(records, *break_even)}
    for row in rows:
        row.update(dict.fromkeys(PAIRED_KEYS, ""))
    for row, (label, _, cell) in zip(rows, group_cells(records), strict=True):
        if label == break_even.private:
            row.update(paired_columns(comparisons[cell], break_even.federated is not None,
                                      break_even.oracle is not None))
    value = break_even_epsilon(rows, break_even.private, break_even.baseline)
    for row in rows:
        if row["label"] == break_even.private:
            row["break_even_epsilon"] = value


def paired_columns(p: Paired, with_fgr: bool, with_oracle: bool = False) -> dict[str, Any]:
    """A comparison's summary columns (the FGR columns empty without a federated label, the
    oracle's without an oracle label)."""
    fgr = (p.fgr, p.fgr_low, p.fgr_high) if with_fgr else ("", "", "")
    oracle = (p.fgr_oracle, p.fgr_oracle_low, p.fgr_oracle_high) if with_oracle else (
        "", "", "")
    return dict(zip(PAIRED_KEYS[:-1], (p.pairs, p.ratio, p.ratio_low, p.ratio_high, p.diff,
                                       p.diff_low, p.diff_high, *fgr, *oracle, p.significant),
                    strict=True))


def final_cluster_error(group: list[dict[str, Any]], key: str = "cluster_error"
                        ) -> float | str:
    """Mean over seeds of the last measured cluster error (key="cluster_mixing": of the
    last measured mixing; "" when none is measured)."""
    last = [r[key][-1] for r in group if r.get(key)]
    return float(np.mean(last)) if last else ""


def break_even_epsilon(rows: list[dict[str, Any]], private: str, baseline: str) -> float:
    """The smallest epsilon at which the `private` label's rows are significantly below
    the `baseline` label (`significant` is "below"; inf when there is none).

    `rows` are `summary_rows(records, break_even)` rows, whose paired columns
    `paired.compare` computed.
    """
    if len([r for r in rows if r["label"] == baseline]) != 1:
        raise config_error("break_even.baseline", baseline,
                           "the label of one study cell (an algorithm without a grid)")
    mine = [r for r in rows if r["label"] == private]
    if any("significant" not in r for r in mine):
        raise config_error("rows", private, "rows of summary_rows(records, break_even), "
                           "with the paired columns")
    hits = [float(r["epsilon"]) for r in mine if r["significant"] == "below"]
    return min(hits, default=math.inf)


def format_epsilon(value: float) -> str:
    """A break-even epsilon as printed and written: the number, or "none" (inf)."""
    return "none" if math.isinf(value) else f"{value:g}"


def write_summary(records: list[dict[str, Any]], out_dir: Path,
                  break_even: BreakEven | tuple | None = None) -> Path:
    """Write `summary.csv` (atomically) and return its path."""
    return write_rows(summary_rows(records, break_even), out_dir)


def write_rows(rows: list[dict[str, Any]], out_dir: Path) -> Path:
    """Write rows of `summary_rows` as `summary.csv` (atomically); return its path."""
    buf = io.StringIO()
    if rows:
        writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _cell(k, v) for k, v in row.items()})
    path = Path(out_dir) / "summary.csv"
    write_atomic(path, buf.getvalue())
    return path


def _cell(key: str, value: Any) -> Any:
    if key == "break_even_epsilon" and isinstance(value, float):
        return format_epsilon(value)
    return f"{value:.6g}" if isinstance(value, float) else value


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


def paired_table(rows: list[dict[str, Any]], break_even: BreakEven | tuple) -> list[str]:
    """The paired comparison of `summary_rows(records, break_even)` as printed lines."""
    be = BreakEven(*break_even)
    lines = [f"{be.private} against {be.baseline}, paired over seeds (95% intervals: t for "
             f"the difference, Fieller for FGR)"]
    if be.federated is not None:
        lines.append(f"FGR = ({be.baseline} - {be.private}) / ({be.baseline} - "
                     f"{be.federated}), the federation gain recovered")
    if be.oracle is not None:
        lines.append(f"FGR vs oracle = ({be.baseline} - {be.private}) / ({be.baseline} - "
                     f"{be.oracle}), against the ceiling ({be.oracle} is a yardstick)")
    fgr_head = f" {'FGR [interval]':>24}" if be.federated else ""
    fgr_head += f" {'FGR vs oracle [interval]':>26}" if be.oracle else ""
    lines.append(f"{'epsilon':>8} {'pairs':>5} {'regret':>10} {'ratio [interval]':>22} "
                 f"{'private - ' + be.baseline + ' [interval]':>32}{fgr_head} significant")
    for r in rows:
        if r["label"] != be.private:
            continue
        ratio = (f"{r['ratio_to_baseline']:.3f} [{r['ratio_low']:.3f}, "
                 f"{r['ratio_high']:.3f}]")
        diff = f"{r['diff_mean']:+.1f} [{r['diff_low']:+.1f}, {r['diff_high']:+.1f}]"
        fgr = "" if be.federated is None else " " + (
            f"{_percent(r['fgr'])} [{_percent(r['fgr_low'])}, {_percent(r['fgr_high'])}]"
        ).rjust(24)
        fgr += "" if be.oracle is None else " " + (
            f"{_percent(r['fgr_oracle'])} [{_percent(r['fgr_oracle_low'])}, "
            f"{_percent(r['fgr_oracle_high'])}]").rjust(26)
        name = f"{r['epsilon']:g}" + (f" {r['other']}" if r["other"] else "")
        lines.append(f"{name:>8} {r['pairs']:>5} {r['regret_mean']:>10.1f} {ratio:>22} "
                     f"{diff:>32}{fgr} {r['significant']}")
    return lines


def _percent(value: float) -> str:
    return f"{value:+.0%}" if math.isfinite(value) else f"{value}"
