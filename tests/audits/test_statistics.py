"""Scalar, projection and fitted linear-discriminant statistics."""
import numpy as np
import pytest

from privbandit.accounting.errors import InvalidParameterError
from privbandit.audits import LinearDiscriminant, Projection, Scalar
from privbandit.mechanisms.errors import ShapeError


def test_scalar_accepts_one_number_per_run():
    f = Scalar().fit(None, None)
    assert f(np.arange(3.0)).tolist() == [0.0, 1.0, 2.0]
    assert f(np.arange(3.0)[:, None]).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(ShapeError, match=r"one number per run; got outputs of shape \(3, 2\)"):
        f(np.zeros((3, 2)))


def test_projection_flattens_and_checks_size():
    p = Projection(np.array([[1.0, 0.0], [0.0, 2.0]]))
    assert p(np.ones((4, 2, 2))).tolist() == [3.0] * 4
    with pytest.raises(ShapeError, match="do not match a direction of 4 entries"):
        p(np.ones((4, 3)))
    with pytest.raises(ShapeError, match="direction must be a finite, non-zero array"):
        Projection(np.zeros(3))


def test_discriminant_finds_the_whitened_direction():
    rng = np.random.default_rng(0)
    cov = np.diag([1.0, 100.0])  # the second coordinate is noisy: weight it down
    x0 = rng.multivariate_normal([0, 0], cov, 20000)
    x1 = rng.multivariate_normal([1, 1], cov, 20000)
    w = LinearDiscriminant().fit(x0, x1).direction
    expected = np.array([1.0, 0.01]) / np.linalg.norm([1.0, 0.01])
    assert np.allclose(w, expected, atol=0.01)


def test_discriminant_exploits_a_noiseless_coordinate():
    rng = np.random.default_rng(1)
    x0 = np.c_[rng.normal(size=500), np.zeros(500)]
    x1 = np.c_[rng.normal(size=500), np.full(500, 1e-3)]
    f = LinearDiscriminant().fit(x0, x1)
    assert f(x1).min() > f(x0).max()  # perfectly separated


def test_discriminant_on_deterministic_outputs():
    f = LinearDiscriminant().fit(np.zeros((5, 2)), np.ones((5, 2)))
    assert np.all(f(np.ones((2, 2))) > f(np.zeros((2, 2))))


def test_discriminant_bad_input():
    with pytest.raises(InvalidParameterError, match="ridge must be a finite number > 0; got 0"):
        LinearDiscriminant(ridge=0)
    with pytest.raises(ShapeError, match=">= 2 runs per side to fit; got 1, 5"):
        LinearDiscriminant().fit(np.zeros((1, 2)), np.zeros((5, 2)))
