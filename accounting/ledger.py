"""Ledgers: a privacy budget for one protected unit, charged before every release.

`recording_charges()` lists every charge that lands while it is open (an
end-to-end audit checks the list against the releases it recorded: whatever
a ledger paid for must have been released where the audit can see it).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Any

from .accountants import Accountant, make_accountant
from .errors import BudgetExceededError, invalid
from .events import NotDifferentiallyPrivate, PrivacyEvent
from .statement import PrivacyStatement
from .validation import check_count, check_delta, check_positive

# Relative slack so a release calibrated exactly to the budget is accepted.
_TOLERANCE = 1e-9

_CHARGES: ContextVar[list | None] = ContextVar("privbandit_charges", default=None)


@contextlib.contextmanager
def recording_charges() -> Iterator[list[tuple[str, PrivacyEvent, int]]]:
    """Inside the block every charge that lands on any ledger appends (unit, event, count) to
    the list this yields (a refused charge appends nothing).  Costs one context-variable
    read per charge when no block is open."""
    charges: list[tuple[str, PrivacyEvent, int]] = []
    token = _CHARGES.set(charges)
    try:
        yield charges
    finally:
        _CHARGES.reset(token)


class Ledger:
    """The budget (epsilon, delta) of one protected unit (a user, a cluster, a party).

    `charge(event)` composes the event into a copy of the accountant, checks the
    spent epsilon at the budget's delta (or, equivalently, the accountant's
    delta at the budget's epsilon: what calibration certifies), and only then
    commits: a refused charge raises `BudgetExceededError` and leaves the
    ledger unchanged.  Not-DP events
    are refused by the accountant; record them with `note` instead.
    """

    def __init__(
        self,
        unit: str,
        epsilon: float,
        delta: float = 0.0,
        accountant: "str | Accountant" = "pure-dp",
    ) -> None:
        if not isinstance(unit, str) or not unit:
            raise invalid("unit", unit, "a non-empty string naming the protected unit")
        self.unit = unit
        self.epsilon_budget = check_positive("epsilon", epsilon)
        self.delta_budget = check_delta("delta", delta)
        self._accountant = make_accountant(accountant)
        if self.delta_budget == 0.0 and self._accountant.needs_delta:
            raise invalid(
                "delta", delta,
                f"> 0 with the {self._accountant.name!r} accountant, which bounds epsilon only "
                "at a delta > 0 (for delta = 0 use accountant='pure-dp')")
        if self._accountant.releases:
            raise invalid("accountant", accountant, "a fresh accountant with no events")
        self._notes: list[NotDifferentiallyPrivate] = []
        self._spent = 0.0  # epsilon at delta_budget, recomputed only when a charge lands
        self.statement: PrivacyStatement | None = None

    @property
    def accountant(self) -> Accountant:
        """A copy of the accountant (the ledger's own cannot be mutated from outside)."""
        return self._accountant.copy()

    @property
    def events(self) -> tuple[PrivacyEvent, ...]:
        return self._accountant.events

    def can_charge(self, event: PrivacyEvent, count: int = 1) -> bool:
        """Would `charge(event, count)` succeed?"""
        try:
            self._trial(event, count)
        except BudgetExceededError:
            return False
        return True

    def charge(self, event: PrivacyEvent, count: int = 1) -> None:
        """Charge `count` copies of `event`; raise before anything changes if over budget."""
        self._accountant, self._spent = self._trial(event, count)
        watch = _CHARGES.get()
        if watch is not None:
            watch.append((self.unit, event, count))

    def _trial(self, event: PrivacyEvent, count: int) -> tuple[Accountant, float]:
        count = check_count("count", count)
        trial = self._accountant.copy().compose(event, count)
        spent = trial.epsilon(self.delta_budget)
        if spent > self.epsilon_budget * (1 + _TOLERANCE):
            # The budget fits as well when delta(epsilon budget) <= delta budget: the same
            # guarantee, read the way calibration certifies it (an accountant whose epsilon
            # search and delta rounding differ in the last digits never refuses its own
            # calibration).  Then the epsilon spent at the budget's delta is the budget's.
            if trial.delta(self.epsilon_budget) <= self.delta_budget:
                return trial, self.epsilon_budget
            raise BudgetExceededError(
                f"ledger {self.unit!r}: charging {event!r} x{count} would spend "
                f"epsilon={spent:.6g} at delta={self.delta_budget:g}, over the budget "
                f"epsilon={self.epsilon_budget:g}; nothing was charged"
            )
        return trial, spent

    def note(self, event: NotDifferentiallyPrivate) -> None:
        """Record a release whose protection is not DP (masks, k-anonymity)."""
        if not isinstance(event, NotDifferentiallyPrivate):
            raise invalid("event", event, "a NotDifferentiallyPrivate event (use charge for DP)")
        self._notes.append(event)

    def declare(self, statement: PrivacyStatement) -> None:
        """Record the guarantee stated for this ledger's unit (shown in `summary()`)."""
        if not isinstance(statement, PrivacyStatement):
            raise invalid("statement", statement, "a PrivacyStatement")
        self.statement = statement

    def spent(self) -> tuple[float, float]:
        """(epsilon spent at the budget's delta, that delta)."""
        return self._spent, self.delta_budget

    def remaining(self) -> float:
        """Epsilon left at the budget's delta (never negative)."""
        return max(0.0, self.epsilon_budget - self.spent()[0])

    def summary(self) -> dict[str, Any]:
        """A JSON-serialisable summary of the budget and what was spent."""
        eps, delta = self.spent()
        return {
            "unit": self.unit,
            "accountant": self._accountant.name,
            "epsilon_budget": self.epsilon_budget,
            "delta_budget": self.delta_budget,
            "epsilon_spent": eps,
            "epsilon_remaining": self.remaining(),
            "releases": self._accountant.releases,
            "not_dp_releases": [n.reason for n in self._notes],
            **({} if self.statement is None else {"statement": self.statement.to_dict()}),
        }

    def __repr__(self) -> str:
        eps, delta = self.spent()
        return (
            f"Ledger({self.unit!r}, spent epsilon={eps:.4g} of {self.epsilon_budget:g} "
            f"at delta={delta:g}, {self._accountant.name})"
        )
