"""Each agent's privacy: the Laplace epoch-means mechanism and per-epoch ledgers.

Guarantee (seed 002, Li & Song Sec. IV, stated for each agent separately):
pure epsilon-DP with respect to one reward in that agent's history.  In epoch r
an agent releases the K-vector of its epoch means, each over n_r = S(r) - S(r-1)
fresh rewards in [0, 1]; one reward moves one coordinate by at most 1/n_r (L1
sensitivity 1/n_r), so Laplace noise of scale 1/(epsilon n_r) makes the release
epsilon-DP.  Each reward enters exactly one epoch's release, so the whole
transcript is epsilon-DP by parallel composition over the disjoint epochs
(McSherry 2009, Theorem 4); running means, uploads, forwarding and
elimination are post-processing.

Accounting follows that argument: an agent has one `privbandit.accounting.Ledger` (pure
DP, budget epsilon) per epoch, the protected unit being "one reward of this
agent in this epoch", charged before the epoch's release; the agent's epsilon
is the largest any of its epoch ledgers spent (parallel composition), never
their sum.
"""
from __future__ import annotations

from typing import Any

from privbandit.accounting import Ledger
from privbandit.accounting.events import PrivacyEvent
from privbandit.accounting.statement import PrivacyStatement
from privbandit.accounting.validation import check_count
from privbandit.mechanisms.laplace import LaplaceMeans

from ..private.plan import LAPLACE, ReleasePlan

UNIT = "agent-level: one reward in one agent's history differs"


def epoch_plan(epsilon: float, sampler, horizon: int = 1) -> ReleasePlan:
    """The family's release plan: pure epsilon per reward, one Laplace release an epoch."""
    return ReleasePlan(epsilon, 0.0, horizon, LAPLACE, "every-round", sampler=sampler)


def epoch_mechanism(epsilon: float, n_rewards: int, sampler) -> LaplaceMeans:
    """The Laplace means mechanism for epoch means over `n_rewards` rewards in [0, 1]."""
    return epoch_plan(epsilon, sampler).laplace_means(n_rewards)


class AgentLedgers:
    """One agent's ledgers, one per epoch (disjoint reward sets), each with the plan's
    budget epsilon."""

    def __init__(self, agent: int, plan: ReleasePlan) -> None:
        self.agent = check_count("agent", agent, minimum=0)
        self.plan, self.epsilon = plan, plan.epsilon
        self.unit = f"agent {self.agent} (one reward)"
        self.statement: PrivacyStatement | None = None
        self._ledgers: dict[int, Ledger] = {}
        self._spent = 0.0  # the maximum over the epoch ledgers

    def declare(self, statement: PrivacyStatement) -> None:
        """Record the guarantee stated for this agent (shown in `summary()`)."""
        self.statement = statement

    def charge(self, epoch: int, event: PrivacyEvent) -> None:
        """Charge the release of `epoch`'s means; raises `BudgetExceededError` first if over."""
        ledger = self._ledgers.get(epoch)
        if ledger is None:
            ledger = self.plan.ledger(f"agent {self.agent}, one reward of epoch {epoch}")
        ledger.charge(event)
        self._ledgers[epoch] = ledger
        self._spent = max(self._spent, ledger.spent()[0])

    @property
    def releases(self) -> int:
        return sum(len(led.events) for led in self._ledgers.values())

    def epsilon_spent(self) -> float:
        """The agent's epsilon: the maximum over its epoch ledgers (parallel composition)."""
        return self._spent

    def spent(self) -> tuple[float, float]:
        """(epsilon spent, delta = 0), as a `Ledger` reports it."""
        return self.epsilon_spent(), 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "accountant": "pure-dp",
            "composition": "parallel over disjoint epochs (max of the epoch ledgers)",
            "epsilon_budget": self.epsilon,
            "delta_budget": 0.0,
            "epsilon_spent": self.epsilon_spent(),
            "releases": self.releases,
            "epochs": [led.summary() for led in self._ledgers.values()],
            **({} if self.statement is None else {"statement": self.statement.to_dict()}),
        }


def charge_all(ledgers: list[AgentLedgers], epoch: int, event: PrivacyEvent) -> None:
    """Charge every agent's epoch-`epoch` ledger (one release each) before the release."""
    for ledger in ledgers:
        ledger.charge(epoch, event)
