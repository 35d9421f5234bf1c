"""Errors of the anonymous-bandit algorithms: each names the assumption that fails."""
from __future__ import annotations

from ..errors import BanditError, ConfigError


class AssumptionError(ConfigError):
    """An input violates an assumption of seed 004's algorithms (C >= 1, N > C, U >= C + 1...)."""


class HorizonTooShortError(AssumptionError):
    """The horizon T cannot hold even one batch of the algorithm."""


class DecompositionError(BanditError, ValueError):
    """A graph admits no C-anonymous decomposition, or a decomposition failed verification."""


def assumption_error(assumption: str, name: str, value: object, allowed: str) -> AssumptionError:
    """The standard message, prefixed by the assumption that fails."""
    return AssumptionError(f"{assumption}: {name} must be {allowed}; got {value!r}")
