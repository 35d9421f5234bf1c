"""Figures of a study's results folder (PNG, matplotlib's Agg backend).

- `regret_curves.png`: cumulative regret against rounds, mean with a band of
  one standard deviation over seeds, one panel per epsilon (non-private
  algorithms appear in every panel as references);
- `regret_vs_epsilon.png`: final regret against epsilon (log axis) per
  algorithm and calibration, non-private algorithms as horizontal lines;
- `communication.png`: communicating rounds against rounds (mean over seeds);
- `ledgers.png`: a table of the ledgers (budget, spent, units) per cell.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .summary import group_cells, max_epsilon_spent

PLOTS_MISSING = ("figures skipped: plotting needs matplotlib, which the 'plots' extra installs "
                 '(pip install "privbandit[plots]")')


def plots_available() -> bool:
    """Whether matplotlib (the 'plots' extra) is installed."""
    from importlib.util import find_spec

    return find_spec("matplotlib") is not None


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _name(label: str, cell: tuple, skip: tuple[str, ...] = ("epsilon",)) -> str:
    extra = ", ".join(f"{k}={v}" for k, v in cell if k not in skip)
    return f"{label} ({extra})" if extra else label


def _curves(group: list[dict[str, Any]], key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rounds = np.asarray(group[0]["rounds"]) + 1
    ys = np.array([r[key] for r in group if len(r.get(key, ())) == len(rounds)], dtype=float)
    return rounds, ys.mean(axis=0), ys.std(axis=0)


def plot_regret_curves(records: list[dict[str, Any]], path: Path) -> Path:
    plt = _pyplot()
    groups = group_cells(records)
    eps_values = sorted({dict(c).get("epsilon") for (_, _, c) in groups} - {None})
    panels = eps_values or [None]
    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.8 * rows), squeeze=False)
    for ax, eps in zip(axes.flat, panels, strict=False):
        for (label, _, cell), group in groups.items():
            cell_eps = dict(cell).get("epsilon")
            if cell_eps is not None and cell_eps != eps:
                continue
            x, mean, std = _curves(group, "cumulative_regret")
            style = "-" if cell_eps is not None else "--"
            line = ax.plot(x, mean, style, label=_name(label, cell))[0]
            ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.2)
        ax.set_title("non-private" if eps is None else f"epsilon = {eps:g}")
        ax.set_xlabel("round")
        ax.set_ylabel("cumulative regret")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle("Cumulative regret (mean ± 1 sd over seeds)")
    return _save(fig, path)


def plot_regret_vs_epsilon(records: list[dict[str, Any]], path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    series: dict[str, list[tuple[float, float, float]]] = {}
    for (label, _, cell), group in group_cells(records).items():
        final = np.array([r["final_regret"] for r in group])
        eps = dict(cell).get("epsilon")
        if eps is None:
            ax.axhline(final.mean(), linestyle="--", color="gray")
            ax.annotate(f"{label} (non-private)", (0.01, final.mean()),
                        xycoords=("axes fraction", "data"), fontsize=8, va="bottom")
            continue
        series.setdefault(_name(label, cell), []).append((eps, final.mean(), final.std()))
    for name, pts in series.items():
        pts.sort()
        e, m, s = (np.array(v) for v in zip(*pts, strict=True))
        ax.errorbar(e, m, yerr=s, marker="o", capsize=3, label=name)
    ax.set_xscale("log")
    eps_ticks = sorted({e for pts in series.values() for e, _, _ in pts})
    if eps_ticks:
        ax.set_xticks(eps_ticks, [f"{e:g}" for e in eps_ticks])
        ax.minorticks_off()
    ax.set_xlabel("epsilon (log scale)")
    ax.set_ylabel("final cumulative regret")
    ax.set_title("Budget vs regret (mean ± 1 sd over seeds)")
    ax.grid(alpha=0.3, which="both")
    if series:
        ax.legend(fontsize=8)
    return _save(fig, path)


def plot_communication(records: list[dict[str, Any]], path: Path) -> Path:
    plt = _pyplot()
    groups = [(label, cell, g) for (label, _, cell), g in group_cells(records).items()
              if all("comm_rounds_curve" in r for r in g)]
    fig, ax = plt.subplots(figsize=(9.5, 4.8))
    colors = plt.get_cmap("viridis")(np.linspace(0, 0.9, len(groups)))
    for (label, cell, group), color in zip(groups, colors, strict=True):
        x, mean, _ = _curves(group, "comm_rounds_curve")
        style = ":" if dict(cell).get("calibration") == "paper" else "-"
        ax.plot(x, np.maximum(mean, 1e-1), style, color=color, label=_name(label, cell, skip=()))
    ax.set_yscale("log")
    ax.set_xlabel("round")
    ax.set_ylabel("rounds with communication (cumulative, log)")
    ax.set_title("Communication (mean over seeds)")
    ax.grid(alpha=0.3, which="both")
    if ax.lines:
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    else:
        ax.text(0.5, 0.5, "no algorithm in this study reports communication rounds",
                ha="center", transform=ax.transAxes)
    return _save(fig, path)


def plot_ledgers(records: list[dict[str, Any]], path: Path) -> Path:
    plt = _pyplot()
    rows = []
    for (label, _, cell), group in group_cells(records).items():
        ledgers = group[0].get("ledgers", [])
        if not ledgers:
            continue
        budget = max(led.get("epsilon_budget", 0.0) for led in ledgers)
        delta = max(led.get("delta_budget", 0.0) for led in ledgers)
        spent = max(max_epsilon_spent(r) for r in group)
        rows.append([_name(label, cell, skip=()), f"{len(ledgers)}", f"{budget:.3g}",
                     f"{delta:.2g}", f"{spent:.4g}", ledgers[0].get("accountant", "")])
    fig, ax = plt.subplots(figsize=(12, 0.32 * len(rows) + 1.2))
    ax.axis("off")
    if rows:
        table = ax.table(cellText=rows, loc="center", cellLoc="left", colWidths=[
            0.46, 0.07, 0.11, 0.07, 0.14, 0.15], colLabels=[
            "run cell", "ledgers", "epsilon budget", "delta", "max epsilon spent", "accountant"])
        table.auto_set_font_size(False)
        table.set_fontsize(8)
        table.scale(1, 1.3)
    else:
        ax.text(0.5, 0.5, "no ledgers (no private algorithm in this study)", ha="center")
    ax.set_title("Privacy ledgers (largest over the run's protected units)")
    return _save(fig, path)


def plot_all(records: list[dict[str, Any]], out_dir: str | Path) -> list[Path]:
    """Write every figure into `out_dir`; return their paths."""
    out = Path(out_dir)
    return [
        plot_regret_curves(records, out / "regret_curves.png"),
        plot_regret_vs_epsilon(records, out / "regret_vs_epsilon.png"),
        plot_communication(records, out / "communication.png"),
        plot_ledgers(records, out / "ledgers.png"),
    ]


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
