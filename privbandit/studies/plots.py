"""Figures of a study's results folder (PNG, matplotlib's Agg backend).

- `regret_curves.png`: cumulative regret against rounds, mean with a band of
  one standard deviation over seeds, one panel per epsilon (non-private
  algorithms appear in every panel as references);
- `regret_vs_epsilon.png`: final regret against epsilon (log axis) per
  algorithm and calibration, non-private algorithms as horizontal lines;
- `communication.png`: communicating rounds against rounds (mean over seeds);
- `ledgers.png`: epsilon spent against rounds, as releases happen: one panel
  per private algorithm, one colour per epsilon budget (first seed of each
  cell), a step line per party (ledger), and under it, dashed on the right
  axis, the share of the run's communicating rounds made so far.

What the ledgers picture shows, and why.  A ledger is charged before the
release it pays for (`privbandit.accounting.Ledger`), and the run records,
per ledger, the accountant's epsilon after each change of its spending
(`ledger_trace`: [round, epsilon] pairs, dated at the first observation of
the run loop's schedule at or after the charge: at the end of the protocol's
step, or within horizon/100 rounds).  The step line is that epsilon: what
the accountant has composed so far.  An algorithm charged per release steps
at each release.  A stream calibrated over the whole run (each record meets
one continual-release stream, so the streams compose in parallel) is charged
its whole budget once, before its first release: the accountant's epsilon is
then the full budget from that charge on, and the line is flat while the
dashed curve shows the releases it covers going out.  The loss of only the
first k releases of such a stream is not what the accountant charged, is not
recorded, and is not drawn: a ramp would claim a spending no ledger made.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .summary import group_cells

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


def plot_regret_vs_epsilon(records: list[dict[str, Any]], path: Path,
                           break_even: tuple[str, float] | None = None) -> Path:
    """Final regret against epsilon; `break_even` = (label, epsilon) marks where that
    private algorithm is first significantly below its baseline (inf: a note that it
    never is)."""
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
    low, high = ax.get_ylim()
    if low > 0 and high / low > 10 or low <= 0 < high and series and _spread(series) > 10:
        ax.set_yscale("log")  # regrets an order of magnitude apart stay readable
    eps_ticks = sorted({e for pts in series.values() for e, _, _ in pts})
    if eps_ticks:
        ax.set_xticks(eps_ticks, [f"{e:g}" for e in eps_ticks])
        ax.minorticks_off()
    if break_even is not None:
        label, value = break_even
        if np.isfinite(value):
            ax.axvline(value, color="black", linestyle=":")
            last = bool(eps_ticks) and value >= eps_ticks[-1]  # keep the note inside the axes
            ax.annotate(f" break-even epsilon of {label}: {value:g} ", (value, 0.5),
                        xycoords=("data", "axes fraction"), fontsize=8,
                        ha="right" if last else "left", va="center")
        else:
            ax.text(0.99, 0.97, f"{label} is at no epsilon significantly below its baseline "
                    "(break-even epsilon: none)", transform=ax.transAxes, fontsize=8,
                    ha="right", va="top")
    ax.set_xlabel("epsilon (log scale)")
    ax.set_ylabel("final cumulative regret")
    ax.set_title("Budget vs regret (mean ± 1 sd over seeds)")
    ax.grid(alpha=0.3, which="both")
    if series:
        ax.legend(fontsize=8)
    return _save(fig, path)


def plot_federation_gain(records: list[dict[str, Any]], path: Path, private: str,
                         baseline: str, federated: str) -> Path:
    """FGR = (alone - private) / (alone - federated) against epsilon, with its paired 95%
    interval (`studies.paired`): 0 is going alone, 100% the non-private federation's
    regret (the ceiling), so the distance to 100% is what privacy costs."""
    from .paired import compare

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    pts = [p for p in compare(records, private, baseline, federated) if np.isfinite(p.epsilon)]
    e = np.array([p.epsilon for p in pts])
    fgr = 100.0 * np.array([p.fgr for p in pts])
    low = 100.0 * np.array([p.fgr_low for p in pts])
    high = 100.0 * np.array([p.fgr_high for p in pts])
    span = (np.nanmin(np.r_[fgr, 0.0]) - 20.0, np.nanmax(np.r_[fgr, 100.0]) + 20.0)
    ax.axhline(100.0, linestyle=":", color="gray")
    ax.axhline(0.0, linestyle="--", color="gray")
    ax.annotate(f"{federated} (non-private ceiling)", (0.01, 100.0),
                xycoords=("axes fraction", "data"), fontsize=8, va="bottom")
    ax.annotate(f"{baseline}", (0.01, 0.0), xycoords=("axes fraction", "data"), fontsize=8,
                va="bottom")
    if pts:
        ax.plot(e, fgr, marker="o", label=f"{private}: FGR")
        ax.fill_between(e, np.clip(low, *span), np.clip(high, *span), alpha=0.2,
                        label="paired 95% interval (clipped)")
        ax.set_xticks(e, [f"{x:g}" for x in e])
        ax.legend(fontsize=8)
    ax.set_xscale("log")
    ax.minorticks_off()
    ax.set_ylim(*span)
    ax.set_xlabel("epsilon (log scale)")
    ax.set_ylabel("federation gain recovered (%)")
    ax.set_title("Privacy cost against the federation's ceiling")
    ax.grid(alpha=0.3)
    return _save(fig, path)


def _spread(series: dict[str, list[tuple[float, float, float]]]) -> float:
    means = [m for pts in series.values() for _, m, _ in pts if m > 0]
    return max(means) / min(means) if means else 1.0


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
    """Epsilon spent against rounds by every party's ledger, stepping at each charge, and
    the share of communicating rounds made so far (first seed of a cell; see the module
    docstring for what the lines mean)."""
    plt = _pyplot()
    panels: dict[str, list[tuple[float, dict[str, Any]]]] = {}
    for (label, _, cell), group in group_cells(records).items():
        if group[0].get("ledger_trace"):
            panels.setdefault(label, []).append((dict(cell).get("epsilon", 0.0), group[0]))
    cols = max(1, min(2, len(panels)))
    rows = -(-max(len(panels), 1) // cols)
    fig, axes = plt.subplots(rows, cols, squeeze=False, figsize=(6.4 * cols, 4.0 * rows))
    for ax, (label, cells) in zip(axes.flat, panels.items(), strict=False):
        _ledger_panel(plt, ax, label, sorted(cells, key=lambda c: c[0]))
    if not panels:
        axes.flat[0].text(0.5, 0.5, "no ledgers (no private algorithm in this study)",
                          ha="center", transform=axes.flat[0].transAxes)
    for ax in list(axes.flat)[max(len(panels), 1):]:
        ax.axis("off")
    fig.suptitle("Epsilon spent as releases happen\n(the accountant's epsilon after each "
                 "charge; a charge comes before the releases it covers)", fontsize=9)
    return _save(fig, path)


def ledger_steps(points: list[list[float]], horizon: int) -> tuple[np.ndarray, np.ndarray]:
    """(rounds counted from 1, epsilon) of a ledger's trace as a post-step line: 0 before
    the first charge, the accountant's epsilon after each, held to the last round."""
    steps = np.asarray([[0, 0.0], *points, [horizon - 1, points[-1][1] if points else 0.0]],
                       dtype=float)
    return steps[:, 0] + 1, steps[:, 1]


def _ledger_panel(plt, ax, label: str, cells: list[tuple[float, dict[str, Any]]]) -> None:
    """One private algorithm: a step line per ledger, the communicating rounds dashed."""
    colors = plt.get_cmap("viridis")(np.linspace(0, 0.9, len(cells)))
    releases = ax.twinx()
    for (eps, record), color in zip(cells, colors, strict=True):
        horizon = record.get("horizon", 1)
        for i, points in enumerate(record["ledger_trace"].values()):
            ax.step(*ledger_steps(points, horizon), where="post", color=color, alpha=0.6,
                    lw=1, label=f"epsilon = {eps:g}" if i == 0 else None)
        curve = record.get("comm_rounds_curve")
        if curve and curve[-1] > 0:
            releases.plot(np.asarray(record["rounds"]) + 1, np.asarray(curve) / curve[-1],
                          "--", color=color, lw=0.8, alpha=0.7)
    top = max((max(p[1] for p in pts) for _, r in cells for pts in r["ledger_trace"].values()
               if pts), default=1.0)
    ax.set_ylim(0, 1.3 * top if top > 0 else 1.0)  # room for the legend above the lines
    releases.set_ylim(0, 1.3)
    releases.set_yticks(np.linspace(0, 1, 6))
    releases.set_ylabel("communicating rounds so far (share, dashed)", fontsize=8)
    ax.set_title(f"{label}: one step line per party")
    ax.set_xlabel("round")
    ax.set_ylabel("epsilon spent (accountant)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", ncol=3)


def plot_all(records: list[dict[str, Any]], out_dir: str | Path,
             break_even: tuple[str, float] | None = None,
             labels: tuple[str, ...] | None = None) -> list[Path]:
    """Write every figure into `out_dir`; return their paths.  With `labels` = (private,
    baseline, federated) also the federation gain recovered (`federation_gain.png`)."""
    out = Path(out_dir)
    paths = [
        plot_regret_curves(records, out / "regret_curves.png"),
        plot_regret_vs_epsilon(records, out / "regret_vs_epsilon.png", break_even),
        plot_communication(records, out / "communication.png"),
        plot_ledgers(records, out / "ledgers.png"),
    ]
    if labels is not None and len(labels) >= 3 and labels[2]:
        paths.append(plot_federation_gain(records, out / "federation_gain.png", *labels[:3]))
    return paths


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path
