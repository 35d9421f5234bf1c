"""The centralized, non-private baselines registered for studies (imported lazily by the registry).

Entries: "linucb" (one model per user), "linucb-shared" (one model for all
users, seed 000's Homo), "lints", "club", "sclub".  A run builds the world
from the study's `[environment]` table (`envs.factory.make_environment`) with
the run seed's "world" stream and plays `horizon` rounds with `privbandit.run`;
every other config key is passed to the policy's constructor.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .envs.factory import make_environment
from .errors import config_error
from .policies import CLUB, SCLUB, LinTS, LinUCB, Policy
from .registry import _REGISTRY, AlgorithmEntry, register_algorithm
from .result import RunResult
from .runtime import run, seed_streams

_RESERVED = ("horizon", "environment")


def _runner(name: str, build: Callable[..., Policy]) -> Callable[[dict[str, Any], Any], RunResult]:
    def run_entry(config: dict[str, Any], seed: Any) -> RunResult:
        if "horizon" not in config:
            raise config_error("horizon", None, "the number of rounds")
        env = make_environment(config.get("environment", {}), seed_streams(seed)["world"])
        params = {k: v for k, v in config.items() if k not in _RESERVED}
        try:
            policy = build(env.dim, env.n_users, **params)
        except TypeError as exc:  # an unknown parameter name
            raise config_error(
                f"{name} parameters", sorted(params), f"valid keywords ({exc})"
            ) from None
        return run(policy, env, config["horizon"], seed, algorithm=name)

    return run_entry


ENTRIES = (
    AlgorithmEntry("linucb", _runner("linucb", LinUCB),
                   description="LinUCB, one model per user (non-private)"),
    AlgorithmEntry("linucb-shared",
                   _runner("linucb-shared", lambda d, n, **kw: LinUCB(d, n, shared=True, **kw)),
                   description="LinUCB, one model shared by all users (non-private)"),
    AlgorithmEntry("lints", _runner("lints", LinTS),
                   description="linear Thompson sampling, one model per user (non-private)"),
    AlgorithmEntry("club", _runner("club", CLUB),
                   description="CLUB, graph-based clustering of bandits (non-private)"),
    AlgorithmEntry("sclub", _runner("sclub", SCLUB),
                   description="SCLUB, set-based clustering with split/merge (non-private)"),
)

for _entry in ENTRIES:
    if _entry.name not in _REGISTRY:
        register_algorithm(_entry)
