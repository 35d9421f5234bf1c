"""The centralized, non-private baselines registered for studies (imported lazily by the registry).

Entries: "linucb" (one model per user), "linucb-shared" (one model for all
users, seed 000's Homo), "lints", "club", "sclub".  A run builds the world
from the study's `[environment]` table (`envs.factory.make_environment`) with
the run seed's "world" stream and plays `horizon` rounds with `privbandit.run`;
every other config key (the declared parameters) is passed to the policy's
constructor.  The seeds of one LinUCB, LinTS, CLUB or SCLUB configuration run
in lockstep (`runtime.lockstep`) when the worlds stack (linear worlds of one
shape), else one after the other.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .envs.factory import ENVIRONMENT, keys_read, make_environment
from .errors import config_error
from .policies import CLUB, SCLUB, LinTS, LinUCB, Policy
from .registry import _REGISTRY, AlgorithmEntry, radius_params, register_algorithm
from .result import RunResult
from .runtime import run, seed_streams
from .runtime.lockstep import run_replicates
from .schema import Param

_RESERVED = ("horizon", "environment")


def _setup(name: str, build: Callable[..., Policy], config: dict[str, Any], seed: Any):
    """(policy, world) of one run: the world from the seed's "world" stream."""
    if "horizon" not in config:
        raise config_error("horizon", None, "the number of rounds")
    env = make_environment(config.get("environment", {}), seed_streams(seed)["world"])
    params = {k: v for k, v in config.items() if k not in _RESERVED}
    try:
        return build(env.dim, env.n_users, **params), env
    except TypeError as exc:  # an unknown parameter name
        raise config_error(
            f"{name} parameters", sorted(params), f"valid keywords ({exc})"
        ) from None


def _runner(name: str, build: Callable[..., Policy]) -> Callable[[dict[str, Any], Any], RunResult]:
    def run_entry(config: dict[str, Any], seed: Any) -> RunResult:
        policy, env = _setup(name, build, config, seed)
        return run(policy, env, config["horizon"], seed, algorithm=name)

    return run_entry


def _lockstep(name: str, build: Callable[..., Policy]
              ) -> Callable[[dict[str, Any], list[Any]], list[RunResult]]:
    def run_entries(config: dict[str, Any], seeds: list[Any]) -> list[RunResult]:
        pairs = [_setup(name, build, config, seed) for seed in seeds]
        return run_replicates([p for p, _ in pairs], [e for _, e in pairs], config["horizon"],
                              seeds, algorithm=name)

    return run_entries


# the policies' keywords and their defaults (tests compare them with the signatures)
LINUCB = radius_params()
LINTS = (Param("v", float, 0.1, "posterior scale", range="(0, inf)"),
         Param("lam", float, 1.0, "ridge regulariser", range="(0, inf)"),
         Param("item_bound", float, 1.0, "largest item norm accepted", range="(0, inf)"))
ALPHA = Param("alpha", float, 1.5, "edge-deletion factor", range="(0, inf)")
ALPHA_P = Param("alpha_p", float, 1.0, "SCLUB's split/merge factor", range="(0, inf)")


def _entry(name: str, build: Callable[..., Policy], params: tuple[Param, ...],
           description: str, lockstep: bool = False) -> AlgorithmEntry:
    return AlgorithmEntry(name, _runner(name, build), params=params, environment=ENVIRONMENT,
                          reads=keys_read,
                          description=description,
                          lockstep=_lockstep(name, build) if lockstep else None)


ENTRIES = (
    _entry("linucb", LinUCB, LINUCB, "LinUCB, one model per user (non-private)",
           lockstep=True),
    _entry("linucb-shared", lambda d, n, **kw: LinUCB(d, n, shared=True, **kw), LINUCB,
           "LinUCB, one model shared by all users (non-private)", lockstep=True),
    _entry("lints", LinTS, LINTS, "linear Thompson sampling, one model per user (non-private)",
           lockstep=True),
    _entry("club", CLUB, (ALPHA, *LINUCB),
           "CLUB, graph-based clustering of bandits (non-private)", lockstep=True),
    _entry("sclub", SCLUB, (ALPHA, ALPHA_P, *LINUCB),
           "SCLUB, set-based clustering with split/merge (non-private)", lockstep=True),
)

for _entry in ENTRIES:
    if _entry.name not in _REGISTRY:
        register_algorithm(_entry)
