"""Vertical federated linear bandits (seed 003): VFUCB and VFTS over orthogonal masks.

Roles (`roles`), their byte format (`wire`), the federation that wires them
(`federation`), the setups of VFUCB / VFTS and their partial-local baseline (`runs`), the
near-tie rule both sides of a lossless comparison use (`ties`), the audit
layer's mask attacks on the protocol's traffic (`leakage`) and the study
entries (`study`).
Masks are not differential privacy: see `VerticalFederation`'s docstring
and docs/vertical.md.
"""
import importlib
from typing import Any

# Names load on first use: the protocol's modules need the `crypto` extra (sealed mask
# blocks and channels), and the study entries must register without it.
_HOMES = {
    "ProtocolError": "errors", "VERTICAL_NAMES": "federation", "PendingRound": "federation",
    "VerticalFederation": "federation", "ACTIVE": "roles", "GENERATOR": "roles",
    "ActiveParty": "roles", "MaskGenerator": "roles", "PassiveParty": "roles",
    "party_name": "roles", "partial_local_setup": "runs", "vertical_setup": "runs",
    "TieTolerant": "ties", "TrafficRecorder": "leakage",
}
__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    globals()[name] = value
    return value
