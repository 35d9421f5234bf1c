"""Errors of the federated MAB package (subclasses of privbandit's ConfigError)."""
from __future__ import annotations

from ..errors import ConfigError


class GraphError(ConfigError):
    """A communication graph is malformed (not square, not symmetric, self-loops...)."""


class DisconnectedGraphError(GraphError):
    """A graph that must be connected (DDP-MAB's network, a component) is not."""


class RoundsBelowBoundWarning(UserWarning):
    """An R-round schedule below seed 002's condition R >= 2 ln T / ln M."""
