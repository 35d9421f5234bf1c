"""Errors raised by the bandit layer (all subclass accounting's error classes).

Messages say what was wrong, the value received and what is allowed; build
parameter errors with `privbandit.accounting.errors.invalid` or `config_error` below.
"""
from __future__ import annotations

from privbandit.accounting.errors import InvalidParameterError, PrivacyError


class BanditError(PrivacyError):
    """Base class of errors of environments, policies, runs and data loaders."""


class ConfigError(InvalidParameterError):
    """A constructor or run parameter is outside its allowed range."""


class ShapeError(BanditError, ValueError):
    """An array (contexts, items, rewards, actions) has the wrong shape or dtype."""


class RewardError(BanditError, ValueError):
    """A reward or feedback value is NaN, infinite or outside its declared range."""


class NormBoundError(InvalidParameterError):
    """A context vector's norm exceeds the bound the policy or environment declared."""


class HorizonError(BanditError):
    """An environment or run was asked for a round beyond its horizon."""


class FolderBusyError(BanditError):
    """A results folder is locked by another process (a study runs in it)."""


class DataError(BanditError, ValueError):
    """A ratings file is missing, malformed, or too small for the request."""


def config_error(name: str, value: object, allowed: str) -> ConfigError:
    """The standard message (parameter, value received, what is allowed) as a ConfigError."""
    return ConfigError(f"{name} must be {allowed}; got {value!r}")
