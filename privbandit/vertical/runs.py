"""Setups of VFUCB / VFTS and of their partial-local baseline (`runtime.Setup`).

- `vertical_setup(policy, env, horizon, masks)`: the federated protocol on a
  `VerticalSplit` (VFUCB with a `LinUCB`, VFTS with a `LinTS` of dimension d),
  the mask Q drawn from the generator `masks`.
- `partial_local_setup(policy, env, widths, horizon)`: a policy of dimension
  d_0 on the active party's columns alone.
- The centralized baseline is the same policy on the full features (one
  party holds everything): `privbandit.run(policy, world, horizon, seed)`.

The runner plays a setup (`privbandit.runtime.run_setup(setup, seed)`) with
the "rounds" and "policy" streams of `runtime.seed_streams(seed)`, so with
one seed the three face the same items and reward noise and VFUCB makes
exactly LinUCB's choices; the mask comes from the seed's "secrets" stream
(`seed_streams(seed)["secrets"]`), independent of both.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from privbandit.accounting.ledger import Ledger

from ..envs.base import Environment
from ..envs.vertical import ActivePartyView, FeatureSplit, VerticalSplit
from ..errors import config_error
from ..policies.base import Policy
from ..runtime import Setup

if TYPE_CHECKING:
    from .federation import Transport


def vertical_setup(
    policy: Policy,
    env: VerticalSplit,
    horizon: int,
    masks: np.random.Generator,
    *,
    seal_traffic: bool = True,
    transport: Transport | None = None,
    ledger: Ledger | None = None,
    algorithm: str | None = None,
) -> Setup:
    """VFUCB / VFTS: `policy` (dimension d) run by the active party on masked contexts.

    The federation (`VerticalFederation`, a `Policy` of the split world) is
    what the run loop plays.  `ledger`, if given, gets the mask's
    `NotDifferentiallyPrivate` event with `Ledger.note` (masks are never
    charged as DP); the result's `privacy` states the guarantee either way.
    `comm` counts the messages and bytes each role sent (`messages_by_party`,
    `bytes_by_party`).
    """
    if not isinstance(env, VerticalSplit):
        raise config_error("env", env, "a VerticalSplit (envs.vertical)")
    from .federation import VerticalFederation  # the crypto extra: sealed masks

    federation = VerticalFederation(
        env.split, policy, rng=masks, seal_traffic=seal_traffic,
        transport=transport, ledger=ledger,
    )
    return Setup(federation, env, horizon, algorithm=algorithm)


def partial_local_setup(
    policy: Policy,
    env: Environment,
    widths: FeatureSplit | tuple | list,
    horizon: int,
) -> Setup:
    """The partial-local baseline: `policy` (dimension d_0) on the active party's columns."""
    view = ActivePartyView(env, widths)
    if getattr(policy, "dim", None) != view.dim:
        raise config_error("policy", policy, f"a linear Policy of the active width d_0={view.dim}")
    return Setup(policy, view, horizon, algorithm=f"partial-{policy.name}",
                 params={"widths": list(view.split.widths),
                         "active_share": view.split.active_share})
