"""Subcommands `tradeoff`, `study run`, `study plot`, `study algorithms` and `account`."""
from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import Executor
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ConfigError, config_error

DEFAULT_STUDY = "default_tradeoff.toml"
STUDY_FILE = "study.json"  # what `study plot` needs to know of the study that ran
EXIT_RUNS_FAILED = 3  # some runs of a study failed (see privbandit.cli for every exit code)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tradeoff",
        help="run the embedded default budget-vs-regret study",
        description="Run the embedded default study (CDP-FCLUB-DC acting on released "
        "statistics only, private when actions adapt, at delta = 1e-5 over an epsilon grid "
        "from 1, against non-private FCLUB-DC and each local server alone) and write "
        "results/<study>/ with summary.csv, ledgers.json and PNG plots; prints, per "
        "epsilon, the regret against going alone with a paired 95% interval over seeds "
        "and the federation gain recovered (FGR) with its interval; the last line is the "
        "break-even epsilon: the smallest epsilon significantly below going alone, or none.",
    )
    _run_options(p)
    p.set_defaults(func=cmd_tradeoff)

    study = sub.add_parser("study", help="run or plot a study described in TOML")
    ssub = study.add_subparsers(dest="study_command", metavar="ACTION")
    ssub.required = True
    run = ssub.add_parser("run", help="run a study file (skips finished runs)")
    run.add_argument("file", type=Path, help="the study TOML file")
    _run_options(run)
    run.set_defaults(func=cmd_study_run)
    plot = ssub.add_parser("plot", help="(re)draw the figures and summary of a results folder")
    plot.add_argument("dir", type=Path, help="a results folder written by `study run`")
    plot.set_defaults(func=cmd_study_plot)
    listing = ssub.add_parser(
        "algorithms", help="list the registered algorithms: parameters, environment, presets")
    listing.add_argument("names", nargs="*", help="only these algorithms (default: all)")
    listing.set_defaults(func=cmd_study_algorithms)

    acc = sub.add_parser(
        "account",
        help="print the (epsilon, delta) each configuration of a study spends, by ledger",
        description="Run each private grid cell of a study once (seed index 0, or --seed) "
        "and print every ledger's budget and spending.",
    )
    acc.add_argument("file", nargs="?", type=Path, help="a study TOML (default: the embedded one)")
    acc.add_argument("--seed", type=int, default=None, help="base seed (overrides the file)")
    acc.add_argument("--horizon", type=int, default=None, help="horizon (overrides the file)")
    acc.set_defaults(func=cmd_account)


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=None,
                   help="results folder (default: results/<study>)")
    p.add_argument("--seed", type=int, default=None, help="base seed (overrides the study's)")
    p.add_argument("--horizon", type=int, default=None, help="horizon (overrides the study's)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None,
                       help="local worker processes (default: cores)")
    where.add_argument("--scheduler", default=None,
                       help="a Dask scheduler address, e.g. tcp://host:8786")
    p.add_argument("--no-plots", action="store_true", help="skip the PNG figures")


def default_study_text() -> str:
    return resources.files("privbandit.studies").joinpath(DEFAULT_STUDY).read_text(encoding="utf-8")


def _load(file: Path | None, seed: int | None, horizon: int | None):
    """The validated study (the embedded default without a file), overrides applied."""
    from .spec import load_study, parse_study

    spec = parse_study(default_study_text(), DEFAULT_STUDY) if file is None else load_study(file)
    return spec.with_overrides(base_seed=seed, horizon=horizon)


def dask_executor(address: str) -> Executor:
    """A `concurrent.futures` executor backed by the Dask scheduler at `address`."""
    try:
        from distributed import Client
    except ImportError:
        raise ConfigError(
            "--scheduler needs Dask: pip install 'privbandit[dask]'"
        ) from None
    try:
        client = Client(address, timeout="5s")
    except (OSError, TimeoutError) as exc:
        raise ConfigError(f"scheduler {address!r} is unreachable: {exc}") from None
    return client.get_executor()


def _figures(records, out_dir: Path, break_even=None, value=None) -> list[Path]:
    """Draw the figures, or say in one line why they are skipped."""
    from .plots import PLOTS_MISSING, plot_all, plots_available

    if not plots_available():
        print(PLOTS_MISSING)
        return []
    marked = None if break_even is None or value is None else (break_even[0], value)
    return plot_all(records, out_dir, marked, None if break_even is None else tuple(break_even))


def execute(spec, out: Path | None, workers: int | None, scheduler: str | None, plots: bool) -> int:
    from .runner import StudyError, folder_lock, run_study, write_atomic

    if workers is not None and workers < 1:
        raise config_error("--workers", workers, "an integer >= 1")
    out_dir = out if out is not None else Path("results") / spec.name
    executor = dask_executor(scheduler) if scheduler else None
    created = not out_dir.exists()
    with folder_lock(out_dir):
        try:
            outcome = run_study(spec, out_dir, executor=executor, workers=workers)
        except StudyError as exc:
            # no summary, ledgers or figures of a failed study; finished runs stay in
            # runs/ for the next attempt, and a folder this attempt made is removed if empty
            print(f"privbandit: error: {exc}", file=sys.stderr)
            if created:
                _remove_if_empty(out_dir)
            return EXIT_RUNS_FAILED
        write_atomic(out_dir / STUDY_FILE, json.dumps({"name": spec.name,
                                                       "break_even": spec.break_even}))
        print(f"study {spec.name}: {len(outcome.records)} runs in {out_dir}")
        _report(outcome.records, out_dir, spec.break_even, plots)
    return 0


def _remove_if_empty(out_dir: Path) -> None:
    """Remove `out_dir` if it holds nothing but its lock file and an empty runs/."""
    from .runner import LOCK_FILE

    runs = out_dir / "runs"
    if runs.is_dir() and not any(runs.iterdir()):
        runs.rmdir()
    if {p.name for p in out_dir.iterdir()} <= {LOCK_FILE}:
        (out_dir / LOCK_FILE).unlink(missing_ok=True)
        out_dir.rmdir()


def _report(records, out_dir: Path, break_even, plots: bool) -> None:
    """Write summary.csv, ledgers.json and the figures; print the paired comparison, and
    the break-even epsilon last."""
    from .summary import (
        break_even_epsilon,
        format_epsilon,
        paired_table,
        summary_rows,
        write_ledgers,
        write_rows,
    )

    rows = summary_rows(records, break_even if records else None)
    print(f"summary: {write_rows(rows, out_dir)}")
    write_ledgers(records, out_dir)
    value = None
    if break_even is not None and records:
        value = break_even_epsilon(rows, break_even[0], break_even[1])
    for fig in (_figures(records, out_dir, break_even, value) if plots and records else []):
        print(f"figure: {fig}")
    if value is not None:
        print("\n".join(paired_table(rows, break_even)))
        print(f"break_even_epsilon: {format_epsilon(value)}")


def cmd_tradeoff(args) -> int:
    spec = _load(None, args.seed, args.horizon)
    return execute(spec, args.out, args.workers, args.scheduler, not args.no_plots)


def cmd_study_run(args) -> int:
    spec = _load(args.file, args.seed, args.horizon)
    return execute(spec, args.out, args.workers, args.scheduler, not args.no_plots)


def cmd_study_plot(args) -> int:
    from .summary import load_records

    records = load_records(args.dir)
    if not records:
        raise ConfigError(f"results folder {str(args.dir)!r} holds no finished runs (runs/*.json)")
    horizons = sorted({r.get("run", {}).get("horizon") for r in records}, key=str)
    if len(horizons) > 1:
        raise ConfigError(
            f"results folder {str(args.dir)!r} mixes runs of horizons {horizons}: their regrets "
            "cannot share a summary or a figure; move one horizon's runs to another folder")
    _report(records, args.dir, _saved_break_even(args.dir), True)
    return 0


def _saved_break_even(out_dir: Path):
    """The [break_even] labels (a `BreakEven`) the study that wrote `out_dir` asked for."""
    from .spec import BreakEven

    try:
        saved = json.loads((Path(out_dir) / STUDY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    labels = saved.get("break_even") if isinstance(saved, dict) else None
    ok = isinstance(labels, list) and len(labels) in (2, 3, 4)
    return BreakEven(*labels) if ok else None


def cmd_study_algorithms(args) -> int:
    from ..registry import algorithms, get_algorithm

    entries = [get_algorithm(n) for n in args.names] if args.names else algorithms().values()
    print("\n\n".join(entry.describe() for entry in entries))
    return 0


def _spend(led: dict[str, Any]) -> str:
    """One ledger's spend; a pure-DP ledger (delta 0, or no delta) says so."""
    delta = led.get("delta_budget") or 0.0
    at = f"at delta={delta:g}" if delta else "at delta=0 (pure DP)"
    text = (f"spent epsilon={led['epsilon_spent']:.4g} of {led['epsilon_budget']:g} {at} "
            f"({led['accountant']}, {led['releases']} releases)")
    if led.get("not_dp_releases"):
        text += f"; NOT DP: {'; '.join(led['not_dp_releases'])}"
    return text


def _ledger_lines(ledgers: list[dict[str, Any]]) -> list[str]:
    """A line per ledger; a run of ledgers spending alike is one line with a count."""
    lines: list[str] = []
    last, count = None, 0
    for led in [*ledgers, None]:
        spend = None if led is None else _spend(led)
        if spend is not None and spend == last:
            count += 1
            continue
        if count > 1:
            lines[-1] += f" (and {count - 1} more ledgers alike)"
        if led is not None:
            lines.append(f"  {led['unit']}: {spend}")
        last, count = spend, 1
    return lines


def cmd_account(args) -> int:
    from ..registry import get_algorithm
    from .runner import run_seed

    spec = _load(args.file, args.seed, args.horizon)
    printed = 0
    seen = set()
    for run in spec.runs():
        entry = get_algorithm(run.algorithm)
        cellkey = (run.label, tuple(sorted(run.cell.items())))
        if not entry.private or cellkey in seen:
            continue
        seen.add(cellkey)
        result = entry.run(run.config(), run_seed(run))
        cell = ", ".join(f"{k}={v}" for k, v in sorted(run.cell.items()))
        print(f"{run.label} [{cell}]: {result.privacy.summary}".rstrip(": "))
        for line in _ledger_lines(result.ledgers):
            print(line)
        if not result.ledgers:
            print("  (no ledger: nothing was charged)")
        printed += 1
    if not printed:
        print("no private algorithm in this study: nothing is spent")
    return 0
