"""Errors raised by the accounting layer.

Every message says what was wrong, the value received and what is allowed.
"""
from __future__ import annotations


class PrivacyError(Exception):
    """Base class of every error privbandit raises on purpose."""


class InvalidParameterError(PrivacyError, ValueError):
    """A parameter is outside its allowed range (NaN, infinite, non-positive...)."""


class UnsupportedEventError(PrivacyError, TypeError):
    """An accountant was given an event it cannot interpret (it never guesses)."""


class NotDifferentiallyPrivateError(UnsupportedEventError):
    """A DP accountant met a `NotDifferentiallyPrivate` event."""


class BudgetExceededError(PrivacyError):
    """A ledger refused a charge: the release would exceed the budget."""


class MissingExtraError(PrivacyError, ImportError):
    """An optional part was used without the extra that installs its dependency."""


def require_extra(module: str, extra: str, feature: str):
    """Import `module`, or raise MissingExtraError naming the extra that provides it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise MissingExtraError(
            f"{feature} needs {module.split('.')[0]}, which the '{extra}' extra installs: "
            f'pip install "privbandit[{extra}]" (import failed: {err})') from None


def invalid(name: str, value: object, allowed: str) -> InvalidParameterError:
    """Build the standard message: parameter, value received, what is allowed."""
    return InvalidParameterError(f"{name} must be {allowed}; got {value!r}")
