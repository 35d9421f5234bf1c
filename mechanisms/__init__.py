"""privbandit's mechanisms layer: randomized releases, masks, anonymous aggregation.

Every mechanism is a small object validated at construction, releases with an
explicit `rng`, and exposes the `event` an accountant charges.  Imports the
accounting layer only.  The sealing names and `AgreedMasks` load
`cryptography` (the 'crypto' extra) on first use.
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
    TooFewSurvivorsError,
)
from .factorization import MatrixFactorization
from .gaussian import GaussianVector, SymmetricGaussianMatrix
from .honaker import HonakerTree
from .integer_grid import IntegerGrid
from .laplace import LaplaceMeans
from .masks import OrthogonalMask, PartyMask, sum_masked
from .noise_bounds import (
    gaussian_matrix_norm_bound,
    psd_shift,
    symmetric_noise_norm_bound,
    vector_noise_norm_bound,
)
from .pairwise_masks import SimulatedMasks
from .publication import Publication, PublicFeatures
from .reward_only import RewardOnlyRelease, RewardRelease
from .samplers import EXACT, FAST, GRID, GridSampler, NumpySampler, OpenDPSampler, Sampler
from .secure_continual import SECURE_CONTINUAL_MECHANISMS, secure_continual_release
from .secure_factorization import SecureFactorization
from .secure_reward import SecureRewardOnlyRelease, SecureRewardRelease
from .secure_stream import SecurePrefix, SecureStream
from .secure_sum import SecureAggregation, SecureSum, SecureSumRelease
from .secure_tree import SecureTree
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
    if name == "AgreedMasks":
        from .agreed_masks import AgreedMasks

        return AgreedMasks
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AnonymityError", "HorizonExceededError", "InvalidParameterError", "MaskError",
    "MechanismError", "OutOfBoundsError", "PrivacyError", "ReplayDivergedError", "SealError",
    "ShapeError", "TooFewSurvivorsError",
    "AgreedMasks", "CONTINUAL_MECHANISMS", "ContinualRelease", "EXACT", "Elicitation", "FAST",
    "GRID", "GaussianVector", "GridSampler", "HonakerTree", "IntegerGrid",
    "KAnonymousAggregator", "LaplaceMeans",
    "MatrixFactorization", "NumpySampler", "OpenDPSampler", "Opener", "OrthogonalMask",
    "PartyKeys", "PartyMask", "Publication", "PublicFeatures", "PublicValue", "ReplayGuard",
    "RewardOnlyRelease", "RewardRelease", "SECURE_CONTINUAL_MECHANISMS", "Sampler",
    "SecureAggregation", "SecureFactorization", "SecurePrefix", "SecureRewardOnlyRelease",
    "SecureRewardRelease", "SecureStream", "SecureSum",
    "SecureSumRelease", "SecureTree", "Sealer", "SimulatedMasks",
    "SymmetricGaussianMatrix", "TreePrivatizer", "continual_release", "elicit_feedback",
    "new_session", "open_block", "open_message", "psd_shift", "seal_block", "seal_message",
    "secure_continual_release",
    "split_groups", "sum_masked", "symmetric_noise_norm_bound", "vector_noise_norm_bound",
    "gaussian_matrix_norm_bound",
]
