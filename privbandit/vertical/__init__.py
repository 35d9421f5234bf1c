"""Vertical federated linear bandits (seed 003): VFUCB and VFTS over orthogonal masks.

Roles (`roles`), their byte format (`wire`), the federation that wires them
(`federation`) and the runs of VFUCB / VFTS and their baselines (`runs`).
Masks are not differential privacy: see `VerticalFederation`'s docstring
and docs/vertical.md.
"""
from .errors import ProtocolError
from .federation import DIRECTIONS, PendingRound, VerticalFederation
from .roles import ACTIVE, GENERATOR, ActiveParty, MaskGenerator, PassiveParty, party_name
from .runs import mask_stream, play, run_centralized, run_partial_local, run_vertical

__all__ = [
    "ACTIVE", "DIRECTIONS", "GENERATOR", "ActiveParty", "MaskGenerator", "PassiveParty",
    "PendingRound", "ProtocolError", "VerticalFederation", "mask_stream", "party_name", "play",
    "run_centralized", "run_partial_local", "run_vertical",
]
