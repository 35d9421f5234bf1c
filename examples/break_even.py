"""Shared by the private-federation examples: per-horizon tables, key figures and the
break-even figure of a guarded private algorithm against a baseline that goes alone."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from fclub_common import pyplot

from privbandit.studies.summary import break_even_epsilon


def _key(label: str) -> str:
    return label.lower().replace("-", "_").replace(" ", "_")


def figures(rows: list[dict], horizon: int, guarded_label: str, baseline: str,
            paper_label: str | None = None) -> dict[str, float]:
    """Print the table of one horizon and return its key figures."""
    alone = next(r for r in rows if r["label"] == baseline)
    print(f"\n== T = {horizon:,}, delta = 1e-5, {alone['seeds']} seeds: final regret mean (sd) ==")
    print(f"{'algorithm':16s} {'epsilon':>8s} {'regret':>18s} {'/ ' + baseline:>8s} "
          f"{'cluster err':>12s}")
    for r in rows:
        err = r["cluster_error"]
        print(f"{r['label']:16s} {str(r['epsilon']):>8s} {r['regret_mean']:9.1f} "
              f"({r['regret_sd']:6.1f}) {r['regret_mean'] / alone['regret_mean']:8.3f} "
              f"{err if err == '' else f'{err:.2f}':>12}")
    guarded = sorted((r for r in rows if r["label"] == guarded_label), key=lambda r: r["epsilon"])
    rise = max((max(0.0, b["regret_mean"] - a["regret_mean"])
                / max(math.hypot(a["regret_sd"], b["regret_sd"]), 1e-9)
                for i, a in enumerate(guarded) for b in guarded[i + 1:]), default=0.0)
    out = {f"{_key(baseline)}_regret_T{horizon}": alone["regret_mean"],
           f"guarded_over_{_key(baseline)}_max_T{horizon}":
               max(r["regret_mean"] for r in guarded) / alone["regret_mean"],
           f"guarded_rise_over_sd_T{horizon}": rise,
           f"break_even_epsilon_T{horizon}": break_even_epsilon(rows, guarded_label, baseline)}
    for r in guarded:
        if r["epsilon"] == 8:
            out[f"cluster_error_eps8_T{horizon}"] = r["cluster_error"]
    for r in rows:
        if r["label"] == paper_label:
            out[f"paper_over_{_key(baseline)}_eps{r['epsilon']:g}_T{horizon}"] = (
                r["regret_mean"] / alone["regret_mean"])
    return out


def plot(per_horizon: dict[int, list[dict]], found: dict[str, float], path: Path,
         guarded_label: str, baseline: str) -> Path:
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for horizon, rows in per_horizon.items():
        alone = next(r["regret_mean"] for r in rows if r["label"] == baseline)
        guarded = sorted((r for r in rows if r["label"] == guarded_label),
                         key=lambda r: r["epsilon"])
        eps = [r["epsilon"] for r in guarded]
        left.errorbar(eps, [r["regret_mean"] / alone for r in guarded],
                      yerr=[r["regret_sd"] / alone for r in guarded], marker="o", capsize=3,
                      label=f"T = {horizon:,}")
    left.axhline(1.0, color="gray", linestyle="--", label=baseline)
    left.axhline(1.05, color="gray", linestyle=":", label=f"1.05 x {baseline}")
    left.set(xscale="log", xlabel="epsilon (delta = 1e-5)", ylabel=f"regret / {baseline}",
             title=f"{guarded_label}: regret relative to {baseline}")
    left.legend(fontsize=8)
    horizons = sorted(per_horizon)
    be = [found[f"break_even_epsilon_T{h}"] for h in horizons]
    shown = [b if math.isfinite(b) else np.nan for b in be]
    right.plot(horizons, shown, "o-")
    for h, b in zip(horizons, be, strict=True):
        right.annotate(f"{b:g}", (h, b if math.isfinite(b) else 1.0), fontsize=8)
    right.set(xscale="log", xlabel="horizon T", ylabel="break-even epsilon (inf: none)",
              title=f"Smallest epsilon significantly below {baseline}")
    if any(math.isfinite(b) for b in be):  # a log axis needs a point to show
        right.set_yscale("log")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
