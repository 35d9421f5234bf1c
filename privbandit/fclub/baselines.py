"""The seed's baselines, the oracle ceiling, and a by-name factory of the FCLUB family.

Seed 000, Section 5: CLUB and SCLUB run separately on each local server (no
communication), LinUCB per user (the core `policies.LinUCB`, registered as
"linucb"), and Homo / Homo-DC (FCLUB / FCLUB-DC with every user in one
cluster).  `make_policy(name, ...)` builds the federated ones and
FCLUB, FCLUB-DC and CDP-FCLUB-DC, from plain keyword settings.
`ClusterOracle` is not an algorithm anyone can deploy: it is told the world's
hidden clusters and pools each true cluster's users across all servers, the
upper bound of what federated clustering can gain.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..clustering import SplitMergeClustering, true_clusters
from ..errors import config_error
from ..policies.base import Policy
from ..policies.club import CLUB
from ..policies.linear import LinUCB
from ..policies.sclub import SCLUB
from ..validation import check_user
from .algorithm import FederatedClub
from .config import FclubConfig, server_of_users
from .privacy import CdpPlan
from .sets import SetFederatedClub

ALGORITHMS = ("fclub", "fclub-dc", "cdp-fclub-dc", "club-per-server", "sclub-per-server",
              "homo", "homo-dc", "fclub-dc-sets")
# FclubConfig fields a name fixes (the rest come from keyword settings)
_FEDERATED = {
    "fclub": {"sync": "instant", "detect": True},
    "fclub-dc": {"sync": "delayed", "detect": True},
    "cdp-fclub-dc": {"sync": "delayed", "detect": True},
    "homo": {"sync": "instant", "detect": False},
    "homo-dc": {"sync": "delayed", "detect": False},
}
_CONFIG_KEYS = {"alpha", "alpha2", "upload_threshold", "download_threshold", "lam",
                "beta_scale", "noise_scale", "confidence", "theta_bound", "item_bound"}
_PLAN_KEYS = ("act_on", "calibration", "detection_share", "detection", "failure", "sampler",
              "mechanism", "schedule", "batch", "growth")
_RADIUS_KEYS = ("beta_scale", "noise_scale", "lam", "theta_bound", "item_bound")
# SplitMergeClustering fields "fclub-dc-sets" takes (it shares lam, noise_scale, theta_bound)
SET_KEYS = ("merge_level", "split_level", "unit_evidence", "block_evidence", "simulations")


class PerServer(Policy):
    """One independent policy per local server, over that server's users only.

    make(n_users_of_server) -> Policy builds each server's policy; users are
    split over servers as `server_of_users`.  Each server counts its own
    rounds (the `t` its policy sees).  No communication, no privacy claim.
    """

    def __init__(self, make: Callable[[int], Policy], n_users: int, n_servers: int,
                 name: str = "per-server") -> None:
        self.server = server_of_users(n_users, n_servers)
        self.n_users = int(self.server.size)
        self.local = np.zeros(self.n_users, dtype=np.intp)
        self.policies: list[Policy] = []
        for s in range(n_servers):
            users = np.flatnonzero(self.server == s)
            self.local[users] = np.arange(users.size)
            self.policies.append(make(int(users.size)))
        self._rounds = np.zeros(n_servers, dtype=np.int64)
        self.name = name

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        s = self.server[check_user(user, self.n_users)]
        return self.policies[s].select(items, int(self.local[user]), int(self._rounds[s]), rng)

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        s = self.server[check_user(user, self.n_users)]
        self.policies[s].update(items, int(self.local[user]), action, feedback,
                                int(self._rounds[s]))
        self._rounds[s] += 1

    def cluster_labels(self) -> np.ndarray | None:
        labels = np.zeros(self.n_users, dtype=np.int64)
        for s, policy in enumerate(self.policies):
            local = policy.cluster_labels()
            if local is None:
                return None
            labels[self.server == s] = s * self.n_users + np.asarray(local)
        return labels

    def params(self) -> dict[str, Any]:
        return {"n_servers": len(self.policies), **self.policies[0].params(),
                "n_users": self.n_users}

    # -- replicates in lockstep (`fclub.lockstep.BatchedPerServer`) ------------------------
    def replicate_state(self) -> dict[str, np.ndarray]:
        """Each server's round count, "rounds" (`Policy.replicate_state`; the servers'
        policies hold their own state)."""
        return {"rounds": self._rounds}

    def _bind_views(self, views: dict[str, np.ndarray]) -> None:
        self._rounds = views.get("rounds", self._rounds)

    @property
    def lockstep_ready(self) -> bool:
        """CLUB (or SCLUB) on every server, servers of equal size (their policies stack)."""
        sizes = np.bincount(self.server, minlength=len(self.policies))
        kind = type(self.policies[0])
        return (type(self) is PerServer and kind in (CLUB, SCLUB)
                and all(type(p) is kind for p in self.policies)
                and bool(np.all(sizes == sizes[0])))


class ClusterOracle(Policy):
    """ORACLE -- reads the world's hidden clusters: LinUCB pooled per TRUE cluster.

    clusters: (n_users,) the world's true cluster of each user
    (`Environment.true_clusters()`, hidden from every real algorithm); radius
    keywords as `LinUCB`.  One LinUCB (OFUL) model per true cluster, fed by
    every user of that cluster on every server, from the first round: what a
    federation with perfect, instant cluster detection and free sharing would
    play, so its regret is the ceiling of any federation's gain (a run of it
    reports cluster error and mixing 0).  Its `params()` say "oracle": True.

    Privacy guarantee: none, and not an algorithm: it reads hidden structure.
    """

    name = "oracle-clusters"

    def __init__(self, dim: int, clusters: np.ndarray, **radius: Any) -> None:
        self._truth, self.cluster_of = true_clusters(clusters, "user")
        self.n_users = int(self._truth.size)
        self.model = LinUCB(dim, int(self.cluster_of.max()) + 1, **radius)

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        return self.model.select(items, int(self.cluster_of[check_user(user, self.n_users)]),
                                 t, rng)

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        self.model.update(items, int(self.cluster_of[check_user(user, self.n_users)]), action,
                          feedback, t)

    def cluster_labels(self) -> np.ndarray:
        return self._truth.copy()

    def params(self) -> dict[str, Any]:
        return {**self.model.params(), "n_users": self.n_users,
                "n_clusters": int(self.model.n_users), "oracle": True}

    @property
    def lockstep_ready(self) -> bool:
        """No batched twin: its seeds run one by one."""
        return False


def _split(settings: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: settings.pop(k) for k in keys if k in settings}


def _set_federation(dim: int, n_users: int, n_servers: int,
                    settings: dict[str, Any]) -> Policy:
    """`SetFederatedClub` from plain settings (see `make_policy`)."""
    growth = settings.pop("phase_growth", 1.15)
    sets = _split(settings, SET_KEYS)
    unknown = sorted(set(settings) - (_CONFIG_KEYS - {"alpha", "alpha2"}))
    if unknown:
        raise config_error("settings", unknown, "FclubConfig fields but alpha and alpha2, "
                           f"phase_growth and {list(SET_KEYS)} for fclub-dc-sets")
    config = FclubConfig(dim, n_users, n_servers, sync="delayed", detect=True, **settings)
    detection = SplitMergeClustering(dim, lam=config.lam, noise_scale=config.noise_scale,
                                     theta_bound=config.theta_bound, **sets)
    return SetFederatedClub(config, detection, phase_growth=growth)


def make_policy(name: str, *, dim: int, n_users: int, n_servers: int = 5,
                horizon: int | None = None, epsilon: float | None = None,
                delta: float | None = None, observer: Any = None,
                world_clusters: int | None = None, **settings: Any) -> Policy:
    """The algorithm `name` (one of ALGORITHMS) with keyword settings.

    Federated names take `FclubConfig` fields (alpha, alpha2, upload_threshold,
    download_threshold, lam, beta_scale, ...); "fclub-dc-sets" takes the same
    but alpha and alpha2, plus the `SplitMergeClustering` fields (SET_KEYS) and
    phase_growth; "cdp-fclub-dc" also needs
    horizon, epsilon, delta and takes the `CdpPlan` keys (calibration,
    detection_share, detection, failure, sampler, mechanism, schedule,
    batch).  Baselines take the radius keys and alpha (CLUB, SCLUB).  Unknown keys
    raise ConfigError.
    """
    settings = dict(settings)
    if name == "fclub-dc-sets":
        return _set_federation(dim, n_users, n_servers, settings)
    if name in _FEDERATED:
        plan_settings = _split(settings, _PLAN_KEYS)
        unknown = sorted(set(settings) - _CONFIG_KEYS)
        if unknown:
            raise config_error("settings", unknown, f"FclubConfig fields {sorted(_CONFIG_KEYS)}")
        config = FclubConfig(dim, n_users, n_servers, **_FEDERATED[name], **settings)
        plan = None
        if name == "cdp-fclub-dc":
            if horizon is None or epsilon is None or delta is None:
                raise config_error("(horizon, epsilon, delta)", (horizon, epsilon, delta),
                                   "all given for cdp-fclub-dc")
            plan = CdpPlan(epsilon, delta, horizon, dim, n_users,
                           item_bound=config.item_bound, **plan_settings)
        elif plan_settings:
            raise config_error("settings", sorted(plan_settings), f"no privacy keys for {name!r}")
        return FederatedClub(config, privacy=plan, observer=observer, name=name,
                             world_clusters=world_clusters)
    radius = _split(settings, _RADIUS_KEYS)
    if name in ("club-per-server", "sclub-per-server"):
        cls = CLUB if name == "club-per-server" else SCLUB
        extra = _split(settings, ("alpha", "alpha_p") if cls is SCLUB else ("alpha",))
        if settings:
            raise config_error("settings", sorted(settings), f"radius keys and alpha for {name}")
        return PerServer(lambda n: cls(dim, n, **radius, **extra), n_users, n_servers, name)
    raise config_error("name", name, f"one of {ALGORITHMS}")
