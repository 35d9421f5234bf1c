"""Bandit policies behind one interface (`Policy`): LinUCB, LinTS, CLUB, SCLUB.

Shared parts for new algorithms: `RidgeModels` (batched ridge statistics with
Sherman-Morrison updates), `ConfidenceRadius` (the UCB radius), the per-round
input checks (`privbandit.validation`, re-exported here; `CheckedItemsPolicy`
applies them once a round) and `PooledClusterPolicy` (CLUB's and SCLUB's
per-user and per-cluster models and cluster UCB).
"""
from ..validation import check_action, check_dim, check_items, check_reward, check_user
from .base import CheckedItemsPolicy, Policy
from .club import CLUB
from .linear import LinTS, LinUCB
from .pooled import PooledClusterPolicy
from .radius import ConfidenceRadius
from .ridge import RidgeModels
from .sclub import SCLUB

__all__ = [
    "CLUB", "CheckedItemsPolicy", "ConfidenceRadius", "LinTS", "LinUCB", "Policy",
    "PooledClusterPolicy", "RidgeModels", "SCLUB",
    "check_action", "check_dim", "check_items", "check_reward", "check_user",
]
