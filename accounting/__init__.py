"""privbandit's accounting layer: privacy events, accountants, ledgers, calibration.

Imports numpy and scipy only; no other package of ours.
"""
from .accountants import (
    ACCOUNTANTS,
    Accountant,
    ApproxDPAccountant,
    ExactGaussianAccountant,
    PLDAccountant,
    PureDPAccountant,
    RDPAccountant,
    ZCDPAccountant,
    make_accountant,
    register,
)
from .calibration import (
    PAPER_TREE_VARIANCES,
    calibrate_gaussian_sigma,
    calibrate_laplace_scale,
    calibrate_secure_sum_sigma,
    paper_tree_sigma,
    secure_sum_event,
    tree_nodes_per_record,
)
from .errors import (
    BudgetExceededError,
    InvalidParameterError,
    MissingExtraError,
    NotDifferentiallyPrivateError,
    PrivacyError,
    UnsupportedEventError,
)
from .events import (
    ComposedEvent,
    FactorizationEvent,
    GaussianEvent,
    LaplaceEvent,
    NotDifferentiallyPrivate,
    PrivacyEvent,
    RepeatedEvent,
    SecureSumEvent,
    TreeAggregationEvent,
)
from .interop import to_dp_accounting, to_opendp
from .ledger import Ledger
from .statement import PrivacyStatement, Relation

__all__ = [
    "ACCOUNTANTS", "Accountant", "ApproxDPAccountant", "BudgetExceededError", "ComposedEvent",
    "ExactGaussianAccountant", "FactorizationEvent", "GaussianEvent", "InvalidParameterError",
    "LaplaceEvent", "MissingExtraError",
    "Ledger", "NotDifferentiallyPrivate", "NotDifferentiallyPrivateError",
    "PAPER_TREE_VARIANCES", "PLDAccountant", "PrivacyError", "PrivacyEvent", "PureDPAccountant",
    "RDPAccountant", "RepeatedEvent", "SecureSumEvent", "TreeAggregationEvent",
    "UnsupportedEventError", "ZCDPAccountant", "calibrate_gaussian_sigma",
    "calibrate_laplace_scale", "calibrate_secure_sum_sigma", "make_accountant",
    "paper_tree_sigma", "register", "secure_sum_event", "to_dp_accounting", "to_opendp",
    "tree_nodes_per_record",
    "PrivacyStatement", "Relation",
]
