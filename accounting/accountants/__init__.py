"""Accountants: interpret privacy events into (epsilon, delta) guarantees."""
from __future__ import annotations

from ..errors import invalid
from .base import Accountant
from .gaussian import ExactGaussianAccountant, gaussian_delta, gaussian_epsilon
from .pure import PureDPAccountant

ACCOUNTANTS: dict[str, type[Accountant]] = {
    PureDPAccountant.name: PureDPAccountant,
    ExactGaussianAccountant.name: ExactGaussianAccountant,
}


def register(cls: type[Accountant]) -> type[Accountant]:
    """Register an accountant class under its `name` (usable as a decorator)."""
    ACCOUNTANTS[cls.name] = cls
    return cls


def make_accountant(spec: "str | Accountant") -> Accountant:
    """An accountant from a registered name, or the instance itself."""
    if isinstance(spec, Accountant):
        return spec
    if isinstance(spec, str) and spec in ACCOUNTANTS:
        return ACCOUNTANTS[spec]()
    raise invalid("accountant", spec, f"an Accountant or one of {sorted(ACCOUNTANTS)}")


__all__ = [
    "ACCOUNTANTS",
    "Accountant",
    "ExactGaussianAccountant",
    "PureDPAccountant",
    "gaussian_delta",
    "gaussian_epsilon",
    "make_accountant",
    "register",
]
