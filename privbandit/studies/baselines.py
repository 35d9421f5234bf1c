"""The centralized, non-private baselines registered for studies (imported lazily by the registry).

Entries: "linucb" (one model per user; it also runs in federated studies,
whose `servers` key does not change it), "linucb-shared" (one model for all
users, seed 000's Homo), "lints", "club", "sclub".  An entry builds the world
from the study's `[environment]` table (`envs.factory.world_from`) with
the run seed's "world" stream; every other config key (the declared
parameters) is passed to the policy's constructor.  The runner plays the
seeds of one LinUCB, LinTS, CLUB or SCLUB configuration in lockstep
(`runtime.lockstep`) when the worlds stack (linear worlds of one shape).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..envs.factory import ENVIRONMENT, keys_read, world_from
from ..policies import CLUB, SCLUB, LinTS, LinUCB, Policy
from ..registry import _REGISTRY, AlgorithmEntry, radius_params, register_algorithm
from ..runtime import Setup
from ..schema import Param

_RESERVED = ("horizon", "environment")


def _builder(name: str, build: Callable[..., Policy]) -> Callable[..., Setup]:
    def build_run(config: dict[str, Any], streams: dict[str, Any]) -> Setup:
        """The policy and its world, drawn from the "world" stream."""
        env = world_from(config["environment"], streams["world"])
        params = {k: v for k, v in config.items() if k not in _RESERVED}
        return Setup(build(env.dim, env.n_users, **params), env, config["horizon"],
                     algorithm=name)

    return build_run


# the policies' keywords and their defaults (tests compare them with the signatures)
LINUCB = radius_params()
LINTS = (Param("v", float, 0.1, "posterior scale", range="(0, inf)"),
         Param("lam", float, 1.0, "ridge regulariser", range="(0, inf)"),
         Param("item_bound", float, 1.0, "largest item norm accepted", range="(0, inf)"))
ALPHA = Param("alpha", float, 1.5, "edge-deletion factor", range="(0, inf)")
ALPHA_P = Param("alpha_p", float, 1.0, "SCLUB's split/merge factor", range="(0, inf)")


def _entry(name: str, build: Callable[..., Policy], params: tuple[Param, ...],
           description: str, neutral: tuple[str, ...] = ()) -> AlgorithmEntry:
    return AlgorithmEntry(name, _builder(name, build), params=params, environment=ENVIRONMENT,
                          reads=keys_read, description=description, neutral=neutral)


ENTRIES = (
    _entry("linucb", LinUCB, LINUCB, "LinUCB (OFUL), one model per user (non-private); the "
           "per-user baseline of federated studies too",
           # one model per user is the same algorithm wherever its users sit
           neutral=("servers",)),
    _entry("linucb-shared", lambda d, n, **kw: LinUCB(d, n, shared=True, **kw), LINUCB,
           "LinUCB, one model shared by all users (non-private)"),
    _entry("lints", LinTS, LINTS, "linear Thompson sampling, one model per user (non-private)"),
    _entry("club", CLUB, (ALPHA, *LINUCB),
           "CLUB, graph-based clustering of bandits (non-private)"),
    _entry("sclub", SCLUB, (ALPHA, ALPHA_P, *LINUCB),
           "SCLUB, set-based clustering with split/merge (non-private)"),
)

for _entry in ENTRIES:
    if _entry.name not in _REGISTRY:
        register_algorithm(_entry)
