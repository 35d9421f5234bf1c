"""Errors of the vertical federated protocol (subclasses of privbandit's errors).

A party that sends the wrong shape raises `privbandit.errors.ShapeError`; a
sealed message that is tampered with or addressed to someone else raises
`privbandit.mechanisms.errors.SealError` (from `privbandit.mechanisms.sealing`); widths that do not
sum to d raise `privbandit.errors.ConfigError` or `privbandit.mechanisms.errors.MaskError`.
What is left is a message that breaks the protocol itself.
"""
from __future__ import annotations

from ..errors import BanditError


class ProtocolError(BanditError, ValueError):
    """A message is malformed, out of order, from the wrong party, or arrives twice."""
