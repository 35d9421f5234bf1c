"""Buffered-linear-Toeplitz (BLT) factors of the prefix-sum matrix: C x and C^-1 y in O(buffers).

The prefix-sum matrix A (lower-triangular ones) factors as A = B C.  A
factorization mechanism releases C x + z and estimates the prefixes by
B (C x + z) = A x + B z (Denisov et al. 2022; Henzinger, Upadhyay & Upadhyay
2023; Fichtenberger, Henzinger & Upadhyay 2023 for the square root).  Here C
is lower-triangular Toeplitz with coefficients

    c_0 = 1,   c_k = sum_j omega_j theta_j**(k-1)   (k >= 1),

a buffered linear Toeplitz matrix (Dvijotham, McKenna et al. 2024, "Efficient
and near-optimal noise generation for streaming differential privacy"): with
one buffer per j, S_j <- theta_j S_j + x, the stream computes
(C x)_t = x_t + sum_j omega_j S_j, and C^-1 runs on the same buffers
(w_t = y_t - sum_j omega_j R_j, R_j <- theta_j R_j + w_t), so memory never
grows with t.  B = A C^-1 has coefficients b_k = d_0 + ... + d_k, d the
coefficients of C^-1.

Parameters (`sqrt_blt(horizon, buffers)`): the square root A^(1/2) has
coefficients C(2k, k) / 4**k = (1/pi) int_0^1 x**k x**(-1/2) (1 - x)**(-1/2) dx.
With x = exp(-e**u) the integrand is smooth in u, and the trapezoidal rule on
`buffers` points equally spaced in u, from x = exp(-0.02 / horizon) to
x = exp(-1), gives c_k ~ sum_j w_j x_j**k: theta_j = x_j, omega_j = w_j x_j.
Measured loss against the exact square root, (largest column norm of C) x
(largest row norm of B) over the horizon, at horizons 10 ... 10**6: at most
0.23% for 8 buffers (the default), 1.3% for 6, 13% for 4, 57% for 3
(`bench/bench_continual.py` prints it at 10**3 and 10**5).  With 2 buffers
C^-1 is unstable beyond about 10**4 steps; `sqrt_blt` refuses any choice
whose C^-1 recursion does not decay.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from privbandit.accounting.errors import invalid
from privbandit.accounting.validation import check_count

from .streaming import gamma

_BLOCK = 512
_LOW, _HIGH = 0.02, 1.0  # quadrature range of -ln(theta): [_LOW / horizon, _HIGH]
MAX_BUFFERS = 64


def sqrt_coefficients(n: int) -> np.ndarray:
    """c_0 ... c_(n-1) of the square root of the n x n prefix-sum matrix: C(2k, k) / 4**k."""
    k = np.arange(1, check_count("n", n))
    return np.concatenate(([1.0], np.cumprod((2 * k - 1) / (2 * k))))


@dataclass(frozen=True)
class BufferedToeplitz:
    """The lower-triangular Toeplitz C with c_0 = 1 and c_k = sum_j omega_j theta_j**(k-1)."""

    theta: tuple[float, ...]
    omega: tuple[float, ...]

    def __post_init__(self) -> None:
        theta, omega = np.asarray(self.theta, float), np.asarray(self.omega, float)
        if theta.ndim != 1 or theta.shape != omega.shape or not 1 <= theta.size <= MAX_BUFFERS:
            raise invalid("(theta, omega)", (self.theta, self.omega),
                          f"two sequences of equal length in [1, {MAX_BUFFERS}]")
        if not (np.all((theta > 0) & (theta < 1)) and np.all(omega > 0)):
            raise invalid("(theta, omega)", (self.theta, self.omega),
                          "decays theta in (0, 1) and weights omega > 0")

    @property
    def buffers(self) -> int:
        return len(self.theta)

    def coefficients(self, n: int) -> np.ndarray:
        """c_0 ... c_(n-1)."""
        k = np.arange(1, check_count("n", n))
        powers = np.power(np.asarray(self.theta)[:, None], k - 1)
        return np.concatenate(([1.0], np.asarray(self.omega) @ powers))

    def coefficient_sum(self, n: int) -> float:
        """c_0 + ... + c_(n-1) = 1 + sum_j omega_j (1 - theta_j**(n-1)) / (1 - theta_j)."""
        theta = np.asarray(self.theta)
        return 1.0 + float(np.dot(self.omega, _geometric_sum(theta, check_count("n", n) - 1)))

    def column_norm(self, horizon: int) -> float:
        """Largest column norm of the horizon x horizon C (its first column), rounded up.

        Sum of positive squares, blockwise: relative rounding below 1e-12,
        covered by the 1e-10 inflation.
        """
        total = 0.0
        theta, omega = np.asarray(self.theta), np.asarray(self.omega)
        for start in range(1, check_count("horizon", horizon), _BLOCK * 8):
            k = np.arange(start, min(start + _BLOCK * 8, horizon))
            total += float(np.sum((omega @ np.power(theta[:, None], k - 1)) ** 2))
        return math.sqrt(1.0 + total) * (1.0 + 1e-10)

    def _inverse_blocks(self, n: int):
        """Successive blocks of d_0 ... d_(n-1), the coefficients of C^-1.

        C^-1 as a state recursion: d_0 = 1, d_k = -omega . M**(k-1) 1 with
        M = diag(theta) - 1 omega^T; blocks of states advance by M**block.
        """
        theta, omega = np.asarray(self.theta), np.asarray(self.omega)
        step = self._inverse_step()
        states = np.empty((theta.size, _BLOCK))
        r = np.ones_like(theta)
        for i in range(_BLOCK):
            states[:, i] = r
            r = step @ r
        jump = np.linalg.matrix_power(step, _BLOCK)
        yield np.ones(1)
        remaining = n - 1
        while remaining > 0:
            block = -(omega @ states)[:remaining]
            yield block
            remaining -= block.size
            states = jump @ states

    def inverse_is_stable(self) -> bool:
        """Whether the C^-1 recursion decays (spectral radius of M below 1)."""
        return bool(np.max(np.abs(np.linalg.eigvals(self._inverse_step()))) < 1.0)

    def _inverse_step(self) -> np.ndarray:
        """M = diag(theta) - 1 omega^T: the state transition of the C^-1 recursion."""
        return np.diag(self.theta) - np.outer(np.ones(self.buffers), self.omega)

    def inverse_coefficients(self, n: int) -> np.ndarray:
        """d_0 ... d_(n-1), the coefficients of C^-1."""
        return np.concatenate(list(self._inverse_blocks(check_count("n", n))))

    def prefix_noise_units_all(self, horizon: int) -> np.ndarray:
        """sum_(k < t) b_k**2 for every t = 1 ... horizon, shape (horizon,): vectorised."""
        b = np.cumsum(self.inverse_coefficients(check_count("horizon", horizon)))
        return np.cumsum(b * b)

    def prefix_noise_units(self, step: int) -> float:
        """sum_(k < step) b_k**2: the variance of (B z)_step for unit-variance z."""
        total, running = 0.0, 0.0
        for block in self._inverse_blocks(check_count("step", step)):
            b = running + np.cumsum(block)
            running = float(b[-1])
            total += float(np.dot(b, b))
        return total

    def float_error(self, horizon: int) -> float:
        """Bound, per clip norm, on ||computed (C x)_t - (C x)_t|| at any step t <= horizon.

        Buffer j: S <- fl(fl(theta S) + x) errs by <= gamma_2 (theta |S| + |x|)
        per step, |S| <= m_j clip with m_j = sum_(k < T) theta**k, and the
        error decays by theta (1 + gamma_2), so |e_j| <= gamma_2 (theta m_j + 1)
        m'_j clip, m'_j = sum_(k < T) (theta (1 + gamma_2))**k.  The release
        x + sum_j omega_j S_j (a dot product, then the symmetrising average)
        adds gamma_(buffers + 2) (1 + sum_j omega_j (m_j + e_j)).  Higham
        (2002), Sec. 3.1 and Lemma 3.1; componentwise, hence in any norm.
        """
        theta, omega = np.asarray(self.theta), np.asarray(self.omega)
        m = _geometric_sum(theta, horizon)
        m_err = _geometric_sum(theta * (1 + gamma(2)), horizon)
        e = gamma(2) * (theta * m + 1) * m_err
        return float(np.dot(omega, e) + gamma(self.buffers + 2) * (1 + np.dot(omega, m + e)))


def _geometric_sum(ratio: np.ndarray, n: int) -> np.ndarray:
    """sum_(k < n) ratio**k, for ratios near 1 without cancellation (ratio may exceed 1)."""
    log_r = np.log(ratio)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.expm1(n * log_r) / np.expm1(log_r)
    return np.where(log_r == 0, float(n), out)


def sqrt_blt(horizon: int, buffers: int) -> BufferedToeplitz:
    """The BLT approximating the square root for `horizon` (see the module docstring)."""
    horizon = check_count("horizon", horizon)
    buffers = check_count("buffers", buffers, minimum=2)
    if buffers > MAX_BUFFERS:
        raise invalid("buffers", buffers, f"an integer in [2, {MAX_BUFFERS}]")
    factor = _sqrt_blt(horizon, buffers)
    if not factor.inverse_is_stable():
        raise invalid("buffers", buffers, f"more buffers for a horizon of {horizon} (with "
                      f"{buffers}, C^-1 does not decay: its noise would overflow)")
    return factor


@functools.lru_cache(maxsize=64)
def _sqrt_blt(horizon: int, buffers: int) -> BufferedToeplitz:
    u = np.linspace(math.log(_LOW / horizon), math.log(_HIGH), buffers)
    s = np.exp(u)
    x = np.exp(-s)
    weights = (u[1] - u[0]) * np.sqrt(x / -np.expm1(-s)) * s / math.pi
    return BufferedToeplitz(tuple(float(v) for v in x), tuple(float(v) for v in weights * x))
