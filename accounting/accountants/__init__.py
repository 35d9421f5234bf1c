"""Accountants: interpret privacy events into (epsilon, delta) guarantees.

`ACCOUNTANTS` maps each registered name to its class; `make_accountant` builds
one by name.  To add an accountant, subclass `Accountant` (see `base.py`) and
decorate it with `register` (or call `register(cls)` once at import).
"""
from __future__ import annotations

from ..errors import invalid
from .approx import (
    ApproxDPAccountant,
    advanced_composition_delta,
    basic_composition_delta,
    optimal_homogeneous_delta,
)
from .base import Accountant
from .gaussian import ExactGaussianAccountant, gaussian_delta, gaussian_epsilon
from .pld import LossDistribution, PLDAccountant, gaussian_pld, laplace_pld
from .pure import PureDPAccountant
from .rdp import DEFAULT_ORDERS, RDPAccountant, gaussian_rdp, laplace_rdp, rdp_delta, rdp_epsilon
from .zcdp import ZCDPAccountant, zcdp_delta, zcdp_epsilon

ACCOUNTANTS: dict[str, type[Accountant]] = {}


def register(cls: type[Accountant]) -> type[Accountant]:
    """Register an accountant class under its `name` (usable as a decorator)."""
    if not (isinstance(cls, type) and issubclass(cls, Accountant)):
        raise invalid("cls", cls, "a subclass of Accountant")
    ACCOUNTANTS[cls.name] = cls
    return cls


for _cls in (
    PureDPAccountant, ApproxDPAccountant, ZCDPAccountant, RDPAccountant, ExactGaussianAccountant,
    PLDAccountant,
):
    register(_cls)


def make_accountant(spec: str | Accountant) -> Accountant:
    """An accountant from a registered name, or the instance itself."""
    if isinstance(spec, Accountant):
        return spec
    if isinstance(spec, str) and spec in ACCOUNTANTS:
        return ACCOUNTANTS[spec]()
    raise invalid("accountant", spec, f"an Accountant or one of {sorted(ACCOUNTANTS)}")


__all__ = [
    "ACCOUNTANTS",
    "Accountant",
    "ApproxDPAccountant",
    "DEFAULT_ORDERS",
    "ExactGaussianAccountant",
    "LossDistribution",
    "PLDAccountant",
    "PureDPAccountant",
    "RDPAccountant",
    "ZCDPAccountant",
    "advanced_composition_delta",
    "basic_composition_delta",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_pld",
    "gaussian_rdp",
    "laplace_pld",
    "laplace_rdp",
    "make_accountant",
    "optimal_homogeneous_delta",
    "rdp_delta",
    "rdp_epsilon",
    "register",
    "zcdp_delta",
    "zcdp_epsilon",
]
