"""Study specifications: a grid of algorithms x privacy budgets x seeds, from TOML.

A study file looks like::

    name = "my-study"
    horizon = 20000
    seeds = 3                 # seed indices 0..2 (or an explicit list)
    base_seed = 2026
    max_points = 200          # points kept of each regret curve

    [environment]             # settings shared by every run
    users = 20

    [[algorithm]]
    name = "cdp-fclub-dc-paper"  # a registered algorithm
    label = "CDP-FCLUB-DC"    # optional
    preset = "paper"          # optional: the entry's named parameter values
    [algorithm.params]        # fixed parameters (override the preset)
    alpha = 1.5
    [algorithm.grid]          # lists, expanded as a product (override the preset)
    epsilon = [0.5, 1, 2]
    calibration = ["tight", "paper"]

    [break_even]              # optional: where a private algorithm pays its way
    private = "CDP-FCLUB-DC"  # a private algorithm's label (with an epsilon grid)
    baseline = "alone"        # the label of a single-cell algorithm to beat
    federated = "FCLUB-DC"    # optional: the single-cell federated reference of FGR

Every key is validated on load against the registry's declarations
(`privbandit.schema`): [algorithm.params] and [algorithm.grid] against the
algorithm's parameters, [environment] against the keys the study's
algorithms read (each algorithm receives its own keys, defaults filled).  An
unknown key names its table, the allowed keys and the closest one (an old
spelling of the world vocabulary names the new one); a key that one of the
study's algorithms would ignore is refused, naming the algorithm, so a
setting never reaches only part of a study; a bad value names the key and
what is allowed.
Runs sharing a seed index share the run seed (and so the environment), which
pairs the comparison across algorithms and budgets; a run's seed depends only
on `base_seed` and its index, never on where or in what order it runs.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ..errors import ConfigError, config_error
from ..registry import AlgorithmEntry, get_algorithm
from ..schema import CheckedConfig, by_name, check_table, fill, unknown_key

_TOP_KEYS = {"name", "horizon", "seeds", "base_seed", "max_points", "environment", "algorithm",
             "break_even"}
_BREAK_EVEN_KEYS = {"private", "baseline", "federated"}
_ALG_KEYS = {"name", "label", "preset", "params", "grid"}


class BreakEven(NamedTuple):
    """The [break_even] table: the private label, the baseline it must beat, and the
    federated reference of the federation gain recovered (optional); see `paired`."""

    private: str
    baseline: str
    federated: str | None = None


@dataclass(frozen=True)
class RunSpec:
    """One run: an algorithm, one grid cell, one seed index."""

    study: str
    algorithm: str
    label: str
    cell: dict[str, Any]
    params: dict[str, Any]
    seed_index: int
    base_seed: int
    horizon: int
    environment: dict[str, Any] = field(default_factory=dict)

    def config(self) -> CheckedConfig:
        """What the algorithm's `run(config, seed)` receives (checked on load)."""
        return CheckedConfig(self.params, **self.cell, horizon=self.horizon,
                             environment=dict(self.environment))

    @property
    def key(self) -> str:
        """A hash of everything that determines the run's result."""
        blob = json.dumps(
            [self.algorithm, self.config(), self.seed_index, self.base_seed],
            sort_keys=True, default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def run_id(self) -> str:
        """A readable, file-safe, unique name: label, cell values, seed, key."""
        cell = "_".join(f"{k}-{v}" for k, v in sorted(self.cell.items()))
        raw = f"{self.label}__{cell}__s{self.seed_index}__{self.key[:8]}"
        return re.sub(r"[^A-Za-z0-9._=-]+", "-", raw)

    def to_dict(self) -> dict[str, Any]:
        return {
            "study": self.study, "algorithm": self.algorithm, "label": self.label,
            "cell": self.cell, "params": self.params, "seed_index": self.seed_index,
            "base_seed": self.base_seed, "horizon": self.horizon,
            "environment": self.environment,
        }


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    label: str
    params: dict[str, Any]
    grid: dict[str, tuple]
    environment: dict[str, Any] = field(default_factory=dict)

    def cells(self) -> list[dict[str, Any]]:
        keys = sorted(self.grid)
        combos = itertools.product(*(self.grid[k] for k in keys))
        return [dict(zip(keys, values, strict=True)) for values in combos]


@dataclass(frozen=True)
class StudySpec:
    name: str
    horizon: int
    seeds: tuple[int, ...]
    base_seed: int
    max_points: int
    environment: dict[str, Any]
    algorithms: tuple[AlgorithmSpec, ...]
    break_even: BreakEven | None = None

    def with_overrides(self, base_seed: int | None = None,
                       horizon: int | None = None) -> StudySpec:
        """This study with `base_seed` and/or `horizon` replaced (None keeps the study's)."""
        changes = {}
        if base_seed is not None:
            changes["base_seed"] = _int("base_seed", base_seed, 0)
        if horizon is not None:
            changes["horizon"] = _int("horizon", horizon, 1)
        return dataclasses.replace(self, **changes)

    def runs(self) -> list[RunSpec]:
        """Every run of the grid, in a fixed order."""
        return [
            RunSpec(self.name, alg.name, alg.label, cell, dict(alg.params), s,
                    self.base_seed, self.horizon, dict(alg.environment))
            for alg in self.algorithms for cell in alg.cells() for s in self.seeds
        ]


def load_study(path: str | Path) -> StudySpec:
    """Read and validate a study TOML file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"study file {str(path)!r} cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"study file {str(path)!r} is not UTF-8 text (a binary file?): "
                          f"{exc.reason} at byte {exc.start}") from None
    return parse_study(text, source=str(path))


def parse_study(text: str, source: str = "<study>") -> StudySpec:
    """Parse and validate a study from TOML text."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source} is not valid TOML: {exc}") from None
    return study_from_dict(raw)


def study_from_dict(raw: dict[str, Any]) -> StudySpec:
    """Validate a study given as a dict (the parsed TOML)."""
    for key in raw:
        if key not in _TOP_KEYS:
            raise unknown_key(key, "the study's top level", _TOP_KEYS)
    name = raw.get("name", "study")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        raise config_error("name", name, "a non-empty name of letters, digits, '.', '_', '-'")
    horizon = _int("horizon", raw.get("horizon"), 1)
    seeds_raw = raw.get("seeds", 3)
    if isinstance(seeds_raw, list):
        seeds = tuple(_int("seeds[]", s, 0) for s in seeds_raw)
        if not seeds or len(set(seeds)) != len(seeds):
            raise config_error("seeds", seeds_raw, "a non-empty list of distinct integers >= 0")
    else:
        seeds = tuple(range(_int("seeds", seeds_raw, 1)))
    base_seed = _int("base_seed", raw.get("base_seed", 2026), 0)
    max_points = _int("max_points", raw.get("max_points", 200), 2)
    environment = _table("environment", raw.get("environment", {}))
    algs = raw.get("algorithm")
    if not isinstance(algs, list) or not algs:
        raise config_error("algorithm", algs, "at least one [[algorithm]] table")
    entries = [_entry(i, a) for i, a in enumerate(algs)]
    _check_environment(environment, entries)
    specs = tuple(_algorithm(i, a, e, environment)
                  for i, (a, e) in enumerate(zip(algs, entries, strict=True)))
    labels = [a.label for a in specs]
    if len(set(labels)) != len(labels):
        raise config_error("algorithm.label", labels, "distinct labels (set `label`)")
    break_even = _break_even(raw.get("break_even"), specs)
    return StudySpec(name, horizon, seeds, base_seed, max_points, environment, specs, break_even)


def _check_environment(environment: dict[str, Any], entries: list[AlgorithmEntry]) -> None:
    """Every key of [environment] is read by every algorithm of the study."""
    declared = {p.name for entry in entries for p in entry.environment}
    reads = {entry.name: entry.reads_environment(environment) for entry in entries}
    for key in environment:
        if key not in declared:
            raise unknown_key(key, "[environment]", declared)
        for name, keys in reads.items():
            if key not in keys:
                raise ConfigError(
                    f"[environment] key {key!r} would be ignored by algorithm {name!r}, which "
                    f"reads only: {', '.join(sorted(keys)) or 'none'}; set a key only in "
                    "studies whose algorithms all read it (run the others in a study of "
                    "their own)")


def _break_even(raw: Any, specs: tuple[AlgorithmSpec, ...]) -> BreakEven | None:
    """[break_even] private = label, baseline = label, federated = label (optional): labels
    of this study, the first a private algorithm with an epsilon grid, the others single
    cells (the federated reference other than the baseline)."""
    if raw is None:
        return None
    table = _table("break_even", raw)
    for key in table:
        if key not in _BREAK_EVEN_KEYS:
            raise unknown_key(key, "[break_even]", _BREAK_EVEN_KEYS)
    by_label = {a.label: a for a in specs}
    private, baseline = table.get("private"), table.get("baseline")
    alg = by_label.get(private)
    if alg is None or not get_algorithm(alg.name).private or "epsilon" not in alg.grid:
        choices = [a.label for a in specs if get_algorithm(a.name).private and "epsilon" in a.grid]
        raise config_error("break_even.private", private,
                           f"the label of a private algorithm with an epsilon grid: {choices}")
    single = [a.label for a in specs if not a.grid]
    if baseline not in single:
        raise config_error("break_even.baseline", baseline,
                           f"the label of an algorithm without a grid: {single}")
    federated = table.get("federated")
    if federated is not None and (federated not in single or federated == baseline):
        raise config_error("break_even.federated", federated,
                           "the label of an algorithm without a grid other than the baseline: "
                           f"{[label for label in single if label != baseline]}")
    return BreakEven(private, baseline, federated)


def _entry(i: int, raw: Any) -> AlgorithmEntry:
    if not isinstance(raw, dict):
        raise config_error(f"algorithm[{i}]", raw, "a table")
    for key in raw:
        if key not in _ALG_KEYS:
            raise unknown_key(key, f"[[algorithm]] #{i}", _ALG_KEYS)
    entry = get_algorithm(raw.get("name"))
    entry.check_extras()
    return entry


def _algorithm(i: int, raw: dict[str, Any], entry: AlgorithmEntry,
               environment: dict[str, Any]) -> AlgorithmSpec:
    where = f"algorithm[{i}]"
    label = raw.get("label", entry.name)
    if not isinstance(label, str) or not label:
        raise config_error(f"{where}.label", label, "a non-empty string")
    entry.refuse_retired([*raw.get("params", {}), *raw.get("grid", {}), raw.get("preset")],
                         where)
    given = check_table(f"[algorithm.params] of {entry.name}",
                        _table(f"{where}.params", raw.get("params", {})), entry.params, where)
    grid = {}
    for key, values in _table(f"{where}.grid", raw.get("grid", {})).items():
        values = values if isinstance(values, list) else [values]
        if not values:
            raise config_error(f"{where}.grid.{key}", values, "a non-empty list")
        grid[key] = tuple(check_table(f"[algorithm.grid] of {entry.name}", {key: v},
                                      entry.params, where)[key] for v in values)
    overlap = set(grid) & set(given)
    if overlap:
        raise config_error(f"{where}.grid", sorted(overlap), "keys not also set in params")
    values = {**_preset(where, entry, raw.get("preset")), **given}
    params = {k: v for k, v in fill(values, entry.params).items() if k not in grid}
    for p in entry.params:
        if p.required and p.name not in params and p.name not in grid:
            raise config_error(f"{where}.{p.name}", None,
                               f"set in [algorithm.params] or [algorithm.grid] "
                               f"({entry.name}: {p.doc}; {p.allowed()})")
    env = fill(check_table("[environment]", {k: v for k, v in environment.items()
                                           if k in by_name(entry.environment)},
                           entry.environment), entry.environment)
    return AlgorithmSpec(entry.name, label, params, grid, env)


def _preset(where: str, entry: AlgorithmEntry, name: Any) -> dict[str, Any]:
    if name is None:
        return {}
    if name not in entry.presets:
        raise config_error(f"{where}.preset", name,
                           f"one of {sorted(entry.presets)} ({entry.name}'s presets)"
                           if entry.presets else f"absent ({entry.name} has no presets)")
    return dict(entry.presets[name])


def _int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise config_error(name, value, f"an integer >= {minimum}")
    return value


def _table(name: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise config_error(name, value, "a table")
    return dict(value)
