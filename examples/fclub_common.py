"""Shared pieces of the FCLUB examples: the setting, studies, summaries and figures.

The setting is the authors' public code's (notes/seed-clarifications.md, seed
000): d = 10, m = 4 clusters, 20 users, 5 local servers, 10 fresh items per
round, alpha = 1.5, alpha2 = 2, U = D = 1.01.  Every
run is a study run (`privbandit.studies`): finished runs are kept under the
results folder and skipped when a script is run again.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from privbandit.studies.runner import run_study
from privbandit.studies.spec import study_from_dict

ENVIRONMENT = {"dim": 10, "users": 20, "clusters": 4, "servers": 5, "items": 10}
BASE_SEED = 2022
LABELS = {"fclub": "FCLUB", "fclub-dc": "FCLUB-DC", "cdp-fclub-dc": "CDP-FCLUB-DC",
          "club-per-server": "CLUB", "sclub-per-server": "SCLUB",
          "linucb": "LinUCB", "homo": "Homo", "homo-dc": "Homo-DC"}


def ratings_world(path: Path) -> dict[str, Any]:
    """The same sizes as `ENVIRONMENT` in a world built from a rating file: 20 users
    sampled from its most active, 4 k-means clusters of their SVD vectors, d = 10."""
    return {**ENVIRONMENT, "setting": "ratings", "path": str(path)}


def run(name: str, horizon: int, seeds: int, algorithms: list[dict[str, Any]], out: Path,
        workers: int, max_points: int = 300,
        environment: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run (or resume) a study (in `ENVIRONMENT` unless told) and return its records."""
    spec = study_from_dict({
        "name": name, "horizon": horizon, "seeds": seeds, "base_seed": BASE_SEED,
        "max_points": max_points, "environment": environment or ENVIRONMENT,
        "algorithm": algorithms,
    })
    return run_study(spec, out / name, workers=workers, progress=True).records


def groups(records: list[dict[str, Any]], *keys: str) -> dict[tuple, list[dict[str, Any]]]:
    """Records by (label, run parameters in `keys`)."""
    out: dict[tuple, list[dict[str, Any]]] = {}
    for rec in records:
        cell = rec["run"]["cell"]
        out.setdefault((rec["run"]["label"], *(cell.get(k) for k in keys)), []).append(rec)
    return out


def mean_sd(values) -> tuple[float, float]:
    v = np.asarray(list(values), dtype=float)
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0


def final(group: list[dict[str, Any]]) -> tuple[float, float]:
    return mean_sd(r["final_regret"] for r in group)


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def band(ax, group: list[dict[str, Any]], key: str, label: str, **style) -> None:
    """Mean of a stored curve over seeds with a band of one standard deviation."""
    x = np.asarray(group[0]["rounds"]) + 1
    ys = np.array([r[key] for r in group], dtype=float)
    mean, sd = ys.mean(axis=0), ys.std(axis=0)
    line = ax.plot(x, mean, label=label, **style)[0]
    ax.fill_between(x, mean - sd, mean + sd, color=line.get_color(), alpha=0.2)
