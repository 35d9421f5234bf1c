"""Anonymous bandits (seed 004): BaSE, C-anonymous decompositions, Algorithms 1 and 2.

Feedback comes only from `privbandit.mechanisms.anonymous` (the C-anonymous aggregator and
the feedback-eliciting sub-algorithm) on `privbandit.envs.anonymous.AnonymousBanditEnv`.
"""
from .algorithm1 import AnonymousBaSE, approximation_ratio
from .algorithm2 import AnonymousExploreThenCommit
from .audit import ElicitationObserver, algorithm_assignment
from .batched_elimination import BatchedElimination
from .decompositions import (
    DECOMPOSITIONS,
    Decomposition,
    greedy_decomposition,
    lp_decomposition,
    randomized_decomposition,
    verify_decomposition,
)
from .errors import AssumptionError, DecompositionError, HorizonTooShortError
from .grids import default_batches, geometric_grid, make_grid, minimax_grid

__all__ = [
    "DECOMPOSITIONS", "AnonymousBaSE", "AnonymousExploreThenCommit", "AssumptionError",
    "BatchedElimination", "Decomposition", "DecompositionError", "ElicitationObserver",
    "HorizonTooShortError", "algorithm_assignment", "approximation_ratio", "default_batches",
    "geometric_grid", "greedy_decomposition", "lp_decomposition", "make_grid", "minimax_grid",
    "randomized_decomposition", "verify_decomposition",
]
