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

from privbandit.mechanisms.noise_bounds import (
    gaussian_matrix_norm_bound,
    symmetric_noise_norm_bound,
    vector_noise_norm_bound,
)

from ..kernels import ucb_scores


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

    def scores(self, items: np.ndarray, beta_scale: float = 1.0) -> np.ndarray:
        """Upper confidence bounds x . theta + beta_scale beta ||x||_(M^-1) of (K, d) items."""
        return ucb_scores(self.theta, self.inverse, items, beta_scale * self.beta)


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

    def spread(self, gram: np.ndarray, variance: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(M, M^-1, spread of theta_hat) for a test of the estimate of a Gram block (d, d)
        whose noise has per-entry variance `variance` (`clustering.RidgeSpread`): an
        estimate used only for testing needs a positive definite matrix, so the shift takes
        margin 1/2."""
        shift = self.shift(gram, variance, margin=0.5)
        matrix = gram + (self.lam + shift) * np.eye(self.dim)
        inverse = np.linalg.inv(matrix)
        return matrix, inverse, self.covariance(inverse, variance, shift)

    def covariance(self, inverse: np.ndarray, variance: float, shift: float) -> np.ndarray:
        """Spread of theta_hat: R^2 M^-1 + (2 v (S^2 + 1) + ((lam + shift) S)^2 [shifted]) M^-2.

        The privacy term is exact up to the bound on Var(w_i) <= 2 v ||u||^2; a
        shift's bias (lam + shift) theta is counted as extra spread.
        """
        spread = 2.0 * variance * (self.theta_bound**2 + 1.0)
        if shift > 0.0:
            spread += ((self.lam + shift) * self.theta_bound) ** 2
        return self.noise_scale**2 * inverse + spread * (inverse @ inverse)


def sum_noise_bound(variance: float, dim: int, members: int, units: int,
                    failure: float) -> float:
    """A bound on ||h_S|| = ||sum over a set S of `members` of `units` noise vectors||,
    each with `dim` independent N(0, variance) entries, holding for EVERY S at once with
    probability >= 1 - failure (so S may be chosen from the noisy data itself).

    The smaller of two bounds, each given failure / 2: the operator norm of the
    dim x units matrix of all the noise vectors times sqrt(|S|)
    (`mechanisms.gaussian_matrix_norm_bound`: ||H 1_S|| <= ||H|| sqrt(|S|)), and the
    triangle inequality over S with a union bound over the units
    (|S| `mechanisms.vector_noise_norm_bound`).  0 without noise or members.
    """
    if variance <= 0.0 or members <= 0:
        return 0.0
    half = failure / 2.0
    spectral = gaussian_matrix_norm_bound(variance, dim, units, half) * math.sqrt(members)
    triangle = members * vector_noise_norm_bound(variance, dim, half / units)
    return min(spectral, triangle)


@dataclass(frozen=True)
class ExactGramModel:
    """A ridge model whose Gram matrix is exact and whose moments carry noise.

    matrix M = Gram + lam I, inverse M^-1, theta = M^-1 b (b the noisy moments),
    beta the martingale radius, noise_bound a bound on the norm of the moments' noise."""

    matrix: np.ndarray
    inverse: np.ndarray
    theta: np.ndarray
    moment: np.ndarray
    beta: float
    noise_bound: float

    def scores(self, items: np.ndarray, beta_scale: float = 1.0) -> np.ndarray:
        """Upper confidence bounds of the (K, d) items (`RewardNoiseRidge` docstring)."""
        return exact_gram_scores(self.theta, self.inverse, items,
                                 beta_scale * self.beta, self.noise_bound)


def exact_gram_scores(theta: np.ndarray, inverse: np.ndarray, items: np.ndarray, beta: float,
                      noise_bound: float) -> np.ndarray:
    """x . theta + beta ||x||_(M^-1) + noise_bound ||M^-1 x|| for the (K, d) items (one
    product items M^-1 serves both widths)."""
    projected = items @ inverse
    quad = np.einsum("kd,kd->k", projected, items)
    np.maximum(quad, 0.0, out=quad)  # rounding
    scores = items @ theta
    scores += beta * np.sqrt(quad)
    if noise_bound > 0.0:
        scores += noise_bound * np.sqrt(np.einsum("kd,kd->k", projected, projected))
    return scores


@dataclass(frozen=True)
class RewardNoiseRidge:
    """Ridge estimates and upper confidence bounds from an exact Gram matrix and noisy moments.

    The statistics are those of records whose features are public (reward-only
    releases, `mechanisms.RewardOnlyRelease`): G = sum x x^T exactly, and
    b~ = sum y x + h with h a Gaussian noise vector of known per-entry variance.
    With M = G + lam I and theta~ = M^-1 b~, for the true theta (||theta|| <= S)
    and rewards y = x . theta + eta (eta conditionally R-sub-Gaussian):

        theta~ - theta = M^-1 (xi - lam theta) + M^-1 h,    xi = sum x eta.

    Claim: with probability >= 1 - confidence - P(||h|| > H), for every round and
    every item x,

        |x . (theta~ - theta)| <= beta ||x||_(M^-1) + H ||M^-1 x||,
        beta = R sqrt(2 ln(1/confidence) + ln det(M / lam I)) + sqrt(lam) S.

    Proof.  The first term: M is exactly the regularised Gram matrix of the
    records whose rewards b~ sums, so the self-normalised bound of
    Abbasi-Yadkori, Pal & Szepesvari (2011, Thm 2) gives
    ||theta_hat - theta||_M <= beta for theta_hat = M^-1 (b~ - h), uniformly over
    rounds, with actions adapting (they may depend on the privacy noise: the
    bound needs only that x_t is chosen before eta_t is drawn); then
    |x . (theta_hat - theta)| <= ||x||_(M^-1) beta by Cauchy-Schwarz in the M
    norm.  The second term: |x . M^-1 h| = |(M^-1 x) . h| <= ||M^-1 x|| ||h||
    (Cauchy-Schwarz), and ||h|| <= H on the event bounded.  Adding the two
    gives the claim, so x . theta~ + beta ||x||_(M^-1) + H ||M^-1 x|| is an
    upper confidence bound of x . theta.

    Why a norm bound H on h and not the per-item Gaussian quantile
    z sigma ||M^-1 x||: x . M^-1 h is N(0, sigma^2 ||M^-1 x||^2) only when M
    and x are independent of h.  Here M is built from records whose actions
    read earlier releases, and a continual release's prefix noises are
    correlated across releases (tree nodes, a factorization's shared draws), so
    M^-1 x may lean towards h.  The bound ||h|| <= H holds whatever direction
    is chosen, so it needs no independence; with d = 10 it is about 1.3 times
    the per-item quantile of a union bound over items and rounds.  H comes from
    the caller, who knows how the noise was summed (`sum_noise_bound`).

    Noise in clustering tests: `spread` is R^2 M^-1 + v M^-2 (the moments'
    noise, per-entry variance v, maps to M^-1 h), exact for the Gaussian part.
    """

    dim: int
    lam: float
    noise_scale: float
    theta_bound: float
    confidence: float

    def beta(self, logdet: float) -> float:
        """The martingale radius for ln det M = `logdet`."""
        inner = 2.0 * math.log(1.0 / self.confidence) + logdet - self.dim * math.log(self.lam)
        return self.noise_scale * math.sqrt(max(inner, 0.0)) + math.sqrt(self.lam) \
            * self.theta_bound

    def model(self, gram: np.ndarray, moments: np.ndarray, noise_bound: float
              ) -> ExactGramModel:
        """The model of Gram `gram` (d, d, exact) and moments (d,) whose noise has norm at
        most `noise_bound` on the event the caller bounds."""
        matrix = gram + self.lam * np.eye(self.dim)
        inverse = np.linalg.inv(matrix)
        _, logdet = np.linalg.slogdet(matrix)
        return ExactGramModel(matrix, inverse, inverse @ moments, np.array(moments),
                              self.beta(float(logdet)), float(noise_bound))

    def spread(self, gram: np.ndarray, variance: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(M, M^-1, spread of theta~) of a Gram block (d, d) (`clustering.RidgeSpread`):
        M = G + lam I (the Gram matrix is exact: no shift) and the spread
        R^2 M^-1 + v M^-2, v the moments' per-entry noise variance."""
        matrix = gram + self.lam * np.eye(self.dim)
        inverse = np.linalg.inv(matrix)
        return matrix, inverse, self.noise_scale**2 * inverse + variance * (inverse @ inverse)
