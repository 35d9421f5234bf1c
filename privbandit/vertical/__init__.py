"""Vertical federated linear bandits (seed 003): VFUCB and VFTS over orthogonal masks.

Roles (`roles`), their byte format (`wire`), the federation that wires them
(`federation`), the runs of VFUCB / VFTS and their baselines (`runs`), the
near-tie rule both sides of a lossless comparison use (`ties`), the audit
layer's mask attacks on the protocol's traffic (`leakage`) and the study
entries (`study`).
Masks are not differential privacy: see `VerticalFederation`'s docstring
and docs/vertical.md.
"""
from .errors import ProtocolError
from .federation import VERTICAL_NAMES, PendingRound, VerticalFederation
from .roles import ACTIVE, GENERATOR, ActiveParty, MaskGenerator, PassiveParty, party_name
from .runs import mask_stream, run_centralized, run_partial_local, run_vertical
from .ties import TieTolerant

__all__ = [
    "ACTIVE", "GENERATOR", "VERTICAL_NAMES", "ActiveParty", "MaskGenerator", "PassiveParty",
    "PendingRound", "ProtocolError", "TieTolerant", "VerticalFederation", "mask_stream",
    "party_name", "run_centralized", "run_partial_local", "run_vertical",
]
