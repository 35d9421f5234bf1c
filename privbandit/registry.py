"""The algorithm registry: how a study finds an algorithm by name.

Each algorithm family registers one entry per algorithm from its own
`study` module with `register_algorithm`.  An entry *builds* a run and
never plays it: `build(config, streams) -> runtime.Setup` (the protocol and
the world it plays), where `config` holds `horizon`, `environment` (the
study's settings for the keys the entry declares, defaults filled) and every
declared parameter (given, from a preset, or its default; `epsilon`,
`delta`, `calibration`, `sampler` for private algorithms), and `streams` are
the run seed's generators (`runtime.seed_streams`: "world" for the hidden
world, "secrets" for what a protocol holds secretly; "rounds" and "policy"
belong to the runner).  The runner (`AlgorithmEntry.run`, `run_seeds`, the
study runner) derives the streams, plays the setup -- in lockstep for
several seeds when the protocol's class has a batched twin -- and records
the seed.

An entry declares its parameters and environment keys (`privbandit.schema.Param`:
name, type, default, allowed values, one line of doc) and may declare named
presets (e.g. "paper": the paper's settings); the study parser validates every
table against them, so `build` reads its keys without fallbacks or re-checks.
A private entry declares how it is audited beside its builder: its
`AuditProfile` (the small worlds that make it release, merge and split, its
flips, its black-box size, its canaries), which `privbandit.auditing` reads;
no audit keeps a table of entries.
Registration modules are imported lazily, so `privbandit` imports fast.
Your own algorithms join a study the same way: register them in a module and
name it in the environment variable `PRIVBANDIT_ALGORITHMS` (comma-separated
module names; worker processes inherit it).
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from privbandit.accounting.errors import require_extra

from .envs.neighbours import Flip
from .errors import config_error
from .privacy import SAMPLERS
from .result import RunResult
from .runtime import Setup, play_setup, run_setups, runs_in_lockstep, seed_int, seed_streams
from .schema import REQUIRED, CheckedConfig, Param, by_name, check_table, defaults, fill

# Modules whose import registers algorithms (one per algorithm family).
REGISTRATION_MODULES: tuple[str, ...] = (
    "privbandit.studies.baselines",
    "privbandit.fedmab.study",
    "privbandit.cascade.study",
    "privbandit.fclub.study",
    "privbandit.vertical.study",
    "privbandit.anonymous.study",
)


# What a deployment would use: a small delta and a floating-point-safe sampler
# when the algorithm takes one (the papers' settings live in presets).
DEFAULT_DELTA = 1e-5
SAFE_SAMPLER = "grid" if "grid" in SAMPLERS else "exact"


def privacy_params(*, delta: bool, calibrations: tuple[str, ...] = (),
                   sampler: bool = False) -> tuple[Param, ...]:
    """The privacy keys of a private entry: epsilon (required), and as it takes them
    delta (default DEFAULT_DELTA), calibration (default the first) and sampler."""
    out = [Param("epsilon", float, REQUIRED, "the privacy budget epsilon", range="(0, inf)")]
    if delta:
        out.append(Param("delta", float, DEFAULT_DELTA, "the privacy delta", range="(0, 1)"))
    if calibrations:
        out.append(Param("calibration", str, calibrations[0], "the noise calibration",
                         choices=tuple(calibrations)))
    if sampler:
        out.append(Param("sampler", str, SAFE_SAMPLER, "the noise sampler (grid and exact "
                         "are floating-point safe, fast is not)", choices=tuple(SAMPLERS)))
    return tuple(out)


def radius_params(*, beta: float | str | None = "oful",
                  theta_bound: bool = True) -> tuple[Param, ...]:
    """The UCB radius keys the linear policies share (their defaults: `policies.radius`);
    beta=None leaves beta out, theta_bound=False leaves S out."""
    out = [] if beta is None else [
        Param("beta", (float, str), beta, "confidence radius: a constant, or 'oful' "
              "(Abbasi-Yadkori et al.)", choices=("oful",), range="(0, inf)")]
    out += [
        Param("beta_scale", float, 1.0, "factor on the radius", range="(0, inf)"),
        Param("lam", float, 1.0, "ridge regulariser", range="(0, inf)"),
        Param("noise_scale", float, 0.5, "sub-Gaussian scale of the rewards", range="(0, inf)"),
        Param("confidence", float, 0.1, "failure probability of the radius", range="(0, 1)"),
    ]
    if theta_bound:
        out.append(Param("theta_bound", float, 1.0, "bound S on the preference norm",
                         range="(0, inf)"))
    out.append(Param("item_bound", float, 1.0, "largest item norm accepted", range="(0, inf)"))
    return tuple(out)


def release_params(mechanism: str, schedule: str) -> tuple[Param, ...]:
    """The keys of a continual release: mechanism, schedule, batch and growth, with these
    defaults."""
    from .private import GROWTH, MECHANISMS, SCHEDULES

    return (
        Param("mechanism", str, mechanism, "continual-release mechanism", choices=MECHANISMS),
        Param("schedule", str, schedule, "release schedule (data-independent)",
              choices=SCHEDULES),
        Param("batch", int, None, "rounds per release (default: horizon // 32; the first "
              "release of 'geometric', default 1)", range="[1, inf)"),
        Param("growth", float, GROWTH, "ratio of successive release rounds of 'geometric'",
              range="(1, inf)"),
    )


def guard_params(resolution: float = 0.2) -> tuple[Param, ...]:
    """The `private.GuardPlan` keys of a guarded federation (besides the privacy keys);
    `resolution`: the default gap the merge tests must be able to see (units merged may
    differ by less, which biases the federated model where clusters are not exact)."""
    return (
        *release_params("mf", "fixed"),
        Param("resolution", float, resolution, "resolution of the clustering tests",
              range="(0, inf)"),
        Param("level", float, 0.99, "level of the clustering tests", range="(0, 1)"),
        Param("miss", float, 1e-3, "miss probability of the clustering tests", range="(0, 1)"),
        Param("share", float, 0.1, "share of the confidence failure probability given to the "
              "federated model", range="(0, 1)"),
        Param("rate", float, 0.01, "share of rounds on the released track (public coin; the "
              "rest act on raw data and are never released)", range="(0, 1]"),
        Param("merged_rate", float, 0.2, "share of rounds released for a user whose "
              "released cluster spans other parties (the larger of it and rate applies)",
              range="(0, 1]"),
        Param("cap", int, 16, "records a user shares at rate before it stops unless its "
              "released cluster spans other parties", range="[1, inf)"),
    )


def split_merge_params(*, blocks: bool, phases: bool = True, resolution: float | None = None
                       ) -> tuple[Param, ...]:
    """The keys of split/merge detection over sets (`splitmerge.SplitMergeClustering` and
    the phases of `splitmerge.SetClusters`): the tests' levels and evidence, the bootstrap,
    the phase growth (`phases`: an entry that detects at phases, not at every release);
    `blocks`: whether units move in blocks (block_evidence); a number `resolution`: the
    default of the merges' power requirement (and its miss)."""
    out = [
        Param("merge_level", float, 0.99, "level of the merge test (pooled Hotelling T^2)",
              range="(0, 1)"),
        Param("split_level", float, 0.99, "level of the split test (bootstrapped best cut)",
              range="(0, 1)"),
        Param("unit_evidence", float, 6.907755278982137, "log-likelihood ratio a user needs to "
              "change cluster alone (ln 1000)", range="[0, inf)"),
    ]
    if blocks:
        out.append(Param("block_evidence", float, 1.0, "log-likelihood ratio a server's users "
                         "of one cluster need to change cluster together", range="[0, inf)"))
    out.append(Param("simulations", int, 24, "bootstrap data sets of the split test",
                     range="[0, inf)"))
    if phases:
        out.append(Param("phase_growth", float, 1.15, "phase t+1 starts when the rounds grow "
                         "by this factor (2: the paper's 2^s - 2)", range="(1, inf)"))
    if resolution is not None:
        out += [
            Param("resolution", float, resolution, "RMS prediction difference over the items "
                  "seen that a merge must have had the power to see", range="(0, inf)"),
            Param("miss", float, 1e-3, "probability of missing such a difference",
                  range="(0, 1)"),
        ]
    return tuple(out)
# What a guarded federation's audit worlds change: half the rounds shared, no cap, a coarse
# merge resolution, so that records are released early and units merge within a few hundred
# rounds (utility knobs: the statement is the same for every value).
GUARDED_AUDIT = {"rate": 0.5, "cap": 10**6, "resolution": 20.0}


@dataclass(frozen=True)
class AuditWorld:
    """A small world a private entry is audited on: `horizon` rounds, and the parameters
    (`params`) and `[environment]` settings (`environment`) that differ from the entry's
    defaults; `label` names it in reports when an entry has several.  Utility knobs
    only (rates, caps, resolutions, sizes): the privacy argument holds for every value."""

    horizon: int
    params: Mapping[str, Any] = field(default_factory=dict)
    environment: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""


@dataclass(frozen=True)
class CanaryRounds:
    """A one-run audit by canary user-rounds planted in the entry's own run
    (`Environment.planted`): `canaries` rounds of a `horizon`-round run, with `params` and
    `environment` over the first audit world's."""

    horizon: int
    canaries: int
    params: Mapping[str, Any] = field(default_factory=dict)
    environment: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AuditProfile:
    """How `privbandit.auditing` audits a private entry, declared beside its builder.

    worlds: the end-to-end audit's worlds (`AuditWorld`s; together they must make
    the entry take every public decision it has: release, move, split, merge),
    the first also the black-box and one-run audits' base; flips: None to choose
    them from each recorded run (the rounds its records were declared released
    in, those of units whose cluster spans parties, never-released rounds), or
    the fixed `Flip`s of a world whose neighbours are not rounds (epochs,
    anonymous draws); black_box: (horizon, Flip) of the black-box audit;
    canaries: the one-run audit, `CanaryRounds` or the family's own protocol, a
    callable `(epsilon, sampler) -> CanaryProtocol` audited against epsilon-DP (pure) per
    canary with the "snj" bound, or `-> (CanaryProtocol, Claim, method)` for another claim.
    """

    worlds: tuple[AuditWorld, ...]
    black_box: tuple[int, Flip]
    canaries: CanaryRounds | Callable[[float, Any], Any]
    flips: tuple[Flip, ...] | None = None

    def __post_init__(self) -> None:
        worlds = tuple(self.worlds)
        if not worlds or not all(isinstance(w, AuditWorld) for w in worlds):
            raise config_error("worlds", self.worlds, "one or more AuditWorlds")
        object.__setattr__(self, "worlds", worlds)
        horizon, flip = self.black_box
        if not isinstance(flip, Flip):
            raise config_error("black_box", self.black_box, "(horizon, Flip)")
        if not (isinstance(self.canaries, CanaryRounds) or callable(self.canaries)):
            raise config_error("canaries", self.canaries, "CanaryRounds or a callable "
                               "(epsilon, sampler) -> a CanaryProtocol")
        if self.flips is not None:
            object.__setattr__(self, "flips", tuple(self.flips))


@dataclass(frozen=True)
class AlgorithmEntry:
    """One registered algorithm.

    name: the key studies use; build: `(config, streams) -> runtime.Setup` (see the
    module docstring); private: whether it takes a privacy budget (`epsilon`, and
    `delta` when `needs_delta`); calibrations: the noise calibrations it offers;
    params: its parameters (`Param`s; a private entry that declares no `epsilon` gets
    `privacy_params` first); environment: the `[environment]` keys it reads;
    presets: named parameter values (e.g. "paper"); description: one line for
    listings; extras: `(module, extra)` pairs its runs import, checked when a study
    names it; reads: optional `settings -> keys`, the declared environment keys it
    reads given a study's settings (e.g. only its world setting's), default all;
    audit: how `privbandit.auditing` audits it (`AuditProfile`; every private entry
    of privbandit has one, and the audits fail an entry without); retired: names of
    parameters or presets the entry no longer has -> what replaced them (a config or a
    study naming one is refused with that, `refuse_retired`); neutral: `[environment]`
    keys other entries declare that do not change this one's runs (accepted in a study it
    shares with them, never passed to it).
    """

    name: str
    build: Callable[[dict[str, Any], dict[str, Any]], Setup]
    private: bool = False
    needs_delta: bool = False
    calibrations: tuple[str, ...] = ()
    params: tuple[Param, ...] = ()
    environment: tuple[Param, ...] = ()
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    description: str = ""
    extras: tuple[tuple[str, str], ...] = ()
    reads: Callable[[dict[str, Any]], Any] | None = None
    audit: AuditProfile | None = None
    retired: Mapping[str, str] = field(default_factory=dict)
    neutral: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        params = tuple(self.params)
        if self.private and "epsilon" not in by_name(params):
            params = privacy_params(delta=self.needs_delta, calibrations=self.calibrations) + params
        for table, declared in (("params", params), ("environment", self.environment)):
            names = [p.name for p in declared]
            if len(set(names)) != len(names) or {"horizon", "environment"} & set(names):
                raise config_error(f"{self.name} {table}", names,
                                   "distinct names other than 'horizon' and 'environment'")
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "environment", tuple(self.environment))
        if self.audit is not None and not isinstance(self.audit, AuditProfile):
            raise config_error(f"{self.name} audit", self.audit, "None or an AuditProfile")
        for preset, values in self.presets.items():
            check_table(f"preset {preset!r} of {self.name}", values, params)

    def setup(self, config: dict[str, Any], seed: Any,
              streams: dict[str, Any] | None = None) -> Setup:
        """The run of `config` on `seed`, built (`streams`: the seed's, when the caller
        derived them already)."""
        if not isinstance(config, CheckedConfig):
            config = self.check(config)
        built = self.build(dict(config), seed_streams(seed) if streams is None else streams)
        if not isinstance(built, Setup):
            raise config_error(f"{self.name}'s build", built, "a runtime.Setup")
        return built

    def check(self, config: dict[str, Any]) -> CheckedConfig:
        """`config` (a direct caller's) checked against the declarations, defaults filled:
        every parameter declared and allowed, required ones given, "horizon" given, the
        environment's keys declared."""
        if not isinstance(config, dict):
            raise config_error(f"{self.name} config", config, "a dict of parameters with "
                               "'horizon' and optionally 'environment'")
        params = {k: v for k, v in config.items() if k not in ("horizon", "environment")}
        self.refuse_retired(params, f"{self.name} config")
        if "horizon" not in config:
            raise config_error("horizon", None, "an integer >= 1 in the run's config")
        given = check_table(f"[algorithm.params] of {self.name}", params, self.params)
        missing = [p.name for p in self.params if p.required and p.name not in given]
        if missing:
            raise config_error(f"{self.name} config", sorted(params),
                               f"values for the required keys {missing}")
        environment = check_table("[environment]", config.get("environment") or {},
                                  self.environment, where="environment")
        for key in sorted(set(environment) - self.reads_environment(environment)):
            if environment[key] is not None:
                raise config_error(f"environment.{key}", environment[key],
                                   f"unset: {self.name} does not read it with these settings "
                                   f"(it reads {sorted(self.reads_environment(environment))})")
        return CheckedConfig(fill(given, self.params), horizon=config["horizon"],
                             environment=fill(environment, self.environment))

    def refuse_retired(self, names: Any, where: str) -> None:
        """A ConfigError naming the first of `names` (keys, or a preset's name) the entry
        retired, with what replaced it."""
        for name in names:
            if isinstance(name, str) and name in self.retired:
                raise config_error(f"{where}: {name}", name, self.retired[name])

    def run(self, config: dict[str, Any], seed: Any) -> RunResult:
        """Build and play one run of `config` on `seed` (an int or a SeedSequence)."""
        streams = seed_streams(seed)
        return play_setup(self.setup(config, seed, streams), streams, seed_int(seed))

    def run_seeds(self, config: dict[str, Any], seeds: list[Any]) -> list[RunResult]:
        """`run(config, seed)` for each seed: in lockstep when the built runs allow it
        (`runtime.run_setups`), with the same results."""
        return run_setups([self.setup(config, seed) for seed in seeds], seeds)

    def runs_in_lockstep(self, config: dict[str, Any], seed: Any) -> bool:
        """Whether `run_seeds` of `config` plays its seeds in lockstep (judged on `seed`'s
        run: the protocol's class has a batched twin that plays it, the world stacks)."""
        return runs_in_lockstep([self.setup(config, seed)])

    def reads_environment(self, settings: dict[str, Any]) -> set[str]:
        """The `[environment]` keys this entry reads when a study sets `settings`."""
        names = {p.name for p in self.environment}
        reads = names if self.reads is None else names & set(self.reads(settings))
        return reads | set(self.neutral)

    def check_extras(self) -> None:
        """Raise MissingExtraError (naming the extra to install) when a module the runs
        import is missing, so that a study fails before it runs anything."""
        for module, extra in self.extras:
            require_extra(module, extra, f"algorithm {self.name!r}")

    @property
    def defaults(self) -> dict[str, Any]:
        """The default of every parameter that has one."""
        return defaults(self.params)

    def describe(self) -> str:
        """Several lines for listings: the name, the doc, parameters, environment, presets."""
        lines = [f"{self.name}{' (private)' if self.private else ''}: {self.description}"]
        for title, declared in (("params", self.params), ("environment", self.environment)):
            if declared:
                lines.append(f"  [{title}]")
                lines.extend(f"    {p.describe()}" for p in declared)
        for preset, values in self.presets.items():
            shown = ", ".join(f"{k} = {v!r}" for k, v in values.items())
            lines.append(f"  preset {preset!r}: {shown}")
        lines.extend(f"  retired {name!r}: {instead}" for name, instead in self.retired.items())
        return "\n".join(lines)


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


# names that once meant an entry registered under another name: refused with the replacement
RETIRED = {"linucb-per-user": "linucb"}


def get_algorithm(name: str) -> AlgorithmEntry:
    """The entry registered as `name`, or a ConfigError listing what is registered (or, for
    a retired name, naming its replacement)."""
    found = algorithms().get(name)
    if found is None:
        if name in RETIRED:
            raise config_error(
                "algorithm", name, f"{RETIRED[name]!r}: {name!r} was the same algorithm under "
                f"a second name and is retired (use name = {RETIRED[name]!r})")
        raise config_error("algorithm", name, f"one of {sorted(_REGISTRY)}")
    return found
