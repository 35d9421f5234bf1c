"""The confidence radius beta of the cascading agents (seed 001, Lemma 1 / Appendix Lemma 6).

With the det-ratio trigger of threshold alpha_c, n agents, lists of K items,
horizon T, ridge regulariser lam, sub-Gaussian scale R and ||theta|| <= S,
the paper's radius (Appendix eq. 55) is

    beta = sqrt(lam) S + R (sqrt(1 + n alpha_c) + n sqrt(2 alpha_c))
           * sqrt(d ln(1 + K T / (min(1, alpha_c) lam d)) + 2 ln(1/confidence) + 4 ln(T n)).

Without communication (alpha_c = 0, one agent alone) the buffer terms vanish
and it is the radius of one agent's own ridge estimate.  The value is large
(hundreds at the paper's scale), so practice multiplies it by a small
`beta_scale` or uses a constant; `CascadeRadius` offers both.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from ..policies.radius import RadiusSettings


def lemma6_beta(
    *,
    dim: int,
    n_users: int,
    alpha_c: float,
    list_len: int,
    horizon: int,
    lam: float,
    noise_scale: float = 0.5,
    theta_bound: float = 1.0,
    confidence: float = 0.1,
) -> float:
    """The radius of seed 001 Appendix eq. (55); alpha_c = 0 means no buffering (one agent)."""
    buffer = math.sqrt(1.0 + n_users * alpha_c) + n_users * math.sqrt(2.0 * alpha_c)
    floor = lam * (min(1.0, alpha_c) if alpha_c > 0 else 1.0)
    inner = (
        dim * math.log1p(list_len * horizon / (floor * dim))
        + 2.0 * math.log(1.0 / confidence)
        + 4.0 * math.log(horizon * n_users)
    )
    return math.sqrt(lam) * theta_bound + noise_scale * buffer * math.sqrt(inner)


@dataclass(frozen=True)
class CascadeRadius(RadiusSettings):
    """beta = scale * lemma6_beta(...) for beta="lemma6", or scale * beta for a number >= 0.

    noise_scale R (1/2 for Bernoulli clicks), theta_bound S, confidence in (0, 1) (the
    radius' failure probability).
    """

    formula: ClassVar[str] = "lemma6"

    beta: float | str = 0.3

    def value(
        self, *, dim: int, n_users: int, alpha_c: float, list_len: int, horizon: int, lam: float
    ) -> float:
        """The radius for one algorithm's setting (constant over the run)."""
        if self.beta == "lemma6":
            return self.scale * lemma6_beta(
                dim=dim, n_users=n_users, alpha_c=alpha_c, list_len=list_len,
                horizon=horizon, lam=lam, noise_scale=self.noise_scale,
                theta_bound=self.theta_bound, confidence=self.confidence,
            )
        return self.scale * float(self.beta)
