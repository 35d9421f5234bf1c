"""Federated contextual cascading bandits (seed 001): FedC3UCB-H, its baselines, a CDP variant.

- `FederatedCascadeUCB` (agents with local buffers and a det-ratio trigger,
  server with agent graph) and the factories `fedc3ucb_h`, `force_comm`,
  `no_auxiliary`, `fed_linucb`; `IndependentCascadeUCB` / `fed_ind`;
- `CDPFedC3UCBH` / `cdp_fedc3ucb_h`: uploads through per-agent tree privatizers;
- `top_k_list`, `list_value`: the exact oracle of the cascade model;
- `lemma6_beta`, `CascadeRadius`: the confidence radius;
- `LocalBuffers`, `CascadeServer`: the agent and server roles.

Study entries ("fedc3ucb-h", "forcecomm", "noauxiliary", "fedlinucb",
"fedind", "cdp-fedc3ucb-h") are registered by `privbandit.cascade.study`.
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
from .oracle import list_value, top_k_list
from .private import CDPFedC3UCBH, PrivateCascadeServer, TreeNoiseBounds, cdp_fedc3ucb_h
from .radius import CascadeRadius, lemma6_beta
from .server import CascadeServer

__all__ = [
    "CDPFedC3UCBH", "CascadeRadius", "CascadeServer", "FederatedCascadeUCB",
    "IndependentCascadeUCB", "LocalBuffers", "PrivateCascadeServer", "TreeNoiseBounds",
    "auxiliary_probability", "cdp_fedc3ucb_h", "fed_ind", "fed_linucb", "fedc3ucb_h",
    "force_comm", "is_forced_arrival", "lemma6_beta", "list_value", "no_auxiliary",
    "top_k_list",
]
