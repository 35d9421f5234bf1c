"""`ConfidenceRadius`: the exploration radius beta of the UCB policies.

Either the theoretical radius of ridge regression, recomputed from the
model's log-determinant every round (Abbasi-Yadkori, Pal, Szepesvari 2011,
Thm 2; `kernels.oful_beta`), or a constant (Li et al. 2010's alpha; what the
seeds' experiments tune).  `scale` multiplies either.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from privbandit.accounting.validation import check_nonnegative

from ..errors import config_error


@dataclass(frozen=True)
class RadiusSettings:
    """What every UCB radius is set by: `beta` (the name of a theoretical formula,
    `formula`, or a constant >= 0), `scale` (multiplies either), R = noise_scale,
    confidence in (0, 1) (the radius' failure probability) and S = theta_bound.
    Subclasses name the formula and compute it.
    """

    formula: ClassVar[str]

    beta: float | str
    scale: float = 1.0
    noise_scale: float = 0.5
    confidence: float = 0.1
    theta_bound: float = 1.0

    def __post_init__(self) -> None:
        if self.beta != self.formula:
            if isinstance(self.beta, str):
                raise config_error("beta", self.beta, f"{self.formula!r} or a finite number >= 0")
            object.__setattr__(self, "beta", check_nonnegative("beta", self.beta))
        object.__setattr__(self, "scale", check_nonnegative("beta_scale", self.scale))
        object.__setattr__(self, "noise_scale", check_nonnegative("noise_scale", self.noise_scale))
        c = self.confidence
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0.0 < c < 1.0:
            raise config_error("confidence", c, "a failure probability in (0, 1)")
        object.__setattr__(self, "confidence", float(c))
        object.__setattr__(self, "theta_bound", check_nonnegative("theta_bound", self.theta_bound))

    def params(self) -> dict[str, Any]:
        return {
            "beta": self.beta, "beta_scale": self.scale, "noise_scale": self.noise_scale,
            "confidence": self.confidence, "theta_bound": self.theta_bound,
        }


@dataclass(frozen=True)
class ConfidenceRadius(RadiusSettings):
    """beta = scale * (R sqrt(2 ln(1/confidence) + ln det(V)/det(lam I)) + sqrt(lam) S) for
    beta="oful", or scale * beta for a constant beta >= 0.

    R = noise_scale (sub-Gaussian scale of the rewards; 1/2 for rewards in
    [0, 1]), S = theta_bound (bound on ||theta||), confidence in (0, 1).
    """

    formula: ClassVar[str] = "oful"

    beta: float | str = "oful"

    def __call__(self, logdet_ratio: float, lam: float) -> float:
        """The radius for a model with ln(det V / det(lam I)) = logdet_ratio."""
        if self.beta == "oful":
            r = self.noise_scale * math.sqrt(2.0 * math.log(1.0 / self.confidence) + logdet_ratio)
            return self.scale * (r + math.sqrt(lam) * self.theta_bound)
        return self.scale * self.beta

    def many(self, logdet_ratios: np.ndarray, lam: float) -> np.ndarray:
        """The radii of several models at once, (n,): the arithmetic of `__call__`."""
        if self.beta == "oful":
            r = self.noise_scale * np.sqrt(2.0 * math.log(1.0 / self.confidence) + logdet_ratios)
            return self.scale * (r + math.sqrt(lam) * self.theta_bound)
        return np.full(np.shape(logdet_ratios), self.scale * self.beta)
