"""Attacks on the two protections that are not differential privacy.

- `masks`: known-plaintext (least squares / Procrustes), known-sample PCA and
  no-pair (norm and inner-product) leakage of orthogonal masks (seed 003).
- `anonymity`: the differencing attack on C-anonymous feedback elicitation
  (seed 004), with and without the aggregator's Laplace option.
"""
from .anonymity import (
    DifferencingMechanism,
    DifferencingResult,
    differencing_attack,
    exact_accuracy,
)
from .masks import (
    GramLeakage,
    MaskRecovery,
    gram_leakage,
    known_plaintext,
    pca_curve,
    pca_recovery,
    recovery_curve,
    subspace_error,
)

__all__ = [
    "DifferencingMechanism", "DifferencingResult", "GramLeakage", "MaskRecovery",
    "differencing_attack", "exact_accuracy", "gram_leakage", "known_plaintext", "pca_curve",
    "pca_recovery", "recovery_curve", "subspace_error",
]
