"""Runs of VFUCB / VFTS and of their two baselines, each returning a `RunResult`.

- `run_vertical(policy, env, horizon, seed)`: the federated protocol on a
  `VerticalSplit` (VFUCB with a `LinUCB`, VFTS with a `LinTS` of dimension d).
- `run_centralized(policy, env, horizon, seed)`: the same policy on the full
  features (one party holds everything): `privbandit.run`.
- `run_partial_local(policy, env, widths, horizon, seed)`: a policy of
  dimension d_0 on the active party's columns alone.

All three draw the world's rounds and the policy's randomness from the same
streams of `privbandit.runtime.seed_streams(seed)`, so with one seed they face
the same items and reward noise; VFUCB then makes exactly LinUCB's choices.
The mask Q comes from a fourth, independent child of the seed.
"""
from __future__ import annotations

import time

import numpy as np

from privbandit.accounting.ledger import Ledger
from privbandit.mechanisms.masks import MASK_EVENT

from ..envs.base import Environment
from ..envs.vertical import ActivePartyView, FeatureSplit, VerticalSplit
from ..errors import config_error
from ..policies.base import Policy
from ..result import RunResult
from ..runtime import STREAMS, run, seed_streams
from ..validation import check_dim
from .federation import Transport, VerticalFederation

# The paper's names for the federated versions of the core policies.
VERTICAL_NAMES = {"linucb": "vfucb", "lints": "vfts"}


def mask_stream(seed: int | np.random.SeedSequence) -> np.random.Generator:
    """The generator that draws Q: the child after `seed_streams`' three of `seed`."""
    if isinstance(seed, np.random.SeedSequence):
        root = np.random.SeedSequence(
            seed.entropy, spawn_key=seed.spawn_key, pool_size=seed.pool_size
        )
    elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise config_error("seed", seed, "an integer >= 0 or a numpy.random.SeedSequence")
    else:
        root = np.random.SeedSequence(int(seed))
    return np.random.default_rng(root.spawn(len(STREAMS) + 1)[-1])


def play(
    federation: VerticalFederation,
    env: VerticalSplit,
    horizon: int,
    rounds_rng: np.random.Generator,
    policy_rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Play `horizon` rounds: (regret (T,), reward (T,), seconds)."""
    env.reset(rounds_rng)
    regret = np.empty(horizon)
    reward = np.empty(horizon)
    started = time.perf_counter()
    for t in range(horizon):
        pending = federation.decide(env.observe(t), policy_rng)
        out = env.act(t, pending.action)
        federation.commit(pending, out.feedback)
        regret[t] = out.regret
        reward[t] = out.reward
    return regret, reward, time.perf_counter() - started


def run_vertical(
    policy: Policy,
    env: VerticalSplit,
    horizon: int,
    seed: int | np.random.SeedSequence,
    *,
    seal_traffic: bool = True,
    transport: Transport | None = None,
    ledger: Ledger | None = None,
    algorithm: str | None = None,
) -> RunResult:
    """VFUCB / VFTS: `policy` (dimension d) run by the active party on masked contexts.

    `ledger`, if given, gets the mask's `NotDifferentiallyPrivate` event with
    `Ledger.note` (masks are never charged as DP); the result's `privacy`
    states the guarantee either way.  `comm` adds the messages and bytes
    each role sent (`messages_by_party`, `bytes_by_party`).
    """
    if not isinstance(env, VerticalSplit):
        raise config_error("env", env, "a VerticalSplit (envs.vertical)")
    if ledger is not None and not isinstance(ledger, Ledger):
        raise config_error("ledger", ledger, "None or a Ledger")
    horizon = check_dim("horizon", horizon)
    streams = seed_streams(seed)
    federation = VerticalFederation(
        env.split, policy, rng=mask_stream(seed), seal_traffic=seal_traffic, transport=transport
    )
    if ledger is not None:
        ledger.note(MASK_EVENT)
    regret, reward, elapsed = play(federation, env, horizon, streams["rounds"], streams["policy"])
    return RunResult(
        algorithm=algorithm or VERTICAL_NAMES.get(policy.name, f"vertical-{policy.name}"),
        params={**policy.params(), "widths": list(env.widths), "seal_traffic": seal_traffic},
        regret=regret,
        reward=reward,
        comm=federation.comm_summary(),
        ledgers=[] if ledger is None else [ledger.summary()],
        privacy=federation.privacy(),
        timings={
            "simulate": elapsed, "rounds_per_second": horizon / max(elapsed, 1e-12),
            **federation.timings,
        },
        seed=_seed_int(seed),
        environment=env.describe(),
    )


def run_centralized(
    policy: Policy, env: Environment, horizon: int, seed: int | np.random.SeedSequence
) -> RunResult:
    """The centralized baseline: `policy` sees the full (K, d) features."""
    return run(policy, env, horizon, seed)


def run_partial_local(
    policy: Policy,
    env: Environment,
    widths: FeatureSplit | tuple | list,
    horizon: int,
    seed: int | np.random.SeedSequence,
) -> RunResult:
    """The partial-local baseline: `policy` (dimension d_0) on the active party's columns."""
    view = ActivePartyView(env, widths)
    if getattr(policy, "dim", None) != view.dim:
        raise config_error("policy", policy, f"a linear Policy of the active width d_0={view.dim}")
    result = run(policy, view, horizon, seed, algorithm=f"partial-{policy.name}")
    result.params["widths"] = list(view.split.widths)
    result.params["active_share"] = view.split.active_share
    return result


def _seed_int(seed: int | np.random.SeedSequence) -> int | None:
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.entropy) if isinstance(seed.entropy, (int, np.integer)) else None
    return int(seed)
