"""The accountant interface every accountant implements.

An accountant interprets events: `compose(event, count)` checks first and only
then mutates; `supports(event)` is true exactly when `compose` would succeed;
`epsilon(delta)` and `delta(epsilon)` answer for everything composed so far.
Dispatch is by leaf type through a per-class registry (`leaf_costs`), never a
long isinstance chain: composed, repeated and tree events are expanded into
their leaves by `events.flatten`.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from ..errors import NotDifferentiallyPrivateError, UnsupportedEventError
from ..events import NotDifferentiallyPrivate, PrivacyEvent, RepeatedEvent, flatten
from ..validation import check_count, check_delta, check_nonnegative


class Accountant(ABC):
    """Base class: holds the composed events and a summary state `_state`.

    Subclasses set `name`, `leaf_costs` (leaf type -> function(leaf, count) ->
    cost) and implement `_initial_state`, `_add(state, cost)`, `_epsilon`,
    `_delta`.  States are values: `_add` returns a new state and never mutates
    its input, which is what makes `copy` O(1) (a ledger copies its accountant
    on every charge).
    """

    name: ClassVar[str] = "accountant"
    # True for accountants of approximate DP: at delta = 0 they bound no useful
    # epsilon (infinite for Gaussian events), so a ledger with delta 0 refuses them.
    needs_delta: ClassVar[bool] = False
    leaf_costs: ClassVar[dict[type, Callable[[Any, int], Any]]] = {}

    def __init__(self) -> None:
        # Events live in a persistent linked list (previous node, event): a copy
        # shares it, and composing into the copy only adds a node of its own.
        self._log: tuple | None = None
        self._releases = 0
        self._state = self._initial_state()

    # -- composition -----------------------------------------------------
    def compose(self, event: PrivacyEvent, count: int = 1) -> Accountant:
        """Compose `count` copies of `event`; raise and change nothing if unsupported."""
        count = check_count("count", count)
        costs = self._costs(event, count)  # raises before any mutation
        state = self._state
        for cost in costs:
            state = self._add(state, cost)
        self._state = state
        self._log = (self._log, event if count == 1 else RepeatedEvent(event, count))
        self._releases += 1
        return self

    def supports(self, event: object) -> bool:
        """True exactly when `compose(event)` would succeed."""
        try:
            self._costs(event, 1)  # type: ignore[arg-type]
        except UnsupportedEventError:
            return False
        return True

    def _costs(self, event: PrivacyEvent, count: int) -> list[Any]:
        costs = []
        for leaf, k in flatten(event):
            if isinstance(leaf, NotDifferentiallyPrivate):
                raise NotDifferentiallyPrivateError(
                    f"{self.name} accountant refuses {leaf!r}: the release is not "
                    f"differentially private ({leaf.reason})"
                )
            fn = self._lookup(type(leaf))
            if fn is None:
                raise UnsupportedEventError(
                    f"{self.name} accountant does not support {type(leaf).__name__} "
                    f"({leaf!r}); supported: "
                    f"{', '.join(t.__name__ for t in self.leaf_costs) or 'none'}"
                )
            costs.append(fn(leaf, k * count))
        return costs

    @classmethod
    def _lookup(cls, leaf_type: type):
        for t in leaf_type.__mro__:
            if t in cls.leaf_costs:
                return cls.leaf_costs[t]
        return None

    @property
    def events(self) -> tuple[PrivacyEvent, ...]:
        """Every event accepted so far, in order."""
        out = []
        node = self._log
        while node is not None:
            node, event = node
            out.append(event)
        return tuple(reversed(out))

    @property
    def releases(self) -> int:
        """How many `compose` calls were accepted (len(events), in O(1))."""
        return self._releases

    def copy(self) -> Accountant:
        """An independent copy in O(1): the event log is shared, states are values."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)  # not copy.copy: that would flatten the log
        return new

    def __getstate__(self) -> dict:
        # Flatten the linked log so pickling never recurses once per event.
        state = dict(self.__dict__)
        state["_log"] = self.events
        return state

    def __setstate__(self, state: dict) -> None:
        events = state.pop("_log")
        self.__dict__.update(state)
        self._log = None
        for event in events:
            self._log = (self._log, event)

    # -- queries ----------------------------------------------------------
    def epsilon(self, delta: float) -> float:
        """Smallest epsilon this accountant certifies at `delta` for all composed events."""
        delta = check_delta("delta", delta)
        if not self._releases:
            return 0.0
        return float(self._epsilon(delta))

    def delta(self, epsilon: float) -> float:
        """Smallest delta this accountant certifies at `epsilon`."""
        epsilon = check_nonnegative("epsilon", epsilon)
        if not self._releases:
            return 0.0
        return float(min(1.0, max(0.0, self._delta(epsilon))))

    # -- subclass hooks ---------------------------------------------------
    @abstractmethod
    def _initial_state(self) -> Any: ...

    @abstractmethod
    def _add(self, state: Any, cost: Any) -> Any: ...

    @abstractmethod
    def _epsilon(self, delta: float) -> float: ...

    @abstractmethod
    def _delta(self, epsilon: float) -> float: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}(releases={self._releases})"
