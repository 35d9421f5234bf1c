"""C-anonymous decompositions of batched graphs: greedy, randomized matching, LP polytope."""
from __future__ import annotations

from .core import (
    FREE,
    Decomposition,
    check_active,
    check_decomposable,
    informative_mask,
    is_u_batched,
    pair_demand,
    random_active_arms,
    verify_decomposition,
)
from .greedy import greedy_decomposition
from .lp import lp_decomposition
from .polytope import AnonymityPoint, anonymity_point, dominating_point, in_polytope
from .randomized import randomized_decomposition

DECOMPOSITIONS = {
    "greedy": greedy_decomposition,
    "randomized": randomized_decomposition,
    "lp": lp_decomposition,
}

__all__ = [
    "DECOMPOSITIONS", "FREE", "AnonymityPoint", "Decomposition", "anonymity_point",
    "check_active", "check_decomposable", "dominating_point", "greedy_decomposition",
    "in_polytope", "informative_mask", "is_u_batched", "lp_decomposition", "pair_demand",
    "random_active_arms", "randomized_decomposition", "verify_decomposition",
]
