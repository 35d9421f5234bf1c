"""privbandit's mechanisms layer: randomized releases, masks, anonymous aggregation.

Every mechanism is a small object validated at construction, releases with an
explicit `rng`, and exposes the `event` an accountant charges.  Imports the
accounting layer only.  The sealing names load `cryptography` (the 'crypto'
extra) on first use.
"""
from privbandit.accounting.errors import InvalidParameterError, PrivacyError

from .anonymous import Elicitation, KAnonymousAggregator, elicit_feedback, split_groups
from .continual import CONTINUAL_MECHANISMS, continual_release
from .errors import (
    AnonymityError,
    HorizonExceededError,
    MaskError,
    MechanismError,
    OutOfBoundsError,
    SealError,
    ShapeError,
)
from .factorization import MatrixFactorization
from .gaussian import GaussianVector, SymmetricGaussianMatrix
from .honaker import HonakerTree
from .laplace import LaplaceMeans
from .masks import OrthogonalMask, PartyMask, sum_masked
from .noise_bounds import (
    gaussian_matrix_norm_bound,
    psd_shift,
    symmetric_noise_norm_bound,
    vector_noise_norm_bound,
)
from .reward_only import PublicFeatures, RewardOnlyRelease, RewardRelease
from .samplers import EXACT, FAST, GRID, GridSampler, NumpySampler, OpenDPSampler, Sampler
from .streaming import ContinualRelease
from .tape import PublicValue, ReplayDivergedError
from .tree import TreePrivatizer

# Sealed channels need the 'crypto' extra, so they load on first use.
_SEALING = ("Opener", "PartyKeys", "ReplayGuard", "Sealer", "new_session", "open_block",
            "open_message", "seal_block", "seal_message")


def __getattr__(name: str):
    if name in _SEALING:
        from . import sealing

        return getattr(sealing, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AnonymityError", "HorizonExceededError", "InvalidParameterError", "MaskError",
    "MechanismError", "OutOfBoundsError", "PrivacyError", "ReplayDivergedError", "SealError",
    "ShapeError",
    "CONTINUAL_MECHANISMS", "ContinualRelease", "EXACT", "Elicitation", "FAST", "GRID",
    "GaussianVector", "GridSampler", "HonakerTree", "KAnonymousAggregator", "LaplaceMeans",
    "MatrixFactorization", "NumpySampler", "OpenDPSampler", "Opener", "OrthogonalMask",
    "PartyKeys", "PartyMask", "PublicFeatures", "PublicValue", "ReplayGuard",
    "RewardOnlyRelease", "RewardRelease", "Sampler", "Sealer",
    "SymmetricGaussianMatrix", "TreePrivatizer", "continual_release", "elicit_feedback",
    "new_session", "open_block", "open_message", "psd_shift", "seal_block", "seal_message",
    "split_groups", "sum_masked", "symmetric_noise_norm_bound", "vector_noise_norm_bound",
    "gaussian_matrix_norm_bound",
]
