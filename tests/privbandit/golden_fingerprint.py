"""Fingerprints of runs: decisions compared exactly, floats to a stated tolerance.

A run's decisions reach its world through the environment's methods: an
action per round (`act`), or, for worlds played many rounds at a time, the
arms or assignments of each step (`regret`, `play`); detected clusters reach
it through `detection_error(labels)` at the loop's checkpoints.  The numbers
the decisions are taken on come from a few shared functions (`PROBES`: the
UCB scores, the cascade's scores, the confidence radii of the cluster tests
and of the federated MAB).  `recording()` wraps all of these while a run is
computed and keeps what they receive (integer arrays) and return (floats),
so the fingerprint holds the run's decisions and a sum of the scores they
were taken on, at no cost to runs outside this test.  A radius scaled by
1 + 1e-6 moves those sums by about 1e-7 even when no decision flips.

Floats (regret, reward, epsilon spent, detection error, score sums) are
compared with `TOLERANCE`.  Why 1e-9: with the same decisions, another CPU
(another BLAS kernel) only sums the products of a context and a parameter in
another order, which moves each value by a few units in the last place
(2.2e-16 relative); a sum of n <= 30,000 non-negative such values then moves
by at most n * 2.2e-16 ~ 7e-12 relative (measured under the Haswell and
Prescott kernels against SkylakeX: below 1e-15).  1e-9 is 100 times that
bound and 100 times below what a change of 1e-6 in a radius moves.
"""
from __future__ import annotations

import functools
import hashlib
import importlib
import math
import sys
from contextlib import contextmanager
from typing import Any

import numpy as np

TOLERANCE = 1e-9  # relative; also absolute, for values near 0 (the values are O(1) or larger)
CURVE_POINTS = 4  # cumulative regret at the end of each quarter of the horizon
# environment methods -> (kind, leading arguments not recorded: self, and act's round t)
WORLD = {"act": ("actions", 2), "play": ("actions", 1), "regret": ("actions", 1),
         "detection_error": ("labels", 1)}
PROBES = {  # name -> (module, attribute): the numbers decisions are taken on
    "ucb_scores": ("privbandit.kernels", "ucb_scores"),
    "club_confidence": ("privbandit.kernels", "club_confidence"),
    "cascade_scores": ("privbandit.cascade.algorithm", "_CascadeAgents.scores"),
    "mab_radius": ("privbandit.fedmab.schedule", "confidence_radius"),
}


class Recorder:
    """What one run handed its world (integer arrays by kind: "actions", "labels") and
    what the probes returned (number of calls and sum of absolute finite values)."""

    def __init__(self) -> None:
        self.arrays: dict[str, list[np.ndarray]] = {"actions": [], "labels": []}
        self.sums: dict[str, list[Any]] = {name: [0, 0.0] for name in PROBES}
        # only outermost calls: a wrapper world delegates to its inner one
        self._depth = dict.fromkeys([*self.arrays, *self.sums], 0)

    def wrap(self, method: Any, kind: str, skip: int | None = None) -> Any:
        """`method` recording into `kind`: its arguments after `skip` (world methods) or,
        with skip None, its returned values (probes)."""
        @functools.wraps(method)
        def recorded(*args: Any, **kwargs: Any) -> Any:
            self._depth[kind] += 1
            try:
                out = method(*args, **kwargs)
            finally:
                self._depth[kind] -= 1
            if self._depth[kind] == 0:
                if skip is None:
                    self._add(kind, out)
                else:
                    self._keep(kind, args[skip:])
            return out
        return recorded

    def _keep(self, kind: str, args: tuple) -> None:
        for arg in args:
            if arg is not None:
                values = np.asarray(arg).astype("<i8", casting="same_kind").ravel()
                # labels: each change once (how often the loop measures them is not the
                # algorithm's arithmetic: a checkpoint skips unchanged labels)
                seen = self.arrays[kind]
                if kind == "labels" and seen and np.array_equal(seen[-1], values):
                    continue
                seen.append(values)

    def _add(self, name: str, out: Any) -> None:
        values = np.abs(np.asarray(out, dtype=np.float64))
        self.sums[name][0] += 1
        self.sums[name][1] += float(values[np.isfinite(values)].sum())

    def digest(self, kind: str) -> list[Any]:
        """[number of arrays, sha256 of their sizes and values]: equal only if every
        array is equal."""
        sha = hashlib.sha256()
        for arr in self.arrays[kind]:
            sha.update(np.array([arr.size], dtype="<i8").tobytes())
            sha.update(arr.tobytes())
        return [len(self.arrays[kind]), sha.hexdigest()[:16]]

    def scores(self) -> dict[str, list[Any]]:
        """The probes called in this run: [calls, sum of absolute values]."""
        return {name: list(s) for name, s in self.sums.items() if s[0]}


def _environment_classes() -> list[type]:
    from privbandit.envs.base import Environment

    found, todo = [], [Environment]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def _patches(recorder: Recorder) -> list[tuple[Any, str, Any, Any]]:
    """(owner, attribute, original, wrapper) of every world method and probe."""
    found = []
    for cls in _environment_classes():
        for name, (kind, skip) in WORLD.items():
            if name in vars(cls):
                found.append((cls, name, vars(cls)[name], skip, kind))
    for probe, (module, path) in PROBES.items():
        owner: Any = importlib.import_module(module)
        *outer, name = path.split(".")
        try:
            for part in outer:
                owner = getattr(owner, part)
            found.append((owner, name, getattr(owner, name), None, probe))
        except AttributeError:
            raise AssertionError(f"probe {probe!r}: {module} has no {path} any more; "
                                 "name the function that computes it now in PROBES") from None
    return [(owner, name, original, recorder.wrap(original, kind, skip))
            for owner, name, original, skip, kind in found]


def _our_modules() -> list[Any]:
    return [m for n, m in list(sys.modules.items()) if n.split(".", 1)[0] == "privbandit"]


def _swap(old: Any, new: Any) -> None:
    """Every privbandit module's name bound to `old` (a function imported by name) -> `new`."""
    for module in _our_modules():
        for attr, value in list(vars(module).items()):
            if value is old:
                setattr(module, attr, new)


@contextmanager
def recording():
    """A `Recorder` of every world's watched methods and every probe while the block runs."""
    importlib.import_module("privbandit.registry").algorithms()  # every family imported
    recorder = Recorder()
    patches = _patches(recorder)
    for owner, name, original, wrapper in patches:
        if isinstance(owner, type):
            setattr(owner, name, wrapper)
        else:
            _swap(original, wrapper)
    try:
        yield recorder
    finally:
        for owner, name, original, wrapper in reversed(patches):
            if isinstance(owner, type):
                setattr(owner, name, original)
            else:
                _swap(wrapper, original)


def _sha(values: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(values, dtype="<i8").tobytes()).hexdigest()[:16]


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def fingerprint(compute: Any) -> dict[str, Any]:
    """The fingerprint of the run `compute()` returns (a `RunResult`): exact integer
    fields (decisions, detected clusters, communication, releases) and float fields."""
    with recording() as recorder:
        result = compute()
    comm = result.comm or {}
    horizon = result.horizon
    ends = [horizon * (q + 1) // CURVE_POINTS - 1 for q in range(CURVE_POINTS)]
    return {
        "horizon": horizon,
        "actions": recorder.digest("actions"),
        "labels": recorder.digest("labels"),
        "scores": recorder.scores(),
        "comm": [_int(comm.get(key)) for key in ("messages", "bytes", "rounds")],
        "comm_rounds": None if result.comm_rounds is None
        else [int(result.comm_rounds.size), _sha(result.comm_rounds)],
        "releases": [int(led["releases"]) for led in result.ledgers],
        "epsilon_spent": [float(led["epsilon_spent"]) for led in result.ledgers],
        "regret_curve": [float(v) for v in result.cumulative_regret()[ends]],
        "reward": float(result.reward.sum()),
        "cluster_error": None if result.cluster_error is None
        else [float(v) for v in result.cluster_error],
    }


def differences(expected: Any, actual: Any, field: str = "") -> list[str]:
    """Where `actual` differs from `expected`: floats beyond `TOLERANCE`, anything else
    (integers, hashes, lengths, keys) at all; one line per difference, naming the field."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        if expected.keys() != actual.keys():
            return [f"{field or 'fingerprint'}: keys {sorted(expected)} expected, "
                    f"got {sorted(actual)} (compared exactly)"]
        return [d for key in expected
                for d in differences(expected[key], actual[key], f"{field}.{key}".lstrip("."))]
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{field}: expected {expected}, got {actual} (lengths differ)"]
        return [d for i, (e, a) in enumerate(zip(expected, actual, strict=True))
                for d in differences(e, a, f"{field}[{i}]")]
    if isinstance(expected, float) and isinstance(actual, float):
        if math.isclose(expected, actual, rel_tol=TOLERANCE, abs_tol=TOLERANCE):
            return []
        return [f"{field}: expected {expected!r}, got {actual!r} (relative difference "
                f"{_relative(expected, actual):.3g} > tolerance {TOLERANCE:g})"]
    if type(expected) is not type(actual) or expected != actual:
        return [f"{field}: expected {expected!r}, got {actual!r} (compared exactly)"]
    return []


def _relative(expected: float, actual: float) -> float:
    return abs(expected - actual) / max(abs(expected), abs(actual), TOLERANCE)
