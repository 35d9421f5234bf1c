"""Registration of the FCLUB family for studies (`privbandit.registry`).

Names: "fclub", "fclub-dc", "cdp-fclub-dc" (private: epsilon, delta,
calibration "tight" | "paper"), "cdp-fclub-dc+" (private: epsilon, delta and
the `GuardPlan` keys: mechanism, schedule, batch, ...), "club-per-server", "sclub-per-server" (the
seed's CLUB and SCLUB baselines; "club" and "sclub" are the centralised
versions registered by `privbandit.centralized`), "linucb-per-user",
"homo", "homo-dc".  A run builds its world from the study's `environment`
table (`envs.factory.make_environment`: seed 000's synthetic setting unless
told otherwise; `servers` is L) and plays `horizon` rounds.

Pairing: `runtime.seed_streams(seed)` splits the run's SeedSequence the same way
for every algorithm -- "world" builds the hidden preferences, "rounds" draws
arrivals, items and reward noise, "policy" feeds the algorithm (and its
privacy noise) -- so runs sharing a seed share the environment and the round
stream, whatever the algorithm or budget.
"""
from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from ..envs.factory import make_environment
from ..errors import config_error
from ..registry import AlgorithmEntry, register_algorithm
from ..result import RunResult
from ..runtime import run, seed_streams
from .baselines import make_policy
from .config import FclubConfig
from .guarded import GuardedFederatedClub, GuardPlan
from .privacy import CALIBRATIONS

DEFAULT_SERVERS = 5
# the public code's settings (notes/seed-clarifications.md, seed 000)
FEDERATED_DEFAULTS = {"alpha": 1.5, "alpha2": 2.0, "upload_threshold": 1.01,
                      "download_threshold": 1.01}
PRIVATE_DEFAULTS = {**FEDERATED_DEFAULTS, "delta": 1e-5, "calibration": "tight",
                    "detection_share": 0.5}
# Named settings, ready for the registry's presets.  "public-code": the ridge of the
# authors' code (lam = 2; the defaults keep the paper's lam = 1), for FCLUB and FCLUB-DC.
PRESETS: dict[str, dict[str, Any]] = {"public-code": {**FEDERATED_DEFAULTS, "lam": 2.0}}
GUARDED_DEFAULTS = {"alpha": 1.5, "delta": 1e-5, "mechanism": "mf", "schedule": "fixed"}
_GUARD_KEYS = tuple(f.name for f in fields(GuardPlan) if f.name not in ("epsilon", "delta",
                                                                          "horizon"))
_DESCRIPTIONS = {
    "fclub": "FCLUB (seed 000): phase-based detection, every observation shared at once",
    "fclub-dc": "FCLUB-DC (seed 000): asynchronous det-ratio uploads/downloads (U, D)",
    "cdp-fclub-dc": "CDP-FCLUB-DC (seed 000): FCLUB-DC with tree-noised uploads, "
                    "(epsilon, delta, L, m)-CDP",
    "cdp-fclub-dc+": "guarded private federation: CLUB per server, refined by noisy "
                     "continual releases of other servers' users (record-level DP)",
    "club-per-server": "CLUB (Gentile et al. 2014) run separately on each local server",
    "sclub-per-server": "SCLUB (Li et al. 2019) run separately on each local server",
    "linucb-per-user": "LinUCB (OFUL) with one model per user",
    "homo": "Homo: FCLUB with every user in one cluster",
    "homo-dc": "Homo-DC: FCLUB-DC with every user in one cluster",
}


def run_algorithm(name: str, config: dict[str, Any], seed: Any) -> RunResult:
    """Run the registered algorithm `name` on one study configuration and seed.

    The world comes from the study's `environment` table
    (`envs.factory.make_environment`, seed 000's synthetic setting by default);
    `servers` (default 5) is the number of local servers L.
    """
    settings = dict(config)
    horizon = settings.pop("horizon", None)
    if horizon is None:
        raise config_error("horizon", None, "an integer >= 1 in the run's config")
    table = dict(settings.pop("environment", {}))
    servers = table.get("servers", DEFAULT_SERVERS)
    epsilon, delta = settings.pop("epsilon", None), settings.pop("delta", None)
    env = make_environment(table, seed_streams(seed)["world"])
    if name == "cdp-fclub-dc":  # Definition 1's m: the number of clusters of the world
        truth = env.true_clusters()
        settings["world_clusters"] = None if truth is None else int(np.unique(truth).size)
    if name == "cdp-fclub-dc+":
        plan = GuardPlan(epsilon, delta, horizon,
                         **{k: settings.pop(k) for k in _GUARD_KEYS if k in settings})
        policy = GuardedFederatedClub(FclubConfig(env.dim, env.n_users, servers, **settings), plan)
    else:
        policy = make_policy(name, dim=env.dim, n_users=env.n_users, n_servers=servers,
                             horizon=horizon, epsilon=epsilon, delta=delta, **settings)
    return run(policy, env, horizon, seed, algorithm=name)


def _runner(name: str):
    def run_named(config: dict[str, Any], seed: Any) -> RunResult:
        return run_algorithm(name, config, seed)

    run_named.__name__ = f"run_{name.replace('-', '_')}"
    return run_named


def _defaults(name: str) -> dict[str, Any]:
    if name == "cdp-fclub-dc":
        return dict(PRIVATE_DEFAULTS)
    if name == "cdp-fclub-dc+":
        return dict(GUARDED_DEFAULTS)
    if name in ("fclub", "fclub-dc", "homo", "homo-dc"):
        return dict(FEDERATED_DEFAULTS)
    return {"alpha": 1.5} if name in ("club-per-server", "sclub-per-server") else {}


def _entries() -> list[AlgorithmEntry]:
    out = []
    for name, text in _DESCRIPTIONS.items():
        private = name.startswith("cdp-")
        out.append(AlgorithmEntry(
            name, _runner(name), private=private, needs_delta=private,
            calibrations=CALIBRATIONS if name == "cdp-fclub-dc" else (), defaults=_defaults(name),
            description=text))
    return out


ENTRIES = tuple(register_algorithm(e) for e in _entries())
