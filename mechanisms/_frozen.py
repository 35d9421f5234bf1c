"""`Frozen`: the immutable, slotted base of mechanisms and samplers that still travel.

A frozen object refuses attribute assignment after construction, yet a worker
process (multiprocessing, joblib, Dask) must receive it and `copy.deepcopy`
must copy it.  Pickle and copy rebuild it from its slots through
`object.__setattr__`, without calling `__init__` again (its validation already
ran, and a mechanism's construction is what registers it on an audit tape).
"""
from __future__ import annotations

from typing import Any


class Frozen:
    """Slots fixed at construction; `__getstate__` / `__setstate__` carry them by name."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for cls in type(self).__mro__
                for name in getattr(cls, "__slots__", ()) if hasattr(self, name)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
