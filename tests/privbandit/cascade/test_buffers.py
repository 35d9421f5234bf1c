"""The det-ratio trigger through the determinant lemma equals the direct determinant ratio."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from privbandit.cascade import LocalBuffers

DIM = 4


def _unit_rows(rng, m):
    x = rng.standard_normal((m, DIM))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@given(
    seed=st.integers(0, 2**32 - 1),
    rounds=st.lists(st.integers(1, 4), min_size=1, max_size=12),
    alpha_c=st.floats(0.05, 3.0),
    scale=st.floats(0.5, 20.0),
)
def test_lemma_trigger_equals_direct_determinant_ratio(seed, rounds, alpha_c, scale):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((DIM, DIM))
    sigma_u = scale * np.eye(DIM) + a @ a.T  # the agent's decision matrix, positive definite
    buf = LocalBuffers(1, DIM, alpha_c, lam=1.0)
    buf.reset(0, np.linalg.inv(sigma_u))
    local = np.zeros((DIM, DIM))
    for m in rounds:
        x = _unit_rows(rng, m)
        clicked = int(rng.integers(m)) if rng.random() < 0.5 else None
        buf.add(0, x, clicked)
        local += x.T @ x
        direct = np.linalg.slogdet(sigma_u + local)[1] - np.linalg.slogdet(sigma_u)[1]
        assert buf.gain[0] == pytest.approx(direct, rel=1e-9, abs=1e-9)
        np.testing.assert_allclose(buf.trigger_inv[0], np.linalg.inv(sigma_u + local),
                                   rtol=1e-7, atol=1e-9)
        if abs(direct - math.log1p(alpha_c)) > 1e-9:  # away from the boundary
            ratio = np.linalg.det(sigma_u + local) / np.linalg.det(sigma_u)
            assert buf.exceeded(0) == (ratio > 1 + alpha_c)


def test_buffer_holds_the_uploaded_sums_and_resets():
    buf = LocalBuffers(2, 2, alpha_c=0.5, lam=2.0)
    x = np.array([[1.0, 0.0], [0.0, 1.0]])
    buf.add(1, x, clicked=1)
    gram, moment, count = buf.take(1)
    np.testing.assert_array_equal(gram, np.eye(2))
    np.testing.assert_array_equal(moment, [0.0, 1.0])
    assert count == 2
    assert buf.gain[1] == pytest.approx(2 * math.log1p(0.5))  # det((2I + I)) / det(2I) = 1.5^2
    assert buf.exceeded(1) and not buf.exceeded(0)
    buf.reset(1, np.eye(2) / 3.0)
    assert buf.count[1] == 0 and buf.gain[1] == 0.0 and not buf.gram[1].any()
