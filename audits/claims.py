"""What an audit checks: a claimed (epsilon, delta) guarantee and a neighbouring pair.

`Claim(epsilon, delta, source)` is the guarantee under test; `Claim.from_event`
reads it off a mechanism's privacy event through an accountant, so an audit
checks exactly what the ledger would charge.  `NeighbouringPair(dataset,
neighbour, relation, description)` is one pair of inputs that the stated
neighbouring relation (docs/privacy_relations.md) allows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from privbandit.accounting.accountants import make_accountant
from privbandit.accounting.errors import (
    NotDifferentiallyPrivateError,
    UnsupportedEventError,
    invalid,
)
from privbandit.accounting.events import PrivacyEvent
from privbandit.accounting.validation import check_delta, check_nonnegative

# Accountants tried, in order, when `from_event` is not told which one to use: the exact
# one first; zCDP reads the secure sums (distributed discrete Gaussian) the others refuse.
_DEFAULT_ACCOUNTANTS = ("pure-dp", "exact-gaussian", "zcdp")


@dataclass(frozen=True)
class Claim:
    """A claimed (epsilon, delta)-DP guarantee; `source` says where it comes from."""

    epsilon: float
    delta: float = 0.0
    source: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_nonnegative("epsilon", self.epsilon))
        object.__setattr__(self, "delta", check_delta("delta", self.delta))

    @classmethod
    def from_event(
        cls, event: PrivacyEvent, delta: float = 0.0, accountant: "str | None" = None
    ) -> "Claim":
        """The epsilon an accountant certifies for `event` at `delta`.

        Without `accountant`, the first of pure-dp, exact-gaussian and zcdp
        that supports the event is used; an event none supports raises
        `UnsupportedEventError`, a not-DP one `NotDifferentiallyPrivateError`.
        """
        names = (accountant,) if accountant is not None else _DEFAULT_ACCOUNTANTS
        last: Exception | None = None
        for name in names:
            acc = make_accountant(name)
            try:
                acc.compose(event)
            except NotDifferentiallyPrivateError:
                raise  # no accountant will give a not-DP release a number
            except UnsupportedEventError as err:
                last = err
                continue
            return cls(acc.epsilon(delta), delta, f"{acc.name} accountant on {event!r}")
        raise UnsupportedEventError(f"no accountant of {names} supports {event!r}: {last}")


@dataclass(frozen=True)
class NeighbouringPair:
    """Two inputs that differ as `relation` allows (e.g. "record-level: one reward")."""

    dataset: Any
    neighbour: Any
    relation: str
    description: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.relation, str) or not self.relation.strip():
            raise invalid("relation", self.relation, "a non-empty string naming the relation")
