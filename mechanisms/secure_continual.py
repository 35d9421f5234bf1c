"""Continual release over secure sums by name: "tree" or "mf" (`secure_stream`).

    secure_continual_release(mechanism, parties, shape, horizon, **options) -> SecureStream
"""
from __future__ import annotations

from privbandit.accounting.errors import invalid

from ._checks import check_choice
from .continual import keyword_options
from .secure_factorization import SecureFactorization
from .secure_stream import SecureStream
from .secure_tree import SecureTree

SECURE_CONTINUAL_MECHANISMS: dict[str, type[SecureStream]] = {
    "tree": SecureTree,
    "mf": SecureFactorization,
}


def secure_continual_release(mechanism: str, parties: int, shape: object, horizon: int,
                             **options) -> SecureStream:
    """A continual-release stream over secure sums by name (`secure_stream`'s docstring)."""
    cls = SECURE_CONTINUAL_MECHANISMS[check_choice("mechanism", mechanism,
                                                   SECURE_CONTINUAL_MECHANISMS)]
    allowed = keyword_options(SecureStream, cls)
    for name in options:
        if name not in allowed:
            raise invalid("options", name, f"an option of {mechanism!r}: one of {allowed}")
    return cls(parties, shape, horizon, **options)
