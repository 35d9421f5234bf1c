"""`RunResult`: everything one run produces, JSON-serialisable.

Per-round arrays (regret, reward) are float64 of length T.  The cluster-error
curve and the mixing curve, when clustering applies, are sampled at
`cluster_error_rounds`.
`to_dict(max_points=...)` keeps files small by storing cumulative curves at
evenly spaced rounds instead of the per-round arrays.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from privbandit.accounting.plain import to_plain
from privbandit.accounting.statement import PrivacyStatement

from .errors import ShapeError, config_error
from .protocol import NON_PRIVATE


def _float_array(name: str, value: Any) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim != 1:
        raise ShapeError(f"{name} must be a 1-D array; got shape {arr.shape}")
    return arr


@dataclass
class RunResult:
    """The outcome of one run of one algorithm on one environment.

    algorithm: name; params: the algorithm's parameters; regret, reward: (T,)
    per-round pseudo-regret and realised reward; comm: `CommLog.summary()`;
    ledgers: `Ledger.summary()` of every protected unit; cluster_error and
    cluster_error_rounds: (C,) detection error (`kernels.cluster_error_rate`)
    and the rounds it was measured at; cluster_mixing: (C,) at the same rounds,
    the share of users outside the largest true cluster of their detected
    cluster (`kernels.cluster_mixing_rate`: how much merges mix true clusters;
    None for worlds whose labels are not clusters); privacy: the stated guarantee (a
    `PrivacyStatement`: relation, epsilon, delta, accountant, sampler
    safety; stored in its stable JSON form); timings: seconds
    by phase; seed: the run's seed; environment: the environment's description;
    comm_rounds: (R,) the rounds in which communication happened
    (`CommLog.round_indices()`), stored downsampled as `comm_rounds_curve`;
    ledger_trace: for each ledger's unit, the [round, epsilon spent] points
    at which its spending changed (`runtime.observers.LedgerTrace`).
    """

    algorithm: str
    params: dict[str, Any]
    regret: np.ndarray
    reward: np.ndarray
    comm: dict[str, Any] = field(default_factory=dict)
    ledgers: list[dict[str, Any]] = field(default_factory=list)
    cluster_error: np.ndarray | None = None
    cluster_error_rounds: np.ndarray | None = None
    privacy: PrivacyStatement = NON_PRIVATE
    timings: dict[str, float] = field(default_factory=dict)
    seed: int | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    comm_rounds: np.ndarray | None = None
    ledger_trace: dict[str, list[list[float]]] = field(default_factory=dict)
    cluster_mixing: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.regret = _float_array("regret", self.regret)
        self.reward = _float_array("reward", self.reward)
        if self.regret.shape != self.reward.shape:
            raise ShapeError(
                f"regret and reward must have equal length; got {self.regret.size} "
                f"and {self.reward.size}"
            )
        if (self.cluster_error is None) != (self.cluster_error_rounds is None):
            raise config_error(
                "cluster_error_rounds", self.cluster_error_rounds,
                "given exactly when cluster_error is given",
            )
        if not isinstance(self.privacy, PrivacyStatement):
            raise config_error("privacy", self.privacy, "a PrivacyStatement")
        if self.comm_rounds is not None:
            self.comm_rounds = np.sort(np.asarray(self.comm_rounds, dtype=np.int64))
        if self.cluster_error is not None:
            self.cluster_error = _float_array("cluster_error", self.cluster_error)
            self.cluster_error_rounds = np.asarray(self.cluster_error_rounds, dtype=np.int64)
            if self.cluster_error_rounds.shape != self.cluster_error.shape:
                raise ShapeError(
                    "cluster_error_rounds must match cluster_error's shape "
                    f"{self.cluster_error.shape}; got {self.cluster_error_rounds.shape}"
                )
        if self.cluster_mixing is not None:
            self.cluster_mixing = _float_array("cluster_mixing", self.cluster_mixing)
            if self.cluster_error is None or self.cluster_mixing.shape != self.cluster_error.shape:
                raise ShapeError(
                    "cluster_mixing must come with cluster_error, of its shape "
                    f"{None if self.cluster_error is None else self.cluster_error.shape}; got "
                    f"{self.cluster_mixing.shape}"
                )

    @property
    def horizon(self) -> int:
        return int(self.regret.size)

    def cumulative_regret(self) -> np.ndarray:
        """Cumulative pseudo-regret after each round, (T,)."""
        return np.cumsum(self.regret)

    def cumulative_reward(self) -> np.ndarray:
        return np.cumsum(self.reward)

    @property
    def total_regret(self) -> float:
        return float(self.regret.sum())

    def to_dict(self, max_points: int | None = None) -> dict[str, Any]:
        """A JSON-serialisable dict.

        With `max_points=None` the per-round arrays are stored as they are;
        otherwise "rounds" holds at most `max_points` evenly spaced round
        indices (always including the last) and the cumulative regret and
        reward at those rounds replace the per-round arrays.
        """
        out: dict[str, Any] = {
            "algorithm": self.algorithm,
            "params": to_plain(self.params),
            "horizon": self.horizon,
            "total_regret": self.total_regret,
            "seed": self.seed,
            "environment": to_plain(self.environment),
            "comm": to_plain(self.comm),
            "ledgers": to_plain(self.ledgers),
            "privacy": self.privacy.to_dict(),
            "timings": to_plain(self.timings),
            "ledger_trace": to_plain(self.ledger_trace),
        }
        if max_points is None:
            out["regret"] = self.regret.tolist()
            out["reward"] = self.reward.tolist()
            if self.comm_rounds is not None:
                out["comm_rounds"] = self.comm_rounds.tolist()
        else:
            if isinstance(max_points, bool) or not isinstance(max_points, int) or max_points < 2:
                raise config_error("max_points", max_points, "None or an integer >= 2")
            idx = _even_indices(self.horizon, max_points)
            out["rounds"] = idx.tolist()
            out["cumulative_regret"] = self.cumulative_regret()[idx].tolist()
            out["cumulative_reward"] = self.cumulative_reward()[idx].tolist()
            if self.comm_rounds is not None:
                curve = np.searchsorted(self.comm_rounds, idx, side="right")
                out["comm_rounds_curve"] = curve.tolist()
        if self.cluster_error is not None:
            out["cluster_error"] = self.cluster_error.tolist()
            out["cluster_error_rounds"] = self.cluster_error_rounds.tolist()
        if self.cluster_mixing is not None:
            out["cluster_mixing"] = self.cluster_mixing.tolist()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunResult":
        """Rebuild a result saved with `to_dict()` (per-round arrays required)."""
        if "regret" not in data:
            raise config_error(
                "data", sorted(data), "a dict saved with to_dict(max_points=None)"
            )
        return cls(
            algorithm=data["algorithm"],
            params=data["params"],
            regret=data["regret"],
            reward=data["reward"],
            comm=data.get("comm", {}),
            ledgers=data.get("ledgers", []),
            cluster_error=data.get("cluster_error"),
            cluster_error_rounds=data.get("cluster_error_rounds"),
            cluster_mixing=data.get("cluster_mixing"),
            comm_rounds=data.get("comm_rounds"),
            privacy=PrivacyStatement.from_dict(data["privacy"]) if "privacy" in data
            else NON_PRIVATE,
            timings=data.get("timings", {}),
            seed=data.get("seed"),
            environment=data.get("environment", {}),
            ledger_trace=data.get("ledger_trace", {}),
        )


def _even_indices(horizon: int, max_points: int) -> np.ndarray:
    if horizon == 0:
        return np.zeros(0, dtype=np.int64)
    idx = np.unique(np.linspace(0, horizon - 1, min(max_points, horizon)).round().astype(np.int64))
    return idx
