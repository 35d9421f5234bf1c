"""`FclubConfig`: the validated settings of one FCLUB-family run, and the server layout.

One frozen object holds everything the algorithm needs besides privacy:
sizes (d, n users, L local servers), how observations are shared ("instant":
FCLUB, every observation uploaded and downloaded at once; "delayed": FCLUB-DC,
det-ratio triggers U and D of seed 000 Algorithms 3-4), whether clusters are
detected (False: Homo / Homo-DC, every user in one cluster), the deletion and
merge factors alpha, alpha2 (seed 000 eqs. 3-4) and the UCB radius settings.

Users are split over servers in contiguous, nearly equal blocks, as in the
authors' public code (notes/seed-clarifications.md, seed 000).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from privbandit.accounting.validation import check_nonnegative, check_positive

from ..errors import config_error
from ..policies.radius import ConfidenceRadius
from ..validation import check_dim

SYNC_MODES = ("instant", "delayed")


def _threshold(name: str, value: object, role: str) -> float:
    """A det-ratio threshold: a finite real number > 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise config_error(name, value, f"a finite number > 1 (the {role} det-ratio threshold)")
    x = float(value)
    if not (math.isfinite(x) and x > 1.0):
        raise config_error(name, value, f"a finite number > 1 (the {role} det-ratio threshold)")
    return x


def server_of_users(n_users: int, n_servers: int) -> np.ndarray:
    """The local server of each user: contiguous blocks whose sizes differ by at most one.

    Raises ConfigError when there are more servers than users (a server
    without users has nothing to learn from).
    """
    n_users = check_dim("n_users", n_users)
    n_servers = check_dim("n_servers", n_servers)
    if n_servers > n_users:
        raise config_error(
            "n_servers", n_servers, f"at most n_users = {n_users} (every server needs a user)")
    edges = np.linspace(0, n_users, n_servers + 1).round().astype(np.int64)
    return np.repeat(np.arange(n_servers), np.diff(edges))


@dataclass(frozen=True)
class FclubConfig:
    """Settings of FCLUB / FCLUB-DC / Homo / Homo-DC (privacy comes separately, `CdpPlan`).

    dim, n_users, n_servers: d, n, L.  sync: "instant" (FCLUB, Homo) or
    "delayed" (FCLUB-DC, Homo-DC, CDP-FCLUB-DC).  detect: phase-based cluster
    detection (seed 000 Algorithm 2); False puts every user in one cluster.
    alpha: local edge-deletion factor (eq. 3; 1.5 in the public code);
    alpha2: global merge factor (eq. 4; 2).  upload_threshold U,
    download_threshold D: det-ratio triggers (eqs. 5-6; 1.01), both > 1.
    lam: ridge regulariser of every model.  beta_scale, noise_scale (the
    rewards' sub-Gaussian scale sigma_0), confidence (failure probability
    alpha of Lemma 1), theta_bound (S): the UCB radius.  item_bound: largest
    item norm accepted.
    """

    dim: int
    n_users: int
    n_servers: int = 5
    sync: str = "delayed"
    detect: bool = True
    alpha: float = 1.5
    alpha2: float = 2.0
    upload_threshold: float = 1.01
    download_threshold: float = 1.01
    lam: float = 1.0
    beta_scale: float = 1.0
    noise_scale: float = 0.5
    confidence: float = 0.1
    theta_bound: float = 1.0
    item_bound: float = 1.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "dim", check_dim("dim", self.dim))
        set_(self, "n_users", check_dim("n_users", self.n_users))
        set_(self, "n_servers", check_dim("n_servers", self.n_servers))
        server_of_users(self.n_users, self.n_servers)  # servers <= users
        if self.sync not in SYNC_MODES:
            raise config_error("sync", self.sync, f"one of {SYNC_MODES}")
        if not isinstance(self.detect, (bool, np.bool_)):
            raise config_error("detect", self.detect, "True or False")
        set_(self, "detect", bool(self.detect))
        set_(self, "alpha", check_positive("alpha", self.alpha))
        set_(self, "alpha2", check_positive("alpha2", self.alpha2))
        set_(self, "upload_threshold", _threshold("upload_threshold", self.upload_threshold,
                                                  "upload (U)"))
        set_(self, "download_threshold", _threshold("download_threshold",
                                                    self.download_threshold, "download (D)"))
        set_(self, "lam", check_positive("lam", self.lam))
        set_(self, "item_bound", check_positive("item_bound", self.item_bound))
        # the radius validates beta_scale, noise_scale, confidence and theta_bound
        radius = self.radius()
        set_(self, "beta_scale", radius.scale)
        set_(self, "noise_scale", radius.noise_scale)
        set_(self, "confidence", radius.confidence)
        set_(self, "theta_bound", check_nonnegative("theta_bound", self.theta_bound))

    def radius(self) -> ConfidenceRadius:
        """The OFUL radius of the non-private variants (Abbasi-Yadkori et al. 2011, Thm 2)."""
        return ConfidenceRadius("oful", self.beta_scale, self.noise_scale, self.confidence,
                                self.theta_bound)

    def servers(self) -> np.ndarray:
        """The local server of each user, (n_users,)."""
        return server_of_users(self.n_users, self.n_servers)

    def params(self) -> dict[str, Any]:
        return {
            "dim": self.dim, "n_users": self.n_users, "n_servers": self.n_servers,
            "sync": self.sync, "detect": self.detect, "alpha": self.alpha,
            "alpha2": self.alpha2, "upload_threshold": self.upload_threshold,
            "download_threshold": self.download_threshold, "lam": self.lam,
            "beta_scale": self.beta_scale, "noise_scale": self.noise_scale,
            "confidence": self.confidence, "theta_bound": self.theta_bound,
            "item_bound": self.item_bound,
        }
