"""Buffered-linear-Toeplitz factors: coefficients, inverse, norms and the square-root fit."""
from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privbandit.accounting.errors import InvalidParameterError
from privbandit.mechanisms.blt import BufferedToeplitz, sqrt_blt, sqrt_coefficients

from .continual_reference import blt_coefficients, toeplitz


def test_sqrt_coefficients_square_to_the_prefix_sum_matrix():
    c = toeplitz(sqrt_coefficients(40))
    np.testing.assert_allclose(c @ c, np.tril(np.ones((40, 40))), atol=1e-12)
    assert sqrt_coefficients(5)[4] == pytest.approx(math.comb(8, 4) / 4**4)


@settings(max_examples=25)
@given(horizon=st.integers(1, 200), buffers=st.integers(2, 16))
def test_coefficients_inverse_and_norms_match_dense_matrices(horizon, buffers):
    f = sqrt_blt(horizon, buffers)
    c = toeplitz(blt_coefficients(f.theta, f.omega, horizon))
    np.testing.assert_allclose(f.coefficients(horizon), c[:, 0], rtol=1e-12)
    inverse = np.linalg.inv(c)
    np.testing.assert_allclose(f.inverse_coefficients(horizon), inverse[:, 0], atol=1e-9)
    b = np.tril(np.ones((horizon, horizon))) @ inverse
    assert f.prefix_noise_units(horizon) == pytest.approx(float(b[-1] @ b[-1]), rel=1e-9)
    assert f.column_norm(horizon) == pytest.approx(np.linalg.norm(c, axis=0).max(), rel=1e-9)


@pytest.mark.parametrize("horizon", [10, 100, 1000, 10_000])
def test_eight_buffers_lose_less_than_a_third_of_a_percent_to_the_square_root(horizon):
    f = sqrt_blt(horizon, 8)
    loss = f.column_norm(horizon) * math.sqrt(f.prefix_noise_units(horizon))
    exact = float(np.sum(sqrt_coefficients(horizon) ** 2))  # column norm x row norm, squared
    assert 0.99 < loss / exact < 1.003


def test_streaming_recursions_are_the_dense_products():
    f = sqrt_blt(64, 6)
    rng = np.random.default_rng(0)
    x = rng.normal(size=64)
    c = toeplitz(blt_coefficients(f.theta, f.omega, 64))
    s = np.zeros(6)
    out = []
    for value in x:
        out.append(value + np.dot(f.omega, s))
        s = np.asarray(f.theta) * s + value
    np.testing.assert_allclose(out, c @ x, rtol=1e-12, atol=1e-12)


def test_float_error_bound_is_small_and_grows_with_the_horizon():
    errors = [sqrt_blt(T, 8).float_error(T) for T in (10, 10**3, 10**5)]
    assert errors[0] < errors[1] < errors[2] < 1e-8


@pytest.mark.parametrize(("call", "name", "value", "allowed"), [
    (lambda: sqrt_blt(0, 8), "horizon", 0, "an integer >= 1"),
    (lambda: sqrt_blt(10, 1), "buffers", 1, "an integer >= 2"),
    (lambda: sqrt_blt(10, 100), "buffers", 100, "an integer in [2, 64]"),
    (lambda: sqrt_blt(10, [8]), "buffers", [8], "an integer >= 2"),
    (lambda: sqrt_blt(10**5, 2), "buffers", 2, "more buffers for a horizon of 100000 (with 2, "
     "C^-1 does not decay: its noise would overflow)"),
    (lambda: BufferedToeplitz((0.5, 1.0), (0.1, 0.1)), "(theta, omega)", ((0.5, 1.0), (0.1, 0.1)),
     "decays theta in (0, 1) and weights omega > 0"),
    (lambda: BufferedToeplitz((0.5,), (0.1, 0.1)), "(theta, omega)", ((0.5,), (0.1, 0.1)),
     "two sequences of equal length in [1, 64]"),
])
def test_bad_input(call, name, value, allowed):
    with pytest.raises(InvalidParameterError,
                       match=re.escape(f"{name} must be {allowed}; got {value!r}")):
        call()
