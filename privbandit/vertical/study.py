"""Study entries of the seed 003 family: VFUCB, VFTS and their partial-local baselines.

The world is seed 003's synthetic one, drawn from the run seed's "world"
stream: config["environment"] may set dim (100), items (10), noise_var
(0.05) and the split, either "widths" or "parties" (5, an even split):
`ENVIRONMENT` declares them.  The
centralized baselines are the core entries "linucb" and "lints" on the same
environment settings.  Algorithm keys: the policy's keywords (beta, lam, v,
...), "seal_traffic" (VF entries, default true) and "active_share" (partial
entries: the active party's fraction of the features, default 0.2).
"""
from __future__ import annotations

import functools
from typing import Any

from ..envs.vertical import FeatureSplit, VerticalSplit, seed003_environment
from ..policies import LinTS, LinUCB
from ..registry import _REGISTRY, AlgorithmEntry, radius_params, register_algorithm
from ..runtime import Setup
from ..schema import Param, defaults
from .ties import TieTolerant

ENVIRONMENT = (
    Param("dim", int, 100, "feature dimension d", range="[1, inf)"),
    Param("items", int, 10, "items offered per round", range="[1, inf)"),
    Param("noise_var", float, 0.05, "variance of the reward noise", range="[0, inf)"),
    Param("widths", list, None, "the parties' feature widths (default: an even split)"),
    Param("parties", int, 5, "number of parties M of an even split", range="[1, inf)"),
)
_LAM = Param("lam", float, 1.0, "ridge regulariser", range="(0, inf)")
_BOUND = Param("item_bound", float, 1.0, "largest item norm accepted", range="(0, inf)")
POLICY = {"ucb": radius_params(beta=0.5),
          "ts": (Param("v", float, 0.01, "posterior scale", range="(0, inf)"), _LAM, _BOUND)}
SEAL = Param("seal_traffic", bool, True, "seal the parties' messages (authenticated encryption)")
SHARE = Param("active_share", float, 0.2, "the active party's fraction of the features",
              range="(0, 1]")


NAMES = {("vf", "ucb"): "vfucb", ("vf", "ts"): "vfts", ("partial", "ucb"): "partial-linucb",
         ("partial", "ts"): "partial-lints"}


def _policy(family: str, dim: int, params: dict[str, Any]):
    return TieTolerant(LinUCB(dim, **params)) if family == "ucb" else LinTS(dim, **params)


def _world(settings: dict[str, Any], world_rng: Any):
    s = {**defaults(ENVIRONMENT), **settings}
    world = seed003_environment(s["dim"], s["items"], rng=world_rng, noise_var=s["noise_var"])
    if s["widths"] is not None:
        return world, FeatureSplit(s["widths"])
    return world, FeatureSplit.equal(s["dim"], s["parties"])


def build_run(kind: str, family: str, config: dict[str, Any], streams: dict[str, Any]) -> Setup:
    """One run: kind "vf" (the protocol, its mask from the "secrets" stream) or "partial"
    (active columns only), on seed 003's world from the "world" stream.

    Without the `crypto` extra the protocol (kind "vf") raises `MissingExtraError`, which
    names the extra to install (the entries register without it)."""
    from .runs import partial_local_setup, vertical_setup
    params = {**defaults(_params(kind, family)), **config}
    horizon = params.pop("horizon")
    world, split = _world(params.pop("environment", {}), streams["world"])
    if kind == "vf":
        seal = params.pop("seal_traffic")
        policy = _policy(family, split.dim, params)
        return vertical_setup(policy, VerticalSplit(world, split), horizon, streams["secrets"],
                              seal_traffic=seal)
    share = FeatureSplit.with_active_share(split.dim, split.parties, params.pop("active_share"))
    policy = _policy(family, share.widths[0], params)
    return partial_local_setup(policy, world, share, horizon)


def _params(kind: str, family: str) -> tuple[Param, ...]:
    return (*POLICY[family], SEAL if kind == "vf" else SHARE)


def _entry(kind: str, family: str, description: str) -> AlgorithmEntry:
    return AlgorithmEntry(NAMES[kind, family], functools.partial(build_run, kind, family),
                          params=_params(kind, family), environment=ENVIRONMENT,
                          description=description,
                          extras=(("cryptography", "crypto"),) if kind == "vf" else ())


ENTRIES = (
    _entry("vf", "ucb", "seed 003: LinUCB over orthogonal masks, M parties (lossless)"),
    _entry("vf", "ts", "seed 003: LinTS over orthogonal masks across M parties"),
    _entry("partial", "ucb", "seed 003 baseline: LinUCB on the active party's features only"),
    _entry("partial", "ts", "seed 003 baseline: LinTS on the active party's features only"),
)
for _entry in ENTRIES:
    if _entry.name not in _REGISTRY:
        register_algorithm(_entry)
