"""Registration of the FCLUB family for studies (`privbandit.registry`).

Names and what each declares (`Param`s; `privbandit algorithms NAME` lists them):

- "fclub", "fclub-dc": seed 000's FCLUB and FCLUB-DC (`FEDERATED`: alpha,
  alpha2, the det-ratio triggers U and D, the radius keys); preset
  "public-code" (lam = 2);
- "cdp-fclub-dc" (private, `RELEASED`): acting on released statistics only
  (`fclub.released`): epsilon, delta, sampler, the radius keys, failure,
  mechanism, schedule, batch, growth, resolution, clustering and split/merge's
  merge_level, split_level, unit_evidence, block_evidence, simulations, and
  release with its cluster-sum keys detection_share, history_share,
  history_limit, settle; its retired spellings (`RETIRED`: act_on, preset
  "paper") are refused by name;
- "cdp-fclub-dc-paper" (private, `PAPER`): seed 000's path, acting on raw
  buffers between uploads (a guarantee over realised sequences only): epsilon,
  delta, calibration, sampler, the `FEDERATED` keys, detection_share,
  detection, failure, mechanism, schedule, batch, growth; preset "paper"
  (delta 0.1, the paper's node formula, tree noise every round);
- "cdp-fclub-dc+" (private, `GUARDED`): epsilon, delta, sampler, the
  `GuardPlan` keys (`registry.guard_params`: mechanism, schedule, batch,
  growth, resolution, level, miss, share, rate, merged_rate, cap) and the
  `FEDERATED` keys;
- "club-per-server", "sclub-per-server" (the seed's CLUB and SCLUB baselines;
  "club" and "sclub" are the centralised versions registered by
  `privbandit.studies.baselines`, whose "linucb" is the per-user LinUCB
  baseline here too);
- "homo", "homo-dc": FCLUB and FCLUB-DC with every user in one cluster;
- "fclub-dc-sets" (`SETS`): FCLUB-DC's sharing with split/merge detection over
  sets (`fclub.sets`: the federation recommended at population scale);
- "oracle-clusters" (NOT an algorithm: LinUCB pooled per true cluster across
  all servers, told the world's hidden clusters -- the ceiling of any
  federation's gain, so studies can show it beside the real ones; its
  description and its params' "oracle" flag say so).

An entry builds its world from the study's `environment` table
(`envs.factory.make_environment`: seed 000's synthetic setting unless told
otherwise; `servers` is L) and its policy (`build_run`); the runner plays it,
the seeds of one configuration in lockstep where the policy's batched twin
(`fclub.lockstep`) plays it.

Pairing: the runner splits the run's SeedSequence the same way for every
algorithm (`runtime.seed_streams`) -- "world" builds the hidden preferences,
"rounds" draws arrivals, items and reward noise, "policy" feeds the algorithm
(and its privacy noise) -- so runs sharing a seed share the environment and
the round stream, whatever the algorithm or budget.
"""
from __future__ import annotations

import functools
from dataclasses import fields
from typing import Any

import numpy as np

from ..envs.factory import ENVIRONMENT, keys_read, world_from
from ..envs.neighbours import Flip
from ..errors import config_error
from ..registry import (
    GUARDED_AUDIT,
    AlgorithmEntry,
    AuditProfile,
    AuditWorld,
    CanaryRounds,
    guard_params,
    privacy_params,
    radius_params,
    register_algorithm,
    release_params,
    split_merge_params,
)
from ..runtime import Setup
from ..schema import Param
from .baselines import ClusterOracle, make_policy
from .config import FclubConfig
from .guarded import RESOLUTION, GuardedFederatedClub, GuardPlan
from .privacy import CALIBRATIONS, DETECTIONS
from .released import (
    CLUSTERINGS,
    RELEASES,
    SPLIT_MERGE_KEYS,
    ReleasedFederatedClub,
    ReleasedPlan,
)

# the public code's settings (notes/seed-clarifications.md, seed 000)
FEDERATED = (
    Param("alpha", float, 1.5, "local edge-deletion factor (eq. 3)", range="(0, inf)"),
    Param("alpha2", float, 2.0, "global merge factor (eq. 4)", range="(0, inf)"),
    Param("upload_threshold", float, 1.01, "det-ratio upload trigger U (eq. 5)",
          range="(1, inf)"),
    Param("download_threshold", float, 1.01, "det-ratio download trigger D (eq. 6)",
          range="(1, inf)"),
    *radius_params(beta=None),
)
# "fclub-dc-sets": FCLUB-DC's triggers and radius, the split/merge tests, the phase schedule
SETS = (*FEDERATED[2:], *split_merge_params(blocks=True))
FAILURE = Param("failure", float, 0.1, "failure probability of the noise bounds",
                range="(0, 1)")
# "cdp-fclub-dc-paper": seed 000's CDP-FCLUB-DC, acting on its raw buffers between uploads
PAPER = (
    *privacy_params(delta=True, calibrations=CALIBRATIONS, sampler=True), *FEDERATED,
    Param("detection_share", float, 0.5, "share of the budget spent on cluster detection",
          range="(0, 1)"),
    Param("detection", str, "private", "detection: noised statistics, the same read by noise-aware "
          "tests, or raw (then NOT CDP)",
          choices=DETECTIONS),
    FAILURE,
    *release_params("mf", "geometric"),  # each user's stream ('paper': tree, every-round)
)
# "cdp-fclub-dc": acting on released statistics only (reward-only releases, public Gram)
RELEASED = (
    *privacy_params(delta=True, sampler=True), *radius_params(beta=None), FAILURE,
    *release_params("mf", "geometric"),
    Param("resolution", float, 0.2, "resolution of the merge tests (clustering 'cliques')",
          range="(0, inf)"),
    Param("clustering", str, "split-merge", "how clusters are found: split/merge over sets "
          "after every release, or the phases' edge deletion and clique merge",
          choices=CLUSTERINGS),
    *(p for p in SETS if p.name in SPLIT_MERGE_KEYS),
    Param("release", str, "per-user", "what the models are built from: every user's own "
          "stream, summed over the cluster; one sum per cluster (one stream's noise; a "
          "trusted aggregator; parts that leave a cluster re-released once); or each record "
          "routed to its user's stream or, once settled, its cluster's secure sum",
          choices=RELEASES),
    Param("detection_share", float, 0.5, "share of the budget (mu^2) on the per-user "
          "detection streams (release 'cluster-sum')", range="(0, 1)"),
    Param("history_share", float, 0.2, "share of the budget (mu^2) on re-releasing the "
          "records of parts that leave a cluster (release 'cluster-sum'; detection takes "
          "detection_share, the cluster streams the rest)", range="(0, 1)"),
    Param("history_limit", int, 2, "most re-releases a user's records enter (release "
          "'cluster-sum')", range="[1, inf)"),
    Param("settle", int, 0, "releases a cluster stands before the parts it took are "
          "re-released (0: at once, when their stand-in is noisier; release 'cluster-sum'); "
          "releases a user's cluster keeps all its co-members before the user is settled "
          "(release 'routed')", range="[0, inf)"),
    Param("keep", float, 0.1, "public-coin share of a settled user's records kept on its "
          "own stream, which detection reads (release 'routed')", range="[0, 1)"),
)
# the spelling of the paper's path before it was an entry of its own: refused by name
RETIRED = {"act_on": "absent: the paper's path (acting on raw buffers) is the entry "
                     "'cdp-fclub-dc-paper'; cdp-fclub-dc acts on released statistics only",
           "paper": "the entry 'cdp-fclub-dc-paper' (its preset 'paper'): the paper's path "
                    "is an entry of its own"}
GUARDED = (*privacy_params(delta=True, sampler=True), *guard_params(resolution=RESOLUTION),
           *FEDERATED)
# the seed's CLUB / SCLUB / LinUCB baselines take the radius keys without beta, confidence
_RADIUS = tuple(p for p in radius_params(beta=None) if p.name != "confidence")
_PARAMS = {"cdp-fclub-dc": RELEASED, "cdp-fclub-dc-paper": PAPER, "cdp-fclub-dc+": GUARDED,
           "club-per-server": (FEDERATED[0], *_RADIUS),
           "sclub-per-server": (FEDERATED[0], Param("alpha_p", float, 1.0, "SCLUB's split/merge "
                                "factor", range="(0, inf)"), *_RADIUS),
           "oracle-clusters": _RADIUS, "fclub-dc-sets": SETS}
_GUARD_KEYS = tuple(f.name for f in fields(GuardPlan) if f.name not in ("epsilon", "delta",
                                                                          "horizon"))
SERVERS = Param("servers", int, 5, "number of local servers L", range="[1, inf)")


def _reads(settings: dict[str, Any]) -> frozenset[str]:
    """The [environment] keys a run reads: its world setting's, and the servers."""
    return keys_read(settings) | {"servers"}
# the paper's evaluation (seed 000, Section 6): delta = 0.1 and its node-noise formula
# (and its raw buffers between uploads: a guarantee over realised sequences only)
PRESETS = {"paper": {"delta": 0.1, "calibration": "paper", "mechanism": "tree",
                    "schedule": "every-round"}}
# the authors' public code's ridge (lam = 2; the default keeps lam = 1), for FCLUB and FCLUB-DC
PUBLIC_CODE = {"public-code": {"lam": 2.0}}
_DESCRIPTIONS = {
    "fclub": "FCLUB (seed 000): phase-based detection, every observation shared at once",
    "fclub-dc": "FCLUB-DC (seed 000): asynchronous det-ratio uploads/downloads (U, D)",
    "cdp-fclub-dc": "CDP-FCLUB-DC (seed 000) acting on released statistics: reward-only "
                    "releases, exact public Gram (interactive DP)",
    "cdp-fclub-dc-paper": "CDP-FCLUB-DC as seed 000 runs it: noised full statistics, raw "
                          "buffers between uploads (CDP over realised sequences only, not "
                          "interactive); preset 'paper': the paper's delta and tree",
    "cdp-fclub-dc+": "guarded private federation: CLUB per server, refined by noisy "
                     "continual releases of other servers' users; (epsilon, delta)-DP for "
                     "one user-round's reward seen from outside its server (interactive; "
                     "a server's own users are not protected from each other)",
    "club-per-server": "CLUB (Gentile et al. 2014) run separately on each local server",
    "sclub-per-server": "SCLUB (Li et al. 2019) run separately on each local server",
    "homo": "Homo: FCLUB with every user in one cluster",
    "homo-dc": "Homo-DC: FCLUB-DC with every user in one cluster",
    "fclub-dc-sets": "FCLUB-DC with split/merge detection over sets (pooled tests, no "
                     "single-link merges): the federation for many users and servers",
    "oracle-clusters": "ORACLE, reads the world's hidden clusters (not deployable): LinUCB "
                       "pooled per true cluster across all servers, the ceiling of federation",
}


def build_run(name: str, config: dict[str, Any], streams: dict[str, Any]) -> Setup:
    """One run of `name`: its policy and the world drawn from the "world" stream.

    The world comes from the study's `environment` table
    (`envs.factory.make_environment`, seed 000's synthetic setting by default);
    `servers` is the number of local servers L (a study fills every declared key).
    """
    settings = dict(config)
    horizon = settings.pop("horizon")
    table = dict(settings.pop("environment", {}))
    servers = table.pop("servers", SERVERS.default)
    epsilon, delta = settings.pop("epsilon", None), settings.pop("delta", None)
    env = world_from(table, streams["world"])
    if name in ("cdp-fclub-dc", "cdp-fclub-dc-paper"):  # Definition 1's m: the world's
        truth = env.true_clusters()
        settings["world_clusters"] = None if truth is None else int(np.unique(truth).size)
    if name == "oracle-clusters":  # told the hidden clusters: a ceiling, not an algorithm
        truth = env.true_clusters()
        if truth is None:
            raise config_error("environment.setting", table.get("setting"),
                               "a world with hidden clusters for the oracle")
        return Setup(ClusterOracle(env.dim, truth, **settings), env, horizon, algorithm=name)
    if name == "cdp-fclub-dc":
        return Setup(_released(settings, env, servers, horizon, epsilon, delta), env, horizon,
                     algorithm=name)
    if name == "cdp-fclub-dc+":
        plan = GuardPlan(epsilon, delta, horizon,
                         **{k: settings.pop(k) for k in _GUARD_KEYS if k in settings})
        policy = GuardedFederatedClub(FclubConfig(env.dim, env.n_users, servers, **settings), plan)
    elif name == "cdp-fclub-dc-paper":  # seed 000's algorithm, its buffers raw
        policy = make_policy("cdp-fclub-dc", dim=env.dim, n_users=env.n_users,
                             n_servers=servers, horizon=horizon, epsilon=epsilon, delta=delta,
                             act_on="raw", **settings)
    else:
        policy = make_policy(name, dim=env.dim, n_users=env.n_users, n_servers=servers,
                             horizon=horizon, epsilon=epsilon, delta=delta, **settings)
    return Setup(policy, env, horizon, algorithm=name)


def _released(settings: dict[str, Any], env: Any, servers: int, horizon: int,
              epsilon: float, delta: float) -> ReleasedFederatedClub:
    """CDP-FCLUB-DC acting on released statistics (`fclub.released`): its plan from the
    release and clustering keys, the rest into the `FclubConfig`."""
    settings = dict(settings)
    plan = ReleasedPlan(epsilon, delta, horizon, **{k: settings.pop(k) for k in (
        "mechanism", "schedule", "batch", "sampler", "growth", "failure", "resolution",
        "clustering", *SPLIT_MERGE_KEYS, "release", "detection_share", "history_share",
        "history_limit", "settle", "keep")})
    world = settings.pop("world_clusters", None)
    config = FclubConfig(env.dim, env.n_users, servers, **settings)
    return ReleasedFederatedClub(config, plan, world_clusters=world)


def _presets(name: str) -> dict[str, dict[str, Any]]:
    if name == "cdp-fclub-dc-paper":
        return PRESETS
    return PUBLIC_CODE if name in ("fclub", "fclub-dc", "fclub-dc-sets") else {}


# how the private entries are audited (`privbandit.auditing`): small worlds in dimension 2 that
# release early and take every public decision the entry has -- cdp-fclub-dc's split/merge
# world (6 users of 3 clusters on 3 servers; moves on any evidence) moves users and servers'
# blocks, splits and merges at epsilon 1; its cliques world (4 users, 2 servers, a coarse
# resolution) deletes edges and merges cliques across servers -- the black-box size and flip,
# canary rounds (the guarded entry shares every round so that every canary is released)
_SMALL = {"dim": 2, "users": 4, "clusters": 1, "servers": 2}
AUDITS = {
    "cdp-fclub-dc": AuditProfile(
        worlds=(AuditWorld(1024, {"unit_evidence": 0.0, "block_evidence": 0.0},
                           {"dim": 2, "users": 6, "clusters": 3, "servers": 3}),
                AuditWorld(1024, {"resolution": 5.0, "clustering": "cliques"}, _SMALL,
                           label="cliques")),
        black_box=(32, Flip(5)), canaries=CanaryRounds(512, 128)),
    # its statement holds over realised sequences only: the interactive audits measure it
    "cdp-fclub-dc-paper": AuditProfile(
        worlds=(AuditWorld(512, environment=_SMALL),), black_box=(32, Flip(5)),
        canaries=CanaryRounds(512, 128)),
    "cdp-fclub-dc+": AuditProfile(
        worlds=(AuditWorld(512, GUARDED_AUDIT, _SMALL),), black_box=(32, Flip(5)),
        canaries=CanaryRounds(256, 64, {"rate": 1.0, "merged_rate": 1.0, "cap": 256})),
}


def _entries() -> list[AlgorithmEntry]:
    out = []
    for name, text in _DESCRIPTIONS.items():
        private = name.startswith("cdp-")
        out.append(AlgorithmEntry(
            name, functools.partial(build_run, name), private=private, needs_delta=private,
            calibrations=CALIBRATIONS if name == "cdp-fclub-dc-paper" else (),
            retired=RETIRED if name == "cdp-fclub-dc" else {},
            params=_PARAMS.get(name, FEDERATED), environment=(*ENVIRONMENT, SERVERS),
            reads=_reads, presets=_presets(name), description=text, audit=AUDITS.get(name)))
    return out


ENTRIES = tuple(register_algorithm(e) for e in _entries())
