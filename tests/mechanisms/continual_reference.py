"""Independent dense references for the continual-release mechanisms (small horizons).

`RecordingSampler` keeps every noise draw.  Each `*_noise_map` returns a matrix G
(T x number of noise draws) with prefix noise_t = G[t-1] . z, z the draws in
the order the mechanism makes them, so the prefix-noise covariance is
sigma**2 G G^T.  Built from the definitions, not from the code.
"""
from __future__ import annotations

import math

import numpy as np

from privbandit.mechanisms.samplers import NumpySampler


class RecordingSampler(NumpySampler):
    """The fast sampler, keeping every noise it draws (in draw order)."""

    __slots__ = ("log",)

    def __init__(self) -> None:
        object.__setattr__(self, "log", [])

    def _add_gaussian(self, value, sigma, rng):
        noise = sigma * rng.standard_normal(value.shape)
        self.log.append(noise)
        return value + noise

    def _add_symmetric(self, value, sigma, rng):
        z = rng.standard_normal(value.shape)
        noise = (z + z.T) * (sigma / math.sqrt(2))
        self.log.append(noise)
        return value + noise


def dyadic_nodes(t: int) -> list[tuple[int, int]]:
    """The dyadic intervals (start, end] whose union is (0, t]."""
    nodes, end = [], 0
    for j in reversed(range(t.bit_length())):
        if t >> j & 1:
            nodes.append((end, end + 2**j))
            end += 2**j
    return nodes


def tree_noise_map(horizon: int) -> np.ndarray:
    """Binary mechanism: draw t is the node (t - lowbit(t), t]; prefix t sums its dyadic nodes."""
    draw = {(t - (t & -t), t): t - 1 for t in range(1, horizon + 1)}
    g = np.zeros((horizon, horizon))
    for t in range(1, horizon + 1):
        for node in dyadic_nodes(t):
            g[t - 1, draw[node]] = 1.0
    return g


def full_tree_draws(horizon: int) -> list[tuple[int, int]]:
    """Every dyadic node in the order Honaker's tree draws them: by end, then by level."""
    nodes = []
    for t in range(1, horizon + 1):
        level = 0
        while t % 2**level == 0:
            nodes.append((t - 2**level, t))
            level += 1
    return nodes


def honaker_noise_map(horizon: int) -> np.ndarray:
    """Best linear unbiased prefix estimates from the nodes completed so far (GLS, flat prior).

    With y = H x + z (H: completed nodes x leaves 1..t, full column rank), the
    BLUE of the prefix a.x is a (H^T H)^-1 H^T y, so its noise is that row times z.
    """
    draws = full_tree_draws(horizon)
    g = np.zeros((horizon, len(draws)))
    for t in range(1, horizon + 1):
        done = [i for i, (_, end) in enumerate(draws) if end <= t]
        h = np.zeros((len(done), t))
        for row, i in enumerate(done):
            start, end = draws[i]
            h[row, start:end] = 1.0
        coef = np.linalg.solve(h.T @ h, h.T)  # (t, nodes): x_hat = coef y
        g[t - 1, done] = np.ones(t) @ coef
    return g


def toeplitz(coefficients: np.ndarray) -> np.ndarray:
    """The lower-triangular Toeplitz matrix with first column `coefficients`."""
    n = len(coefficients)
    out = np.zeros((n, n))
    for i in range(n):
        out[i, : i + 1] = coefficients[i::-1]
    return out


def blt_coefficients(theta, omega, n: int) -> np.ndarray:
    """c_0 = 1, c_k = sum_j omega_j theta_j**(k-1), term by term in Python floats."""
    return np.array([1.0] + [sum(w * th ** (k - 1) for th, w in zip(theta, omega, strict=True))
                             for k in range(1, n)])


def mf_noise_map(theta, omega, horizon: int) -> np.ndarray:
    """B = A C^-1 for the BLT factor C: prefix noise (B z)_t."""
    c = toeplitz(blt_coefficients(theta, omega, horizon))
    return np.linalg.solve(c.T, np.tril(np.ones((horizon, horizon))).T).T


def assert_covariance(samples: np.ndarray, expected: np.ndarray, z: float = 6.0) -> None:
    """samples (T, N) of zero-mean noise; every entry of the T x T covariance within z sd."""
    n = samples.shape[1]
    empirical = samples @ samples.T / n
    diag = np.diag(expected)
    sd = np.sqrt((np.outer(diag, diag) + expected**2) / n)
    assert np.all(np.abs(empirical - expected) <= z * sd + 1e-12), \
        float(np.max(np.abs(empirical - expected) / (sd + 1e-300)))
