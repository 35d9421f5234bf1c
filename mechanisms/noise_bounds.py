"""High-probability bounds on continual-release noise, from its per-entry variance.

The private linear bandits build their confidence sets from these (Shariff &
Sheffet 2018, Sec. 4): with a mechanism `mech` over a horizon T and a failure
probability alpha shared by all T releases (union bound),

    v = mech.max_prefix_variance()                       # per entry, off-diagonal
    gamma = vector_noise_norm_bound(v, d, alpha / T)      # ||noise in X^T y||_2
    upsilon = symmetric_noise_norm_bound(v, d + 1, alpha / T)  # ||noise in the Gram||_op
    shift = psd_shift(v, d + 1, alpha / T)               # = 2 upsilon

hold at every release with probability >= 1 - alpha (each bound for its own
noise; add the failure probabilities of bounds used together).
`mech.error_bound(alpha, uniform=True)` gives the first for a stream's own
releases (`streaming.ContinualRelease.error_bound`).  With the shift
added, the noise of the Gram matrix has all eigenvalues in [upsilon, 3 upsilon].

Noise model: every mechanism here releases linear combinations of independent
Gaussian draws, so the prefix noise of a vector has independent N(0, v)
entries, and that of a symmetric matrix has N(0, v) off-diagonal and
N(0, 2 v) diagonal entries, independent up to symmetry ((Z + Z^T) / sqrt(2)
scaled).  The bounds are for that Gaussian noise.  The exact sampler draws a
discrete Gaussian on the grid 2**k (k = -40): it is sigma^2-sub-Gaussian
(Canonne, Kamath & Steinke 2020), so a prefix noise (a sum of independent
draws) is v-sub-Gaussian per entry, which is all the vector bound uses;
for the matrix bound it differs from the rounded continuous Gaussian by a
relative O((2**k / sigma)**2) in probability, and the rounding moves the
operator norm by at most dim * 2**k, both far below the figures printed.
"""
from __future__ import annotations

import math

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count, check_nonnegative


def _check(variance: object, dim: object, alpha: object) -> tuple[float, int, float]:
    variance = check_nonnegative("variance", variance)
    dim = check_count("dim", dim)
    a = check_nonnegative("alpha", alpha)
    if not 0.0 < a < 1.0:
        raise invalid("alpha", alpha, "a failure probability in (0, 1)")
    return variance, dim, a


def vector_noise_norm_bound(variance: float, dim: int, alpha: float) -> float:
    """A bound on ||z||_2 holding w.p. >= 1 - alpha, z with `dim` N(0, variance) entries.

    sqrt(variance * (dim + 2 sqrt(dim x) + 2 x)), x = ln(1/alpha): the chi-square
    tail of Laurent & Massart (2000), Lemma 1.  Its proof uses only the moment
    generating function of each squared entry, so it also holds for
    independent variance-sub-Gaussian entries (E exp(t z^2) <= (1 - 2 t
    variance)^(-1/2) follows from sub-Gaussianity by Gaussian averaging).
    """
    variance, dim, alpha = _check(variance, dim, alpha)
    x = -math.log(alpha)
    return math.sqrt(variance * (dim + 2.0 * math.sqrt(dim * x) + 2.0 * x))


def gaussian_matrix_norm_bound(variance: float, rows: int, cols: int, alpha: float) -> float:
    """A bound on ||H||_op holding w.p. >= 1 - alpha, H (rows x cols) with iid N(0, variance).

    sqrt(variance) * (sqrt(rows) + sqrt(cols) + sqrt(2 ln(1/alpha))): E||H|| <=
    sqrt(variance) (sqrt(rows) + sqrt(cols)) (Gordon's inequality, Vershynin,
    High-Dimensional Probability, 2018, Thm 7.3.1) and ||H|| is
    sqrt(variance)-Lipschitz in the standard normal draws (Gaussian
    concentration, ibid. Thm 5.2.2).  It bounds ||H w|| <= ||H|| ||w|| for EVERY
    weight vector w at once, e.g. the noise of any sum of a subset S of cols
    independent noise vectors: ||H 1_S|| <= ||H|| sqrt(|S|), whatever chose S.
    With unequal column variances v_j, apply it to H diag(v)^(-1/2) (variance 1)
    and bound ||diag(v)^(1/2) 1_S|| = sqrt(sum_S v_j).
    """
    variance, rows, alpha = _check(variance, rows, alpha)
    cols = check_count("cols", cols)
    return math.sqrt(variance) * (math.sqrt(rows) + math.sqrt(cols)
                                  + math.sqrt(2.0 * math.log(1.0 / alpha)))


def symmetric_noise_norm_bound(variance: float, dim: int, alpha: float) -> float:
    """A bound on ||N||_op holding with probability >= 1 - alpha, N symmetric Gaussian noise.

    N is dim x dim with N(0, variance) off-diagonal and N(0, 2 variance)
    diagonal entries (the symmetric noise of the samplers, summed over any
    number of nodes).  Bound: sqrt(variance) * (2 sqrt(dim) + 2 sqrt(ln(2 / alpha))).
    Why: E lambda_max(N) <= 2 sqrt(variance * dim) by the Sudakov-Fernique
    inequality (Vershynin, High-Dimensional Probability, 2018, Thm 7.2.11)
    against 2 sqrt(variance) <g, u>, since E(u'Nu - w'Nw)^2 <= 4 variance
    ||u - w||^2 for unit u, w (the Gaussian orthogonal ensemble bound, ibid.
    Sec. 7.3); lambda_max is sqrt(2 variance)-Lipschitz in the standard normal
    draws, so Gaussian concentration (Boucheron, Lugosi & Massart 2013,
    Thm 5.6) gives P(lambda_max > E + t) <= exp(-t^2 / (4 variance)); the same
    for -lambda_min, and a union bound over both ends.  About 2.9 times
    tighter than Shariff & Sheffet's sqrt(2 nu) sigma (4 sqrt(dim) + 2 ln(2 T / alpha))
    for the same tree (`tree.psd_bound`).
    """
    variance, dim, alpha = _check(variance, dim, alpha)
    return math.sqrt(variance) * (2.0 * math.sqrt(dim) + 2.0 * math.sqrt(math.log(2.0 / alpha)))


def psd_shift(variance: float, dim: int, alpha: float) -> float:
    """The shift 2 upsilon (upsilon = `symmetric_noise_norm_bound`) of Shariff & Sheffet (2018).

    Added as shift * I to a noisy Gram matrix, it makes noise + shift have
    all eigenvalues in [upsilon, 3 upsilon] with probability >= 1 - alpha:
    the matrix stays positive definite and acts as a ridge regulariser
    between upsilon and 3 upsilon.  Data-independent, hence free of privacy
    cost.
    """
    return 2.0 * symmetric_noise_norm_bound(variance, dim, alpha)
