"""Build an environment from a study's `[environment]` table.

`ENVIRONMENT` declares the keys (`privbandit.schema.Param`): `setting`
("seed000" default, "seed001", "clustered", "ratings"), `dim`, `users`,
`clusters`, `items` (items per round), `gap`, `list_len` (seed001 / ratings
cascade), `kind`, `item_dist`, `reward`, `noise_sd` (clustered), `path`,
`format`, `top_users`, `top_items` (ratings).  Which keys a setting reads and
their defaults depend on the setting (`SETTING_DEFAULTS`), so the declared
defaults are None ("the setting's").  A key the setting does not read is an
error naming the keys it reads (`keys_read`), as is an undeclared key: no
key is silently ignored.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import config_error
from ..schema import Param, check_table
from .base import Environment
from .clustered import (
    PREFERENCE_KINDS,
    clustered_linear_environment,
    seed000_environment,
    seed001_environment,
)
from .linear import REWARD_MODELS
from .ratings import ratings_environment

SETTINGS = ("seed000", "seed001", "clustered", "ratings")
_BY_SETTING = "; default: the setting's"
ENVIRONMENT: tuple[Param, ...] = (
    Param("setting", str, "seed000", "the world: seed 000's or 001's synthetic one, a "
          "clustered linear one, or a ratings file", choices=SETTINGS),
    Param("dim", int, None, "feature dimension d" + _BY_SETTING, range="[1, inf)"),
    Param("users", int, None, "number of users" + _BY_SETTING, range="[1, inf)"),
    Param("clusters", int, None, "number of hidden clusters" + _BY_SETTING, range="[1, inf)"),
    Param("items", int, None, "items offered per round" + _BY_SETTING, range="[1, inf)"),
    Param("gap", float, None, "margin of the best item (seed000, clustered)", range="[0, inf)"),
    Param("list_len", int, None, "cascade list length (seed001, ratings)", range="[1, inf)"),
    Param("kind", str, None, "cluster preference geometry (clustered)",
          choices=PREFERENCE_KINDS),
    Param("item_dist", str, None, "item distribution (clustered)"),
    Param("reward", str, None, "reward model (clustered)", choices=REWARD_MODELS),
    Param("noise_sd", float, None, "reward noise sd (clustered, gaussian)", range="[0, inf)"),
    Param("path", str, None, "the ratings file (ratings; required there)"),
    Param("format", str, None, "the ratings file's format (ratings; default: guessed)"),
    Param("top_users", int, None, "most active users kept (ratings; default 1000, fewer "
          "with a warning if the file has fewer)", range="[1, inf)"),
    Param("top_items", int, None, "most rated items kept (ratings; default 1000, fewer "
          "with a warning if the file has fewer)", range="[1, inf)"),
)
# what each setting reads, with its defaults (None: the builder's own choice)
SETTING_DEFAULTS: dict[str, dict[str, Any]] = {
    "seed000": {"dim": 10, "users": 20, "clusters": 4, "items": 10, "gap": 0.0},
    "seed001": {"dim": 20, "users": 40, "clusters": 5, "items": 200, "list_len": 4},
    "clustered": {"dim": 10, "users": 20, "clusters": 4, "items": 10, "gap": 0.0,
                  "kind": "sphere", "item_dist": "sphere", "reward": "bernoulli",
                  "noise_sd": 0.1},
    "ratings": {"path": None, "format": None, "top_users": None, "top_items": None, "dim": 20,
                "users": 40, "clusters": 10, "items": 200, "list_len": None},
}


def keys_read(settings: dict[str, Any]) -> frozenset[str]:
    """The keys of `settings` the world it describes reads: "setting" and the keys of
    its setting (all declared keys when the setting is not one of SETTINGS, which
    `make_environment` then refuses)."""
    setting = settings.get("setting") or ENVIRONMENT[0].default
    if setting not in SETTING_DEFAULTS:
        return frozenset(p.name for p in ENVIRONMENT)
    return frozenset(("setting", *SETTING_DEFAULTS[setting]))


def make_environment(settings: dict[str, Any], rng: np.random.Generator) -> Environment:
    """The environment described by `settings`, its hidden world drawn from `rng`.

    Keys set to None count as absent (a study fills every declared key)."""
    if not isinstance(settings, dict):
        raise config_error("environment", settings, "a table of settings")
    given = check_table("[environment]", {k: v for k, v in settings.items() if v is not None},
                        ENVIRONMENT)
    setting = given.get("setting", ENVIRONMENT[0].default)
    for key, value in given.items():
        if key != "setting" and key not in SETTING_DEFAULTS[setting]:
            raise config_error(f"environment.{key}", value, f"unset: setting {setting!r} "
                               f"reads only {', '.join(['setting', *SETTING_DEFAULTS[setting]])}")
    return world_from(given, rng)


def world_from(settings: dict[str, Any], rng: np.random.Generator) -> Environment:
    """`make_environment` for settings already checked (a study's, or an entry's config:
    `registry.AlgorithmEntry.check`); keys set to None count as absent."""
    given = {k: v for k, v in settings.items() if v is not None}
    setting = given.pop("setting", ENVIRONMENT[0].default)
    s = {**SETTING_DEFAULTS[setting], **given}
    if setting == "seed000":
        return seed000_environment(rng, n_users=s["users"], n_clusters=s["clusters"],
                                   dim=s["dim"], n_items=s["items"], gap=s["gap"])
    if setting == "seed001":
        return seed001_environment(rng, n_users=s["users"], n_clusters=s["clusters"],
                                   dim=s["dim"], n_items=s["items"], list_len=s["list_len"])
    if setting == "clustered":
        return clustered_linear_environment(
            s["users"], s["clusters"], s["dim"], s["items"], rng, kind=s["kind"],
            items=s["item_dist"], gap=s["gap"], reward=s["reward"], noise_sd=s["noise_sd"],
        )
    if s["path"] is None:
        raise config_error("environment.path", None, "the path of a ratings file")
    return ratings_environment(
        s["path"], rng, format=s["format"], top_users=s["top_users"], top_items=s["top_items"],
        dim=s["dim"], n_users=s["users"], n_clusters=s["clusters"], items_per_round=s["items"],
        list_len=s["list_len"],
    )
