"""`TieTolerant`: break near-ties of a score-based policy by the lowest index.

LinUCB on Q x and LinUCB on x compute the same scores only up to rounding
(about 1e-16).  When scores tie exactly in exact arithmetic, as every item
does at t = 0 with unit-norm items (all widths equal beta / sqrt(lam)), a
plain argmax picks whichever item rounding favours, and the two runs part
ways.  Wrapping both sides in `TieTolerant` makes the rule "lowest index
among the scores within `tolerance` (relative) of the best", which both
compute identically, so the decisions agree round for round as seed 003's
Theorem 4.1 says they should.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from privbandit.accounting.statement import PrivacyStatement
from privbandit.accounting.validation import check_positive

from ..errors import config_error
from ..policies.base import Policy


class TieTolerant(Policy):
    """A policy with `scores(items, user)` (e.g. LinUCB) whose argmax ignores rounding noise.

    Everything but `select` is the wrapped policy's.  Privacy guarantee: that
    of the wrapped policy (this changes no data flow).
    """

    def __init__(self, policy: Policy, tolerance: float = 1e-9) -> None:
        if not isinstance(policy, Policy) or not callable(getattr(policy, "scores", None)):
            raise config_error("policy", policy, "a Policy with a scores(items, user) method")
        self.policy = policy
        self.tolerance = check_positive("tolerance", tolerance)
        self.name = policy.name
        self.dim = policy.dim

    def select(self, items: np.ndarray, user: int, t: int, rng: np.random.Generator) -> int:
        scores = self.policy.scores(items, user)
        best = scores.max()
        return int(np.argmax(scores >= best - self.tolerance * (1.0 + abs(best))))

    def update(self, items: np.ndarray, user: int, action: Any, feedback: Any, t: int) -> None:
        self.policy.update(items, user, action, feedback, t)

    def scores(self, items: np.ndarray, user: int) -> np.ndarray:
        return self.policy.scores(items, user)

    def params(self) -> dict[str, Any]:
        return {**self.policy.params(), "tie_tolerance": self.tolerance}

    def privacy(self) -> PrivacyStatement:
        return self.policy.privacy()
