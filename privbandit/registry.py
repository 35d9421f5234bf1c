"""The algorithm registry: how a study finds an algorithm by name.

Each algorithm family registers one entry per algorithm from its own
`study` module with `register_algorithm`.  A study entry runs one
configuration on one seed: `run(config, seed) -> RunResult`, where `config`
holds `horizon`, `environment` (settings shared by the study) and the
algorithm's parameters (including `epsilon`, `delta`, `calibration` for
private algorithms), and `seed` is a `numpy.random.SeedSequence`.
Registration modules are imported lazily, so `privbandit` imports fast.
Your own algorithms join a study the same way: register them in a module and
name it in the environment variable `PRIVBANDIT_ALGORITHMS` (comma-separated
module names; worker processes inherit it).
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import config_error

# Modules whose import registers algorithms (one per algorithm family).
REGISTRATION_MODULES: tuple[str, ...] = (
    "privbandit.centralized",
    "privbandit.fedmab.study",
    "privbandit.cascade.study",
    "privbandit.fclub.study",
    "privbandit.vertical.study",
    "privbandit.anonymous.study",
)


@dataclass(frozen=True)
class AlgorithmEntry:
    """One registered algorithm.

    name: the key studies use; run: `(config, seed) -> RunResult`; private:
    whether it takes a privacy budget (`epsilon`, and `delta` when
    `needs_delta`); calibrations: the noise calibrations it offers;
    defaults: parameter defaults; description: one line for listings;
    lockstep: optional `(config, seeds) -> [RunResult]`, the runs of several
    seeds of one configuration in one vectorized pass, each equal to
    `run(config, seed)` (`runtime.lockstep`); studies use it when present.
    """

    name: str
    run: Callable[[dict[str, Any], Any], Any]
    private: bool = False
    needs_delta: bool = False
    calibrations: tuple[str, ...] = ()
    defaults: dict[str, Any] = field(default_factory=dict)
    description: str = ""
    lockstep: Callable[[dict[str, Any], list[Any]], list[Any]] | None = None


_REGISTRY: dict[str, AlgorithmEntry] = {}
_loaded = False


def register_algorithm(entry: AlgorithmEntry) -> AlgorithmEntry:
    """Add `entry`; a second entry under the same name is an error."""
    if entry.name in _REGISTRY and _REGISTRY[entry.name] is not entry:
        raise config_error("name", entry.name, "a name not registered yet")
    _REGISTRY[entry.name] = entry
    return entry


def _load() -> None:
    global _loaded
    if not _loaded:
        extra = os.environ.get("PRIVBANDIT_ALGORITHMS", "")
        for module in (*REGISTRATION_MODULES, *filter(None, extra.split(","))):
            importlib.import_module(module.strip())
        _loaded = True


def algorithms() -> dict[str, AlgorithmEntry]:
    """Every registered algorithm, by name."""
    _load()
    return dict(sorted(_REGISTRY.items()))


def get_algorithm(name: str) -> AlgorithmEntry:
    """The entry registered as `name`, or a ConfigError listing what is registered."""
    found = algorithms().get(name)
    if found is None:
        raise config_error("algorithm", name, f"one of {sorted(_REGISTRY)}")
    return found
