"""Bandit policies behind one interface (`Policy`): LinUCB, LinTS, CLUB, SCLUB."""
from .base import (
    Policy,
    check_action,
    check_dim,
    check_items,
    check_reward,
    check_user,
)
from .linear import LinTS, LinUCB
from .ridge import RidgeModels

__all__ = [
    "LinTS", "LinUCB", "Policy", "RidgeModels", "check_action", "check_dim", "check_items",
    "check_reward", "check_user",
]
