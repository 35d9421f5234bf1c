"""Environments: they own the world (hidden preferences, items, rewards, regret).

Clustered linear users (`LinearUsersEnv`, `clustered_linear_environment`,
`seed000_environment`), the cascade click model (`CascadeEnv`,
`seed001_environment`), item sources, and the `Environment` interface.
The seed-specific environments (multi-agent MAB, vertical split, anonymous
users) live in their own modules of this package and are imported from there.
"""
from .base import Environment, Outcome, Round
from .cascade import CascadeEnv, check_ranking, top_k
from .clustered import (
    assign_users,
    clustered_linear_environment,
    clustered_preferences,
    seed000_environment,
    seed001_environment,
)
from .factory import make_environment
from .items import BiasedSphereItems, ItemSource, PoolItems, SphereItems
from .linear import LinearUsersEnv
from .ratings import ratings_environment

__all__ = [
    "BiasedSphereItems", "CascadeEnv", "Environment", "ItemSource", "LinearUsersEnv",
    "Outcome", "PoolItems", "Round", "SphereItems", "assign_users",
    "check_ranking", "clustered_linear_environment", "clustered_preferences", "make_environment",
    "ratings_environment",
    "seed000_environment", "seed001_environment", "top_k",
]
