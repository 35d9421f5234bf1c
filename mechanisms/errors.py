"""Errors raised by the mechanisms layer (all subclass accounting's PrivacyError).

All are importable from `privbandit.mechanisms`, with the accounting errors a
mechanism raises too (`InvalidParameterError` for a bad parameter).  Bad input
raises a ValueError subclass (`ShapeError`, `OutOfBoundsError`,
`HorizonExceededError`, `MaskError`, `InvalidParameterError`); `SealError` (a
message that fails its checks on the wire) and `AnonymityError` (a group
below the threshold) are refusals of what arrived, not of a parameter.
"""
from __future__ import annotations

from privbandit.accounting.errors import InvalidParameterError, PrivacyError


class MechanismError(PrivacyError):
    """Base class of mechanism errors."""


class ShapeError(MechanismError, ValueError):
    """A value has the wrong shape or dtype for this mechanism."""


class OutOfBoundsError(InvalidParameterError):
    """An input lies outside the mechanism's declared bounds (reject mode)."""


class HorizonExceededError(MechanismError, ValueError):
    """A streaming mechanism was asked for more releases than its declared horizon.

    A ValueError like the other bad-input errors: the call asked for a release
    the stream was not built (or charged) for; nothing changed.
    """


class MaskError(MechanismError, ValueError):
    """An orthogonal mask, its partition or a masked batch is invalid."""


class SealError(MechanismError):
    """A sealed message was tampered, truncated, replayed or misaddressed."""


class AnonymityError(MechanismError):
    """An aggregate was requested for a group below the anonymity threshold C."""


class TooFewSurvivorsError(MechanismError):
    """A secure sum was asked to release with fewer surviving parties than its minimum."""
