"""Runs of VFUCB / VFTS and of their two baselines, each returning a `RunResult`.

- `run_vertical(policy, env, horizon, seed)`: the federated protocol on a
  `VerticalSplit` (VFUCB with a `LinUCB`, VFTS with a `LinTS` of dimension d),
  played by the one run loop (`privbandit.runtime`).
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

from typing import TYPE_CHECKING

import numpy as np

from privbandit.accounting.ledger import Ledger

from ..envs.base import Environment
from ..envs.vertical import ActivePartyView, FeatureSplit, VerticalSplit
from ..errors import config_error
from ..policies.base import Policy
from ..result import RunResult
from ..runtime import STREAMS, run, seed_sequence
from ..validation import check_dim

if TYPE_CHECKING:
    from .federation import Transport


def mask_stream(seed: int | np.random.SeedSequence) -> np.random.Generator:
    """The generator that draws Q: the child after `seed_streams`' three of `seed`."""
    return np.random.default_rng(seed_sequence(seed).spawn(len(STREAMS) + 1)[-1])


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

    The federation (`VerticalFederation`, a `Policy` of the split world) is
    played by the run loop.  `ledger`, if given, gets the mask's
    `NotDifferentiallyPrivate` event with `Ledger.note` (masks are never
    charged as DP); the result's `privacy` states the guarantee either way.
    `comm` counts the messages and bytes each role sent (`messages_by_party`,
    `bytes_by_party`).
    """
    if not isinstance(env, VerticalSplit):
        raise config_error("env", env, "a VerticalSplit (envs.vertical)")
    from .federation import VerticalFederation  # the crypto extra: sealed masks

    federation = VerticalFederation(
        env.split, policy, rng=mask_stream(seed), seal_traffic=seal_traffic,
        transport=transport, ledger=ledger,
    )
    return run(federation, env, check_dim("horizon", horizon), seed, algorithm=algorithm)


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
    return run(policy, view, horizon, seed, algorithm=f"partial-{policy.name}",
               params={"widths": list(view.split.widths),
                       "active_share": view.split.active_share})
