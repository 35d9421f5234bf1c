"""Build an environment from a study's `[environment]` table.

Keys (all optional): `setting` ("seed000" default, "seed001", "clustered",
"ratings"), `dim`, `users`, `clusters`, `items` (items per round), `gap`,
`list_len` (seed001 / ratings cascade), `kind`, `item_dist`, `reward`,
`noise_sd` (clustered), `path`, `format`, `top_users`, `top_items` (ratings).
Keys read by federated algorithms rather than by the world (`servers`,
`parties`) are allowed and ignored here; any other key is an error.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import config_error
from .base import Environment
from .clustered import clustered_linear_environment, seed000_environment, seed001_environment
from .ratings import ratings_environment

SETTINGS = ("seed000", "seed001", "clustered", "ratings")
ALGORITHM_KEYS = frozenset({"servers", "parties"})
_KEYS = {
    "seed000": {"dim", "users", "clusters", "items", "gap"},
    "seed001": {"dim", "users", "clusters", "items", "list_len"},
    "clustered": {"dim", "users", "clusters", "items", "gap", "kind", "item_dist", "reward",
                  "noise_sd"},
    "ratings": {"path", "format", "top_users", "top_items", "dim", "users", "clusters", "items",
                "list_len"},
}


def make_environment(settings: dict[str, Any], rng: np.random.Generator) -> Environment:
    """The environment described by `settings`, its hidden world drawn from `rng`."""
    if not isinstance(settings, dict):
        raise config_error("environment", settings, "a table of settings")
    setting = settings.get("setting", "seed000")
    if setting not in SETTINGS:
        raise config_error("environment.setting", setting, f"one of {SETTINGS}")
    unknown = set(settings) - _KEYS[setting] - ALGORITHM_KEYS - {"setting"}
    if unknown:
        raise config_error(
            "environment", sorted(unknown), f"keys among {sorted(_KEYS[setting])} for {setting}"
        )
    s = settings
    if setting == "seed000":
        return seed000_environment(
            rng, n_users=s.get("users", 20), n_clusters=s.get("clusters", 4),
            dim=s.get("dim", 10), n_items=s.get("items", 10), gap=s.get("gap", 0.0),
        )
    if setting == "seed001":
        return seed001_environment(
            rng, n_users=s.get("users", 40), n_clusters=s.get("clusters", 5),
            dim=s.get("dim", 20), n_items=s.get("items", 200), list_len=s.get("list_len", 4),
        )
    if setting == "clustered":
        return clustered_linear_environment(
            s.get("users", 20), s.get("clusters", 4), s.get("dim", 10), s.get("items", 10), rng,
            kind=s.get("kind", "sphere"), items=s.get("item_dist", "sphere"),
            gap=s.get("gap", 0.0), reward=s.get("reward", "bernoulli"),
            noise_sd=s.get("noise_sd", 0.1),
        )
    if "path" not in s:
        raise config_error("environment.path", None, "the path of a ratings file")
    return ratings_environment(
        s["path"], rng, format=s.get("format"), top_users=s.get("top_users"),
        top_items=s.get("top_items"), dim=s.get("dim", 20), n_users=s.get("users", 40),
        n_clusters=s.get("clusters", 10), items_per_round=s.get("items", 200),
        list_len=s.get("list_len"),
    )
