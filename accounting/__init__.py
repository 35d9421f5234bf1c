"""privbandit's accounting layer: privacy events, accountants, ledgers, calibration.

Imports numpy and scipy only; no other package of ours.
"""
from .accountants import (
    ACCOUNTANTS,
    Accountant,
    ExactGaussianAccountant,
    PureDPAccountant,
    make_accountant,
)
from .calibration import calibrate_gaussian_sigma, calibrate_laplace_scale, tree_nodes_per_record
from .errors import (
    BudgetExceededError,
    InvalidParameterError,
    NotDifferentiallyPrivateError,
    PrivacyError,
    UnsupportedEventError,
)
from .events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    NotDifferentiallyPrivate,
    PrivacyEvent,
    RepeatedEvent,
    TreeAggregationEvent,
)
from .ledger import Ledger

__all__ = [
    "ACCOUNTANTS", "Accountant", "BudgetExceededError", "ComposedEvent",
    "ExactGaussianAccountant", "GaussianEvent", "InvalidParameterError", "LaplaceEvent",
    "Ledger", "NotDifferentiallyPrivate", "NotDifferentiallyPrivateError", "PrivacyError",
    "PrivacyEvent", "PureDPAccountant", "RepeatedEvent", "TreeAggregationEvent",
    "UnsupportedEventError", "calibrate_gaussian_sigma", "calibrate_laplace_scale",
    "make_accountant", "tree_nodes_per_record",
]
