"""Ridge estimates from privatized statistics, with confidence radii that count the noise.

A model's statistics are a (d+1) x (d+1) matrix sum z z^T, z = [x; y], whose
d x d block is the Gram matrix and whose last column holds sum y x.  Some of
it may be a party's own raw data, the rest released by other parties with
symmetric Gaussian noise of known per-entry variance v (off-diagonal entries;
the diagonal has 2 v, see `privbandit.mechanisms.samplers`).  With M_obs =
Gram + noise + lam I and b_obs the moment column,

    theta_hat - theta = M^-1 (xi + w - (lam + c) theta),    M = M_obs + c I,

where xi = sum x eta is the reward noise (a self-normalised martingale),
w = N_(1:d, :) (theta; -1) is the privacy noise applied to the fixed vector
(theta; -1), and c >= 0 an optional shift.  Bounds used (each with failure
probability `noise_failure` per use, union-bounded by the caller):

- ||N||_op <= rho(v) = sqrt(v) (2 sqrt(2 d) + 2 sqrt(ln 1/a))  (symmetric
  Gaussian matrix: E||N|| <= 2 sqrt(2 d v), Lipschitz sqrt(2 v));
- ||w|| <= sqrt(S^2 + 1) sqrt(v) (sqrt(d + 1) + 2 sqrt(ln 1/a))  (w is a fixed
  linear map of the noise: E||w||^2 <= (d + 1) v ||u||^2, Lipschitz
  sqrt(2 v) ||u||, u = (theta; -1), ||theta|| <= S);
- ||xi||_(A^-1) <= R sqrt(2 ln(1/alpha) + ln det(A / lam I)), A = Gram + lam I
  (Abbasi-Yadkori, Pal & Szepesvari 2011, Thm 1).

Radius (`radius`): ||theta_hat - theta||_M <= beta with

- shift c = rho (when lambda_min(M_obs) <= 2 rho): M >= A, so
  beta = R sqrt(2 ln(1/alpha) + ln det M - d ln lam)
         + (||w|| + (lam + rho) S) / sqrt(lambda_min(M));
- no shift (lambda_min(M_obs) > 2 rho): M >= (1 - q) A with q = rho / (lambda_min(M) - rho),
  det A <= det(M + rho I), so
  beta = R sqrt((2 ln(1/alpha) + ln det(M + rho I) - d ln lam) / (1 - q))
         + (||w|| + lam S) / sqrt(lambda_min(M)).

Every term is computed from released quantities and public constants, so the
radius is post-processing.  Compared with Shariff & Sheffet's (2018) form
(shift 2 rho, bias S sqrt(3 rho)), the noise terms shrink like
1 / sqrt(lambda_min(M)) as data accumulate instead of staying fixed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privbandit.mechanisms.noise_bounds import symmetric_noise_norm_bound


def matrix_noise_bound(variance: float, dim: int, failure: float) -> float:
    """rho(v): a (1 - failure) bound on ||N||_op of a d x d symmetric Gaussian block
    (`mechanisms.symmetric_noise_norm_bound`), 0 without noise."""
    return 0.0 if variance <= 0.0 else symmetric_noise_norm_bound(variance, dim, failure)


def applied_noise_bound(variance: float, dim: int, failure: float, theta_bound: float) -> float:
    """A (1 - failure) bound on ||w||, w = N_(1:d, :) (theta; -1), ||theta|| <= theta_bound."""
    if variance <= 0.0:
        return 0.0
    scale = math.sqrt((theta_bound**2 + 1.0) * variance)
    return scale * (math.sqrt(dim + 1.0) + 2.0 * math.sqrt(math.log(1.0 / failure)))


def pooled_bias(items: np.ndarray, resolution: float) -> np.ndarray:
    """resolution ||x_k|| for (K, d) items: the bias of a model pooled over units whose
    preferences differ by less than the merge tests' resolution (exact when their data are
    alike; a matrix-weighted average can reach further)."""
    return resolution * np.sqrt(np.einsum("kd,kd->k", items, items))


@dataclass(frozen=True)
class RidgeModel:
    """A ridge estimate from noisy statistics: M, M^-1, theta = M^-1 b, b and its radius."""

    matrix: np.ndarray
    inverse: np.ndarray
    theta: np.ndarray
    moment: np.ndarray
    beta: float


@dataclass(frozen=True)
class NoisyRidge:
    """What the radius and the estimate need, with the noise of the statistics known.

    lam: ridge regulariser; noise_scale: R (sub-Gaussian scale of rewards);
    theta_bound: S; confidence: alpha of the martingale bound; noise_failure:
    the failure probability of each use of a noise bound.
    """

    dim: int
    lam: float
    noise_scale: float
    theta_bound: float
    confidence: float
    noise_failure: float

    def shift(self, gram: np.ndarray, variance: float, margin: float = 2.0) -> float:
        """0 when lambda_min(gram + lam I) > margin rho(v), else rho(v).

        The radius needs margin 2 (q < 1 below); an estimate used only for
        testing needs a positive definite matrix, and takes margin 1/2.
        """
        rho = matrix_noise_bound(variance, self.dim, self.noise_failure)
        if rho == 0.0:
            return 0.0
        return 0.0 if np.linalg.eigvalsh(gram)[0] + self.lam > margin * rho else rho

    def radius(self, matrix: np.ndarray, variance: float, shift: float) -> float:
        """beta for the regularised matrix M = gram + (lam + shift) I (see the module docstring)."""
        d, R, S = self.dim, self.noise_scale, self.theta_bound
        ev = np.linalg.eigvalsh(matrix)
        lmin = float(ev[0])
        if not lmin > 0.0:
            return math.inf
        rho = matrix_noise_bound(variance, d, self.noise_failure)
        w = applied_noise_bound(variance, d, self.noise_failure, S)
        base = 2.0 * math.log(1.0 / self.confidence) - d * math.log(self.lam)
        if shift > 0.0 or rho == 0.0:
            martingale = R * math.sqrt(max(base + float(np.log(ev).sum()), 0.0))
            return martingale + (w + (self.lam + shift) * S) / math.sqrt(lmin)
        q = rho / (lmin - rho)
        martingale = R * math.sqrt(max(base + float(np.log(ev + rho).sum()), 0.0) / (1.0 - q))
        return martingale + (w + self.lam * S) / math.sqrt(lmin)

    def model(self, stats: np.ndarray, variance: float) -> RidgeModel | None:
        """The ridge model of (d+1) x (d+1) statistics [[X'X, X'y], ...] whose noise has
        per-entry variance `variance`, or None when no finite radius exists."""
        d = self.dim
        shift = self.shift(stats[:d, :d], variance)
        matrix = stats[:d, :d] + (self.lam + shift) * np.eye(d)
        beta = self.radius(matrix, variance, shift)
        if not math.isfinite(beta):
            return None
        inverse = np.linalg.inv(matrix)
        return RidgeModel(matrix, inverse, inverse @ stats[:d, d], stats[:d, d].copy(), beta)

    def covariance(self, inverse: np.ndarray, variance: float, shift: float) -> np.ndarray:
        """Spread of theta_hat: R^2 M^-1 + (2 v (S^2 + 1) + ((lam + shift) S)^2 [shifted]) M^-2.

        The privacy term is exact up to the bound on Var(w_i) <= 2 v ||u||^2; a
        shift's bias (lam + shift) theta is counted as extra spread.
        """
        spread = 2.0 * variance * (self.theta_bound**2 + 1.0)
        if shift > 0.0:
            spread += ((self.lam + shift) * self.theta_bound) ** 2
        return self.noise_scale**2 * inverse + spread * (inverse @ inverse)
