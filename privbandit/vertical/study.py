"""Study entries of the seed 003 family: VFUCB, VFTS and their partial-local baselines.

The world is seed 003's synthetic one, drawn from the run seed's "world"
stream: config["environment"] may set dim (100), n_items (10), noise_var
(0.05) and the split, either "widths" or "parties" (5, an even split).  The
centralized baselines are the core entries "linucb" and "lints" on the same
environment settings.  Algorithm keys: the policy's keywords (beta, lam, v,
...), "seal_traffic" (VF entries, default true) and "active_share" (partial
entries: the active party's fraction of the features, default 0.2).
"""
from __future__ import annotations

import functools
from typing import Any

from ..envs.vertical import FeatureSplit, VerticalSplit, seed003_environment
from ..errors import config_error
from ..policies import LinTS, LinUCB
from ..registry import _REGISTRY, AlgorithmEntry, register_algorithm
from ..result import RunResult
from ..runtime import seed_streams
from .runs import run_partial_local, run_vertical
from .ties import TieTolerant

ENVIRONMENT_KEYS = ("dim", "n_items", "noise_var", "widths", "parties")
DEFAULTS: dict[str, dict[str, Any]] = {"ucb": {"beta": 0.5}, "ts": {"v": 0.01}}


def _policy(family: str, dim: int, params: dict[str, Any]):
    try:
        if family == "ucb":
            return TieTolerant(LinUCB(dim, **params))
        return LinTS(dim, **params)
    except TypeError as exc:  # an unknown keyword
        raise config_error("parameters", sorted(params), f"valid keywords ({exc})") from None


def _world(settings: dict[str, Any], seed: Any):
    unknown = sorted(set(settings) - set(ENVIRONMENT_KEYS))
    if unknown:
        raise config_error("environment", unknown, f"keys among {ENVIRONMENT_KEYS}")
    dim = settings.get("dim", 100)
    world = seed003_environment(dim, settings.get("n_items", 10),
                                rng=seed_streams(seed)["world"],
                                noise_var=settings.get("noise_var", 0.05))
    if "widths" in settings:
        return world, FeatureSplit(settings["widths"])
    return world, FeatureSplit.equal(dim, settings.get("parties", 5))


def run_entry(kind: str, family: str, config: dict[str, Any], seed: Any) -> RunResult:
    """Run one configuration: kind "vf" (the protocol) or "partial" (active columns only)."""
    config = dict(config)
    horizon = config.pop("horizon", None)
    if horizon is None:
        raise config_error("horizon", None, "an integer >= 1 in the run's config")
    world, split = _world(dict(config.pop("environment", {})), seed)
    if kind == "vf":
        seal = config.pop("seal_traffic", True)
        policy = _policy(family, split.dim, {**DEFAULTS[family], **config})
        return run_vertical(policy, VerticalSplit(world, split), horizon, seed,
                            seal_traffic=seal)
    share = FeatureSplit.with_active_share(
        split.dim, split.parties, config.pop("active_share", 0.2)
    )
    policy = _policy(family, share.widths[0], {**DEFAULTS[family], **config})
    return run_partial_local(policy, world, share, horizon, seed)


ENTRIES = (
    AlgorithmEntry("vfucb", functools.partial(run_entry, "vf", "ucb"), defaults=DEFAULTS["ucb"],
                   description="seed 003: LinUCB over orthogonal masks, M parties (lossless)"),
    AlgorithmEntry("vfts", functools.partial(run_entry, "vf", "ts"), defaults=DEFAULTS["ts"],
                   description="seed 003: LinTS over orthogonal masks across M parties"),
    AlgorithmEntry("partial-linucb", functools.partial(run_entry, "partial", "ucb"),
                   defaults=DEFAULTS["ucb"],
                   description="seed 003 baseline: LinUCB on the active party's features only"),
    AlgorithmEntry("partial-lints", functools.partial(run_entry, "partial", "ts"),
                   defaults=DEFAULTS["ts"],
                   description="seed 003 baseline: LinTS on the active party's features only"),
)
for _entry in ENTRIES:
    if _entry.name not in _REGISTRY:
        register_algorithm(_entry)
