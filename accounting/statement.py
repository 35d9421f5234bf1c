"""`PrivacyStatement`: the typed guarantee a run (or one ledger's unit) states.

A statement says what is protected and how: the neighbouring relation or
unit (`Relation`), epsilon and delta, the accountant that certifies them,
and whether the noise came from a floating-point-safe sampler.  Non-DP
protections (k-anonymity, masking) and non-private runs are statements too,
with `epsilon=None`, so a reader never mistakes them for DP.

JSON form (`to_dict`, read back by `from_dict`), stable, with exactly these
keys in this order:

    relation     one of the `Relation` values, e.g. "interactive" (the only one that
                 holds for the environment's data of an adaptive algorithm)
    epsilon      a number > 0 for a DP relation, else null
    delta        a number in [0, 1) (0 for pure DP and for non-DP statements)
    accountant   the accountant's name ("pure-dp", "exact-gaussian", ...), or null
    float_safe   true / false: whether every noise draw was floating-point safe;
                 null when no noise is drawn
    unit         the protected unit in words ("one observation of one local cluster")
    statement    one line a person reads
    details      numbers specific to the algorithm (noise scales, counts, ...)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .errors import invalid
from .plain import to_plain


class Relation(str, Enum):
    """The neighbouring relation, or the kind of protection, a statement is about.

    Only INTERACTIVE protects anyone in an algorithm that chooses its own
    actions: a changed reward changes later actions and so later records, so
    a guarantee over realised records (RECORD, CLUSTER) of such an algorithm
    says nothing about the environment's data (docs/privacy_relations.md).
    """

    INTERACTIVE = "interactive"  # one user-round's reward in the environment; view: all releases
    RECORD = "record-level"    # one observation (x_t, y_t) of a given stream differs
    CLUSTER = "cluster-level"  # one observation of one local cluster (seed 000, Definition 1)
    AGENT = "agent-level"      # one reward in one agent's history (seed 002)
    USER = "user-level"        # everything one user contributes
    K_ANONYMITY = "k-anonymity"  # a constraint on observations, not DP (seed 004)
    MASKING = "masking"        # semi-honest, non-colluding parties, not DP (seed 003)
    NONE = "none"              # no protection

    @property
    def is_dp(self) -> bool:
        """True for the neighbouring relations of differential privacy."""
        return self in (Relation.INTERACTIVE, Relation.RECORD, Relation.CLUSTER, Relation.AGENT,
                        Relation.USER)


JSON_KEYS = ("relation", "epsilon", "delta", "accountant", "float_safe", "unit", "statement",
             "details")


@dataclass(frozen=True)
class PrivacyStatement:
    """A guarantee: relation, (epsilon, delta), accountant, sampler safety, and words.

    relation: a `Relation` (or its value); epsilon: > 0 exactly when the
    relation is a DP one, else None; delta in [0, 1) (0 when not DP);
    accountant: the certifying accountant's name (required for DP);
    float_safe: None when no noise is drawn, else whether the sampler is
    floating-point safe; unit, summary: words; details: JSON-plain numbers.
    """

    relation: Relation
    epsilon: float | None = None
    delta: float = 0.0
    accountant: str | None = None
    float_safe: bool | None = None
    unit: str = ""
    summary: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        try:
            relation = Relation(self.relation)
        except ValueError:
            raise invalid("relation", self.relation,
                          f"one of {[r.value for r in Relation]}") from None
        set_(self, "relation", relation)
        if relation.is_dp:
            eps = self.epsilon
            if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not (
                    math.isfinite(eps) and eps > 0):
                raise invalid("epsilon", eps, f"a finite number > 0 for a {relation.value} "
                                              "guarantee")
            delta = self.delta
            if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not (
                    0.0 <= delta < 1.0):
                raise invalid("delta", delta, "a number in [0, 1)")
            if not isinstance(self.accountant, str) or not self.accountant:
                raise invalid("accountant", self.accountant,
                              "the name of the accountant that certifies the guarantee")
            set_(self, "epsilon", float(eps))
            set_(self, "delta", float(delta))
        elif self.epsilon is not None or self.delta != 0.0:
            raise invalid("epsilon", (self.epsilon, self.delta),
                          f"(None, 0) for a {relation.value} statement (not DP)")
        if self.float_safe is not None and not isinstance(self.float_safe, bool):
            raise invalid("float_safe", self.float_safe, "True, False or None (no noise)")
        for name in ("unit", "summary"):
            if not isinstance(getattr(self, name), str):
                raise invalid(name, getattr(self, name), "a string")
        if not isinstance(self.details, dict):
            raise invalid("details", self.details, "a dict")
        set_(self, "details", to_plain(self.details))

    @property
    def is_dp(self) -> bool:
        """True when the statement is a differential-privacy guarantee."""
        return self.relation.is_dp

    @property
    def holds_interactively(self) -> bool:
        """Whether the guarantee holds under the interactive relation (one user-round's
        reward in the environment differs; the view is the whole run's releases)."""
        return self.relation is Relation.INTERACTIVE

    @classmethod
    def none(cls, reason: str) -> "PrivacyStatement":
        """The statement of a non-private algorithm."""
        return cls(Relation.NONE, summary=f"none: {reason}")

    def to_dict(self) -> dict[str, Any]:
        """The stable JSON form (see the module docstring)."""
        values = (self.relation.value, self.epsilon, self.delta, self.accountant,
                  self.float_safe, self.unit, self.summary, self.details)
        return dict(zip(JSON_KEYS, values, strict=True))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PrivacyStatement":
        """Read the JSON form back; unknown or missing keys are refused."""
        if not isinstance(data, dict) or set(data) != set(JSON_KEYS):
            keys = sorted(data) if isinstance(data, dict) else data
            raise invalid("statement", keys, f"a dict with exactly the keys {list(JSON_KEYS)}")
        return cls(data["relation"], data["epsilon"], data["delta"], data["accountant"],
                   data["float_safe"], data["unit"], data["statement"], dict(data["details"]))
