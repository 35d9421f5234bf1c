"""privbandit's mechanisms layer: randomized releases, masks, anonymous aggregation.

Every mechanism is a small object validated at construction, releases with an
explicit `rng`, and exposes the `event` an accountant charges.  Imports the
accounting layer only.
"""
from .anonymous import Elicitation, KAnonymousAggregator, elicit_feedback, split_groups
from .gaussian import GaussianVector, SymmetricGaussianMatrix
from .laplace import LaplaceMeans
from .masks import OrthogonalMask, PartyMask, sum_masked
from .samplers import EXACT, FAST, NumpySampler, OpenDPSampler, Sampler
from .sealing import (
    Opener,
    PartyKeys,
    ReplayGuard,
    Sealer,
    new_session,
    open_block,
    open_message,
    seal_block,
    seal_message,
)
from .tree import TreePrivatizer

__all__ = [
    "EXACT", "FAST", "Elicitation", "GaussianVector", "KAnonymousAggregator", "LaplaceMeans",
    "NumpySampler", "OpenDPSampler", "Opener", "OrthogonalMask", "PartyKeys", "PartyMask",
    "ReplayGuard", "Sampler", "Sealer", "SymmetricGaussianMatrix", "TreePrivatizer",
    "elicit_feedback", "new_session", "open_block", "open_message", "seal_block",
    "seal_message", "split_groups", "sum_masked",
]
