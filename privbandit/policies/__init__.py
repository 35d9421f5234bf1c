"""Bandit policies behind one interface (`Policy`): LinUCB, LinTS, CLUB, SCLUB.

Shared parts for new algorithms: `RidgeModels` (batched ridge statistics with
Sherman-Morrison updates), `ConfidenceRadius` (the UCB radius) and the
per-round input checks of `policies.base`.
"""
from .base import (
    Policy,
    check_action,
    check_dim,
    check_items,
    check_reward,
    check_user,
)
from .club import CLUB
from .linear import LinTS, LinUCB
from .radius import ConfidenceRadius
from .ridge import RidgeModels
from .sclub import SCLUB

__all__ = [
    "CLUB", "ConfidenceRadius", "LinTS", "LinUCB", "Policy", "RidgeModels", "SCLUB",
    "check_action", "check_dim", "check_items", "check_reward", "check_user",
]
