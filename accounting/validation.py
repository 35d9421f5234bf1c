"""Validators shared by every layer: one place, one message format."""
from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import InvalidParameterError, invalid


def _real(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise invalid(name, value, "a real number")
    return float(value)


def check_positive(name: str, value: object) -> float:
    """A finite real number > 0."""
    x = _real(name, value)
    if not (math.isfinite(x) and x > 0):
        raise invalid(name, value, "a finite number > 0")
    return x


def check_nonnegative(name: str, value: object) -> float:
    """A finite real number >= 0."""
    x = _real(name, value)
    if not (math.isfinite(x) and x >= 0):
        raise invalid(name, value, "a finite number >= 0")
    return x


def check_delta(name: str, value: object) -> float:
    """A probability in [0, 1)."""
    x = _real(name, value)
    if not (0.0 <= x < 1.0):
        raise invalid(name, value, "a number in [0, 1)")
    return x


def check_count(name: str, value: object, minimum: int = 1) -> int:
    """An integer >= minimum (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise invalid(name, value, f"an integer >= {minimum}")
    if value < minimum:
        raise invalid(name, value, f"an integer >= {minimum}")
    return int(value)


def as_array(name: str, value: object) -> np.ndarray:
    """`value` as a NumPy array, or an error naming `name` when it is not rectangular.

    NumPy refuses ragged nesting ([[1, 2], [3]]) with a message that names no
    argument; this says which argument was ragged.  Dtype checks are the
    caller's (an array of strings or objects comes back as it is).
    """
    try:
        return np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise InvalidParameterError(
            f"{name} must be a rectangular array of numbers (nested sequences of equal "
            f"lengths); got a ragged {type(value).__name__} ({exc})") from None
