"""Federated contextual cascading bandits (seed 001): FedC3UCB-H, its baselines, a CDP variant.

- `FederatedCascadeUCB` (agents with local buffers and a det-ratio trigger,
  server with agent graph) and the factories `fedc3ucb_h`, `force_comm`,
  `no_auxiliary`, `fed_linucb`; `IndependentCascadeUCB` / `fed_ind`;
- `CDPFedC3UCBH` / `cdp_fedc3ucb_h`: uploads through per-agent tree privatizers;
- `SetFederatedCascade` / `fedc3ucb_sets`: agents alone until split/merge over sets
  proves a set shares preferences (recommended); `ReleasedSetCascade` /
  `cdp_fedc3ucb_sets`: its private counterpart, acting on reward-only releases;
- `CascadeClusterOracle`: FedInd's agent pooled per TRUE cluster (a ceiling);
- `top_k_list`, `list_value`: the exact oracle of the cascade model;
- `lemma6_beta`, `CascadeRadius`: the confidence radius;
- `LocalBuffers`, `CascadeServer`: the agent and server roles.

Study entries ("fedc3ucb-h", "forcecomm", "noauxiliary", "fedlinucb",
"fedind", "fedc3ucb-sets", "oracle-cascade", "cdp-fedc3ucb-h", "cdp-fedc3ucb-h+",
"cdp-fedc3ucb-sets") are registered by `privbandit.cascade.study`.
"""
from .algorithm import (
    FederatedCascadeUCB,
    IndependentCascadeUCB,
    auxiliary_probability,
    fed_ind,
    fed_linucb,
    fedc3ucb_h,
    force_comm,
    is_forced_arrival,
    no_auxiliary,
)
from .buffers import LocalBuffers
from .ceiling import CascadeClusterOracle
from .oracle import list_value, top_k_list
from .private import CDPFedC3UCBH, PrivateCascadeServer, TreeNoiseBounds, cdp_fedc3ucb_h
from .radius import CascadeRadius, lemma6_beta
from .released import CascadeReleasePlan, ReleasedSetCascade, cdp_fedc3ucb_sets
from .server import CascadeServer
from .sets import SetCascadeServer, SetFederatedCascade, fedc3ucb_sets

__all__ = [
    "CDPFedC3UCBH", "CascadeClusterOracle", "CascadeRadius", "CascadeReleasePlan",
    "CascadeServer", "FederatedCascadeUCB", "IndependentCascadeUCB", "LocalBuffers",
    "PrivateCascadeServer", "ReleasedSetCascade", "SetCascadeServer", "SetFederatedCascade",
    "TreeNoiseBounds", "auxiliary_probability", "cdp_fedc3ucb_h", "cdp_fedc3ucb_sets",
    "fed_ind", "fed_linucb", "fedc3ucb_h", "fedc3ucb_sets", "force_comm", "is_forced_arrival",
    "lemma6_beta", "list_value", "no_auxiliary", "top_k_list",
]
