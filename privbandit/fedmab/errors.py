"""Errors of the federated MAB package (subclasses of privbandit's ConfigError)."""
from __future__ import annotations

from ..errors import ConfigError


class GraphError(ConfigError):
    """A communication graph is malformed (not square, not symmetric, self-loops...)."""


class DisconnectedGraphError(GraphError):
    """A graph that must be connected (DDP-MAB's network, a component) is not."""
