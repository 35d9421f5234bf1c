"""The declarative study schema: each algorithm's parameters and environment keys.

A `Param` declares one key a study may set: its name, type, default, the
allowed values (`choices`) or interval (`range`, e.g. "(0, 1)", "[1, inf)")
and one line of doc.  The registry's entries declare their parameters and
environment keys as tuples of `Param`; the study parser checks every table of
a study file against them (`check_table`) and fills the defaults (`fill`), so
a family's code reads `settings["users"]` and keeps no fallback of its own.

One world vocabulary across families (`WORLD_VOCABULARY`): the `[environment]`
sizes are `dim`, `users`, `items`, `clusters`, `arms`, `servers`, `parties`;
an old spelling (`OLD_SPELLINGS`: "n_users", "agents", "n_items", ...) is an
error naming the new one.

An unknown key is an error naming the key, its table and the allowed keys,
with the closest allowed key as a suggestion; a value of the wrong type or
outside its range names the key and what is allowed.  A default of None
means "unset" (the algorithm decides, e.g. its number of epochs); TOML has no
null, so a study never writes None itself.
"""
from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError, config_error


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()  # the default of a key a study must set

WORLD_VOCABULARY = ("dim", "users", "items", "clusters", "arms", "servers", "parties")
# spellings the families used before the one vocabulary -> the key to write now
OLD_SPELLINGS = {"n_users": "users", "agents": "users", "n_agents": "users",
                 "n_items": "items", "n_clusters": "clusters", "n_arms": "arms",
                 "n_servers": "servers", "n_parties": "parties"}

_TYPE_WORDS = {int: "an integer", float: "a number", bool: "true or false", str: "a string",
               list: "a list"}
_INTERVAL = re.compile(r"^([\[(])\s*(-inf|[-+0-9.e]+)\s*,\s*(inf|[-+0-9.e]+)\s*([\])])$")


def _is(value: Any, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind is float:
        return isinstance(value, (int, float))
    return isinstance(value, kind)


@dataclass(frozen=True)
class Param:
    """One key of a study table: name, type(s), default, allowed values, doc."""

    name: str
    type: type | tuple[type, ...]
    default: Any = REQUIRED
    doc: str = ""
    choices: tuple[Any, ...] = ()
    range: str = ""

    def __post_init__(self) -> None:
        if self.range and not _INTERVAL.match(self.range):
            raise config_error(f"Param({self.name!r}).range", self.range,
                               "an interval such as '(0, 1)' or '[1, inf)'")
        if self.default is not REQUIRED and self.default is not None:
            self.check(self.default, "default")

    @property
    def types(self) -> tuple[type, ...]:
        return self.type if isinstance(self.type, tuple) else (self.type,)

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def allowed(self) -> str:
        """What the key accepts, in words (for messages and listings)."""
        words = []
        for kind in self.types:
            if kind is str and self.choices:
                words.append(f"one of {[c for c in self.choices if isinstance(c, str)]}")
            elif kind in (int, float) and self.range:
                words.append(f"{'a finite number' if kind is float else 'an integer'} "
                             f"{self._range_words()}")
            else:
                words.append(_TYPE_WORDS.get(kind, kind.__name__))
        return " or ".join(words)

    def _range_words(self) -> str:
        left, low, high, right = _INTERVAL.match(self.range).groups()
        if high == "inf":
            return f"{'>=' if left == '[' else '>'} {low}"
        if low == "-inf":
            return f"{'<=' if right == ']' else '<'} {high}"
        return f"in {self.range}"

    def _in_range(self, value: float) -> bool:
        if not self.range:
            return True
        left, low, high, right = _INTERVAL.match(self.range).groups()
        lo, hi = float(low), float(high)
        return ((lo <= value) if left == "[" else (lo < value)) and (
            (value <= hi) if right == "]" else (value < hi))

    def check(self, value: Any, where: str) -> Any:
        """`value` if the key accepts it, else a ConfigError naming `where`.`name`."""
        if value is None and self.default is None:  # unset, as the default is
            return value
        kind = next((k for k in self.types if _is(value, k)), None)
        ok = kind is not None
        if ok and kind in (int, float):
            ok = math.isfinite(value) and self._in_range(value)
        if ok and self.choices and any(isinstance(c, kind) for c in self.choices):
            ok = value in self.choices
        if not ok:
            raise config_error(f"{where}.{self.name}", value, self.allowed())
        return value

    def describe(self) -> str:
        """One line for listings: name, what is allowed, default, doc."""
        default = ("required" if self.required else "unset by default" if self.default is None
                   else f"default {self.default!r}")
        return f"{self.name}: {self.allowed()}; {default}. {self.doc}".rstrip()


def by_name(params: Iterable[Param]) -> dict[str, Param]:
    return {p.name: p for p in params}


def unknown_key(key: str, table: str, allowed: Iterable[str]) -> ConfigError:
    """The error for `key` not declared in `table` (as written: "[environment]"), with the
    closest allowed key."""
    allowed = sorted(allowed)
    new = OLD_SPELLINGS.get(key)
    if new is not None and new in allowed:
        return ConfigError(f"{key!r} in {table} is an old spelling: write {new!r} (the world "
                           f"vocabulary of every family: {', '.join(WORLD_VOCABULARY)})")
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ";"
    listed = ", ".join(allowed) if allowed else "none"
    return ConfigError(f"unknown key {key!r} in {table}{hint} allowed: {listed}")


def check_table(table: str, values: Mapping[str, Any], params: Iterable[Param],
                where: str | None = None) -> dict[str, Any]:
    """`values` checked against `params`: every key declared, every value allowed.

    table names the table in messages ("[environment]"); where prefixes a bad
    value's key ("environment" gives "environment.agents must be ...").
    """
    declared = by_name(params)
    for key in values:
        if key not in declared:
            raise unknown_key(key, table, declared)
    return {k: declared[k].check(v, where or table.strip('[]')) for k, v in values.items()}


class CheckedConfig(dict):
    """A run's config (parameters, "horizon", "environment") already checked against its
    entry's declarations and filled with their defaults: what a study's runs carry
    (`studies.spec.RunSpec.config`), so an entry never checks it again."""


def fill(values: Mapping[str, Any], params: Iterable[Param]) -> dict[str, Any]:
    """Every declared key: the value given, else the default (required keys must be given)."""
    out = {}
    for p in params:
        if p.name in values:
            out[p.name] = values[p.name]
        elif not p.required:
            out[p.name] = p.default
    return out


def defaults(params: Iterable[Param]) -> dict[str, Any]:
    """The default of every key that has one."""
    return fill({}, params)
